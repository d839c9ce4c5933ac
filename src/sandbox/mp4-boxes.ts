import type { EncodedClip } from './h264-clip.js';

/**
 * The smallest MP4 (ISO/IEC 14496-12 and -15) a browser plays: one H.264 track, the index (moov)
 * first so a player can start before the whole file has arrived, then the frames in one chunk.
 */

export interface TrackInfo {
  width: number;
  height: number;
  /** Frames a second; each frame lasts 1000 / fps milliseconds, so fps must divide 1000. */
  fps: number;
}

const TIMESCALE = 1000;
/** The identity transform of mvhd and tkhd, in 16.16 and 2.30 fixed point. */
const MATRIX = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000];

function box(type: string, ...parts: Buffer[]): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + parts.reduce((sum, part) => sum + part.length, 0), 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, ...parts]);
}

/** A box with version 0 and the given flags before its fields. */
function fullBox(type: string, flags: number, ...parts: Buffer[]): Buffer {
  return box(type, u32(flags & 0xffffff), ...parts);
}

function u32(...values: number[]): Buffer {
  const out = Buffer.alloc(4 * values.length);
  for (const [index, value] of values.entries()) out.writeUInt32BE(value >>> 0, 4 * index);
  return out;
}

function u16(...values: number[]): Buffer {
  const out = Buffer.alloc(2 * values.length);
  for (const [index, value] of values.entries()) out.writeUInt16BE(value, 2 * index);
  return out;
}

const FTYP = box(
  'ftyp',
  Buffer.from('isom', 'latin1'),
  u32(0x200),
  Buffer.from('isomiso2avc1mp41', 'latin1'),
);

/**
 * The index of a clip depends on its shape and frame sizes, not on its colours, so the jobs of one
 * shape and length share it.
 */
const indexes = new Map<string, Buffer>();

/** The whole file, ftyp, moov, mdat, as parts to concatenate once (with whatever follows). */
export function mp4Parts(clip: EncodedClip, track: TrackInfo): Buffer[] {
  const frameMs = TIMESCALE / track.fps;
  const durationMs = clip.frames.length * frameMs;
  const sizes = clip.frames.map((frame) => frame.length);
  const mdatSize = 8 + sizes.reduce((sum, size) => sum + size, 0);
  const key = [track.width, track.height, track.fps, clip.sps.toString('hex'), clip.pps.toString('hex')]
    .concat(sizes.map((size, index) => (clip.sync[index] ? -size : size)))
    .join(',');
  let moov = indexes.get(key);
  if (!moov) {
    // The chunk offset depends on the size of moov, which does not depend on the offset's value.
    const moovFor = (dataOffset: number) => movie(clip, track, frameMs, durationMs, dataOffset);
    moov = moovFor(FTYP.length + moovFor(0).length + 8);
    if (indexes.size >= 1000) indexes.clear();
    indexes.set(key, moov);
  }
  return [FTYP, moov, u32(mdatSize), Buffer.from('mdat', 'latin1'), ...clip.frames];
}

function movie(
  clip: EncodedClip,
  track: TrackInfo,
  frameMs: number,
  durationMs: number,
  dataOffset: number,
): Buffer {
  const mvhd = fullBox(
    'mvhd',
    0,
    u32(0, 0, TIMESCALE, durationMs), // created, modified, timescale, duration
    u32(0x10000), // rate 1.0
    u16(0x100, 0), // volume 1.0, reserved
    u32(0, 0, ...MATRIX, 0, 0, 0, 0, 0, 0),
    u32(2), // next_track_ID
  );
  const tkhd = fullBox(
    'tkhd',
    3, // enabled, in the movie
    u32(0, 0, 1, 0, durationMs, 0, 0), // created, modified, track_ID, reserved, duration, reserved
    u16(0, 0, 0, 0), // layer, alternate group, volume, reserved
    u32(...MATRIX, track.width * 0x10000, track.height * 0x10000),
  );
  const mdhd = fullBox('mdhd', 0, u32(0, 0, TIMESCALE, durationMs), u16(0x55c4, 0)); // language und
  const hdlr = fullBox(
    'hdlr',
    0,
    u32(0),
    Buffer.from('vide', 'latin1'),
    u32(0, 0, 0),
    Buffer.from('VideoHandler\0', 'latin1'),
  );
  const vmhd = fullBox('vmhd', 1, u16(0, 0, 0, 0));
  const dinf = box('dinf', fullBox('dref', 0, u32(1), fullBox('url ', 1)));
  const minf = box('minf', vmhd, dinf, sampleTable(clip, track, frameMs, dataOffset));
  const trak = box('trak', tkhd, box('mdia', mdhd, hdlr, minf));
  return box('moov', mvhd, trak);
}

function sampleTable(clip: EncodedClip, track: TrackInfo, frameMs: number, dataOffset: number): Buffer {
  const count = clip.frames.length;
  const syncSamples = clip.sync.flatMap((sync, index) => (sync ? [index + 1] : []));
  return box(
    'stbl',
    fullBox('stsd', 0, u32(1), sampleEntry(clip, track)),
    fullBox('stts', 0, u32(1, count, frameMs)),
    fullBox('stss', 0, u32(syncSamples.length, ...syncSamples)),
    fullBox('stsc', 0, u32(1, 1, count, 1)), // one chunk holding every sample
    fullBox('stsz', 0, u32(0, count, ...clip.frames.map((frame) => frame.length))),
    fullBox('stco', 0, u32(1, dataOffset)),
  );
}

function sampleEntry(clip: EncodedClip, track: TrackInfo): Buffer {
  const sps = clip.sps;
  const avcC = box(
    'avcC',
    Buffer.from([1, sps[1] ?? 0, sps[2] ?? 0, sps[3] ?? 0, 0xff, 0xe1]), // version, profile, compatibility, level; 4-byte lengths; one SPS
    u16(sps.length),
    sps,
    Buffer.from([1]), // one PPS
    u16(clip.pps.length),
    clip.pps,
  );
  return box(
    'avc1',
    Buffer.alloc(6), // reserved
    u16(1), // data_reference_index
    Buffer.alloc(16), // pre_defined and reserved
    u16(track.width, track.height),
    u32(0x480000, 0x480000, 0), // 72 dpi both ways, reserved
    u16(1), // frame_count
    Buffer.alloc(32), // compressorname
    u16(0x18, 0xffff), // depth, pre_defined
    avcC,
  );
}
