import { BitWriter, nalUnit } from './bit-writer.js';
import { type ClipGeometry, flatSamples, tileSamples, type Ycbcr } from './clip-look.js';

/**
 * An H.264 Constrained Baseline stream of a placeholder clip, written by hand so the sandbox needs
 * no encoder: macroblocks are either raw samples (I_PCM), copies of a neighbour's edge (Intra 16x16
 * prediction with no residual) or skipped, so no transform or entropy coding beyond the
 * Exp-Golomb headers and one all-zero coeff_token is needed.
 *
 * Each group of pictures is one IDR (background, the tile at macroblock 0,0) and then P pictures
 * that are not references: each predicts from the IDR alone, skips every macroblock but the tile's
 * (I_PCM) and, once the tile has moved on, 0,0 (a copy of its right or lower neighbour). A frame
 * then costs about 400 bytes whatever the picture size.
 */

export interface EncodedClip {
  sps: Buffer;
  pps: Buffer;
  /** One access unit per frame, as MP4 stores them: each NAL unit behind a 4-byte length. */
  frames: Buffer[];
  /** Whether each frame is an IDR, where a player may start decoding. */
  sync: boolean[];
}

const PROFILE_BASELINE = 66;
/** constraint_set0 and constraint_set1: Constrained Baseline, which every H.264 player decodes. */
const CONSTRAINTS = 0xc0;
/**
 * The lowest level whose largest frame (MaxFS, table A-1, in macroblocks) holds the picture: level 1
 * for the small clips, 3.1 for 720p, 4 for 1080p. At two frames a second no other limit binds.
 */
const LEVELS: ReadonlyArray<readonly [maxFrameMbs: number, levelIdc: number]> = [
  [99, 10],
  [396, 20],
  [792, 21],
  [1620, 22],
  [3600, 31],
  [5120, 32],
  [8192, 40],
  [22080, 50],
  [36864, 51],
  [139264, 60],
];

function levelFor(geometry: ClipGeometry): number {
  const mbs = geometry.mbWidth * geometry.mbHeight;
  return (LEVELS.find(([most]) => mbs <= most) ?? [0, 62])[1];
}
const LOG2_MAX_FRAME_NUM = 4;
const LOG2_MAX_POC_LSB = 8;
/** An IDR at least this often (in frames), so a player can seek without decoding from the start. */
const MIN_GOP = 16;

const NAL_SLICE = 1;
const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;

/** mb_type values (tables 7-11 and 7-13); in a P slice the intra types come after 5 inter ones. */
const I16X16_VERTICAL = 1;
const I16X16_HORIZONTAL = 2;
const I_PCM = 25;
const P_INTRA_OFFSET = 5;
const P_L0_16X16 = 0;
/** intra_chroma_pred_mode values matching the luma directions above. */
const CHROMA_HORIZONTAL = 1;
const CHROMA_VERTICAL = 2;

export interface ClipFrames {
  geometry: ClipGeometry;
  background: Ycbcr;
  frames: number;
  fps: number;
  /**
   * Say that the colours are BT.601's (the SPS's colour description). Without it a player takes a
   * picture 720 lines or more for BT.709 and shifts every colour; the small clips of old jobs
   * keep their bytes without it.
   */
  bt601?: boolean;
}

export function encodeClip(clip: ClipFrames): EncodedClip {
  const { geometry, frames: count, fps } = clip;
  const path = geometry.path;
  // A multiple of the path, so that every IDR finds the tile at 0,0, the one place a P picture
  // knows how to wipe (see pPicture).
  const gop = path.length * Math.ceil(MIN_GOP / path.length);
  if (2 * gop > 1 << (LOG2_MAX_POC_LSB - 1)) throw new Error(`GOP of ${gop} frames is too long`);
  const background = flatSamples(clip.background);
  const frames: Buffer[] = [];
  const sync: boolean[] = [];
  for (let frame = 0; frame < count; frame += 1) {
    const inGop = frame % gop;
    const label = String(Math.floor(frame / fps));
    if (inGop === 0) {
      const idr = idrPicture(geometry, background, tileSamples(label), Math.floor(frame / gop) % 2);
      frames.push(lengthPrefixed(idr));
    } else {
      frames.push(cachedP(geometry, frame % path.length, label, 2 * inGop));
    }
    sync.push(inGop === 0);
  }
  return {
    sps: sequenceParameterSet(geometry, clip.bt601 === true),
    pps: pictureParameterSet(),
    frames,
    sync,
  };
}

/**
 * P pictures hold no colour (the background comes from the IDR), so every job of a shape shares
 * them: kept once each, they make the clip of a new job cost little more than its IDRs.
 */
const pPictures = new Map<string, Buffer>();

function cachedP(geometry: ClipGeometry, step: number, label: string, poc: number): Buffer {
  const key = `${geometry.width}x${geometry.height}:${step}:${label}:${poc}`;
  let frame = pPictures.get(key);
  if (!frame) {
    const [column, row] = geometry.path[step] ?? [0, 0];
    frame = lengthPrefixed(pPicture(geometry, tileSamples(label), column, row, poc));
    // A bound on what odd configurations (many shapes, very long clips) can hold: about 4 MB.
    if (pPictures.size >= 10_000) pPictures.clear();
    pPictures.set(key, frame);
  }
  return frame;
}

function lengthPrefixed(nal: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + nal.length);
  out.writeUInt32BE(nal.length, 0);
  nal.copy(out, 4);
  return out;
}

function sequenceParameterSet(geometry: ClipGeometry, bt601: boolean): Buffer {
  const w = new BitWriter()
    .u(8, PROFILE_BASELINE)
    .u(8, CONSTRAINTS)
    .u(8, levelFor(geometry))
    .ue(0) // seq_parameter_set_id
    .ue(LOG2_MAX_FRAME_NUM - 4)
    .ue(0) // pic_order_cnt_type 0: the slices carry their order (two non-reference pictures in a row rule out type 2)
    .ue(LOG2_MAX_POC_LSB - 4)
    .ue(1) // max_num_ref_frames
    .flag(false) // gaps_in_frame_num_value_allowed_flag
    .ue(geometry.mbWidth - 1)
    .ue(geometry.mbHeight - 1)
    .flag(true) // frame_mbs_only_flag
    .flag(true); // direct_8x8_inference_flag
  // Cropping counts in pairs of pixels for 4:2:0 frames.
  const cropRight = (geometry.mbWidth * 16 - geometry.width) / 2;
  const cropBottom = (geometry.mbHeight * 16 - geometry.height) / 2;
  w.flag(cropRight > 0 || cropBottom > 0);
  if (cropRight > 0 || cropBottom > 0) w.ue(0).ue(cropRight).ue(0).ue(cropBottom);
  w.flag(true); // vui_parameters_present_flag
  // VUI: nothing but bitstream_restriction, which tells a decoder that no frame waits for a later
  // one (max_num_reorder_frames 0), so it shows each frame as soon as it is decoded.
  w.u(2, 0); // aspect ratio, overscan: not given
  w.flag(bt601); // video_signal_type_present_flag
  // video_format unspecified, limited range, then primaries, transfer and matrix all SMPTE 170M (6).
  if (bt601) w.u(3, 5).flag(false).flag(true).u(8, 6).u(8, 6).u(8, 6);
  w.u(2, 0) // chroma location, timing: not given
    .flag(false) // nal_hrd_parameters_present_flag
    .flag(false) // vcl_hrd_parameters_present_flag
    .flag(false) // pic_struct_present_flag
    .flag(true) // bitstream_restriction_flag
    .flag(true) // motion_vectors_over_pic_boundaries_flag
    .ue(0) // max_bytes_per_pic_denom: no limit
    .ue(0) // max_bits_per_mb_denom: no limit, for the I_PCM macroblocks
    .ue(16) // log2_max_mv_length_horizontal
    .ue(16) // log2_max_mv_length_vertical
    .ue(0) // max_num_reorder_frames
    .ue(1); // max_dec_frame_buffering
  return nalUnit(3, NAL_SPS, w.finish());
}

function pictureParameterSet(): Buffer {
  const w = new BitWriter()
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .flag(false) // entropy_coding_mode_flag: CAVLC
    .flag(false) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .flag(false) // weighted_pred_flag
    .u(2, 0) // weighted_bipred_idc
    .se(0) // pic_init_qp_minus26
    .se(0) // pic_init_qs_minus26
    .se(0) // chroma_qp_index_offset
    .flag(true) // deblocking_filter_control_present_flag: so slices can turn the filter off
    .flag(false) // constrained_intra_pred_flag
    .flag(false); // redundant_pic_cnt_present_flag
  return nalUnit(3, NAL_PPS, w.finish());
}

/**
 * The IDR: the tile at 0,0 and every other macroblock background. Only one background macroblock
 * needs its samples; the others copy the edge above (or to the left) of a background neighbour,
 * and only those beside the tile with no other background neighbour carry samples again.
 */
function idrPicture(
  geometry: ClipGeometry,
  background: Uint8Array,
  tile: Uint8Array,
  idrPicId: number,
): Buffer {
  const { mbWidth, mbHeight } = geometry;
  const w = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(7) // slice_type: I, as are all slices of the picture
    .ue(0) // pic_parameter_set_id
    .u(LOG2_MAX_FRAME_NUM, 0) // frame_num
    .ue(idrPicId) // differs between consecutive IDRs, as the standard asks
    .u(LOG2_MAX_POC_LSB, 0) // pic_order_cnt_lsb
    .flag(false) // no_output_of_prior_pics_flag
    .flag(false) // long_term_reference_flag
    .se(0) // slice_qp_delta
    .ue(1); // disable_deblocking_filter_idc: 1, so the edges stay sharp and the colours exact
  const pcm: boolean[] = [];
  const isTile = (x: number, y: number) => x === 0 && y === 0;
  for (let y = 0; y < mbHeight; y += 1) {
    for (let x = 0; x < mbWidth; x += 1) {
      let mbType = I_PCM;
      if (isTile(x, y)) w.ue(I_PCM).alignWithZeros().bytes(tile);
      else if (y > 0 && !isTile(x, y - 1)) mbType = I16X16_VERTICAL;
      else if (x > 0 && !isTile(x - 1, y)) mbType = I16X16_HORIZONTAL;
      else w.ue(I_PCM).alignWithZeros().bytes(background);
      pcm.push(mbType === I_PCM);
      if (mbType === I_PCM) continue;
      w.ue(mbType)
        .ue(mbType === I16X16_VERTICAL ? CHROMA_VERTICAL : CHROMA_HORIZONTAL)
        .se(0); // mb_qp_delta
      // Intra 16x16 always codes its luma DC block; here it has no coefficient.
      const left = x > 0 ? (pcm[y * mbWidth + x - 1] ? 16 : 0) : null;
      const top = y > 0 ? (pcm[(y - 1) * mbWidth + x] ? 16 : 0) : null;
      noCoefficients(w, left, top);
    }
  }
  return nalUnit(3, NAL_IDR, w.finish());
}

/**
 * coeff_token for a block with no coefficient (table 9-5), whose code depends on nC, the
 * neighbours' coefficient counts (section 9.2.1): an I_PCM neighbour counts 16, any other 0 here.
 */
function noCoefficients(w: BitWriter, left: number | null, top: number | null): void {
  const nC = left !== null && top !== null ? (left + top + 1) >> 1 : (left ?? top ?? 0);
  if (nC < 2) w.u(1, 1);
  else if (nC < 4) w.u(2, 3);
  else if (nC < 8) w.u(4, 15);
  else w.u(6, 3);
}

/**
 * A P picture (not a reference) over the IDR: every macroblock skipped (a copy of the IDR) except
 * the tile's, sent as samples, and 0,0, where the IDR's tile was, copied from its right (or lower)
 * neighbour by a 16-pixel motion vector. As the first macroblock of the slice its predicted vector
 * is zero, and every other vector is zero, so the skipped macroblocks stay still copies.
 */
function pPicture(
  geometry: ClipGeometry,
  tile: Uint8Array,
  column: number,
  row: number,
  poc: number,
): Buffer {
  const { mbWidth, mbHeight } = geometry;
  const w = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(5) // slice_type: P, as are all slices of the picture
    .ue(0) // pic_parameter_set_id
    .u(LOG2_MAX_FRAME_NUM, 1) // frame_num: one after the IDR, for every non-reference picture
    .u(LOG2_MAX_POC_LSB, poc)
    .flag(false) // num_ref_idx_active_override_flag
    .flag(false) // ref_pic_list_modification_flag_l0
    .se(0) // slice_qp_delta
    .ue(1); // disable_deblocking_filter_idc
  let skipped = 0;
  for (let index = 0; index < mbWidth * mbHeight; index += 1) {
    const x = index % mbWidth;
    const y = Math.floor(index / mbWidth);
    if (x === column && y === row) {
      w.ue(skipped)
        .ue(P_INTRA_OFFSET + I_PCM)
        .alignWithZeros()
        .bytes(tile);
    } else if (index === 0) {
      // Quarter-pixel units: 64 is 16 pixels, one macroblock over.
      w.ue(skipped).ue(P_L0_16X16);
      w.se(mbWidth > 1 ? 64 : 0).se(mbWidth > 1 ? 0 : 64);
      w.ue(0); // coded_block_pattern 0 (code number 0 for an inter macroblock): no residual
    } else {
      skipped += 1;
      continue;
    }
    skipped = 0;
  }
  if (skipped > 0) w.ue(skipped);
  return nalUnit(0, NAL_SLICE, w.finish());
}
