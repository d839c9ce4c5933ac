/**
 * A reader for the sandbox's clips written independently of src/sandbox/mp4-boxes.ts and
 * h264-clip.ts, so the tests check the files against the formats rather than against the writer.
 */

export interface Box {
  type: string;
  /** Offset of the box's payload (after its 8-byte header) in the file. */
  start: number;
  body: Buffer;
  children: Box[];
}

/** Boxes that hold only other boxes, plus stsd and avc1, whose children follow fixed fields. */
const CONTAINERS: Record<string, number> = {
  moov: 0,
  trak: 0,
  mdia: 0,
  minf: 0,
  dinf: 0,
  stbl: 0,
  stsd: 8,
  avc1: 78,
};

/** The box tree, failing on a size that does not tile its parent exactly. */
export function parseBoxes(bytes: Buffer, start = 0, end = bytes.length): Box[] {
  const boxes: Box[] = [];
  let offset = start;
  while (offset < end) {
    const size = bytes.readUInt32BE(offset);
    if (size < 8 || offset + size > end) throw new Error(`bad box size ${size} at ${offset}`);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + size);
    const skip = CONTAINERS[type];
    const children = skip === undefined ? [] : parseBoxes(bytes, offset + 8 + skip, offset + size);
    boxes.push({ type, start: offset + 8, body, children });
    offset += size;
  }
  return boxes;
}

/** The box at a path of types, such as `moov/trak/mdia/mdhd`. */
export function find(boxes: Box[], path: string): Box {
  let found: Box | undefined;
  let level = boxes;
  for (const type of path.split('/')) {
    found = level.find((box) => box.type === type);
    if (!found) throw new Error(`no ${type} in ${path}`);
    level = found.children;
  }
  return found as Box;
}

/** The 32-bit words of a full box's body after its version and flags. */
export function words(box: Box): number[] {
  const out: number[] = [];
  for (let offset = 4; offset + 4 <= box.body.length; offset += 4) out.push(box.body.readUInt32BE(offset));
  return out;
}

/** Reads RBSP bits, with emulation prevention bytes removed first. */
export class BitReader {
  readonly #bytes: number[] = [];
  #bit = 0;

  constructor(nal: Buffer) {
    let zeros = 0;
    for (const byte of nal.subarray(1)) {
      if (zeros >= 2 && byte === 3) {
        zeros = 0;
        continue;
      }
      this.#bytes.push(byte);
      zeros = byte === 0 ? zeros + 1 : 0;
    }
  }

  u(bits: number): number {
    let value = 0;
    for (let i = 0; i < bits; i += 1) {
      const byte = this.#bytes[this.#bit >> 3] ?? 0;
      value = value * 2 + ((byte >> (7 - (this.#bit & 7))) & 1);
      this.#bit += 1;
    }
    return value;
  }

  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) zeros += 1;
    return 2 ** zeros - 1 + this.u(zeros);
  }
}

export interface SpsFacts {
  profile: number;
  width: number;
  height: number;
}

/** Profile and cropped picture size from a Baseline SPS (no chroma_format_idc fields). */
export function readSps(nal: Buffer): SpsFacts {
  const r = new BitReader(nal);
  const profile = r.u(8);
  r.u(16); // constraint flags, level
  r.ue(); // seq_parameter_set_id
  r.ue(); // log2_max_frame_num_minus4
  if (r.ue() === 0) r.ue(); // pic_order_cnt_type 0 and its lsb length
  r.ue(); // max_num_ref_frames
  r.u(1); // gaps_in_frame_num_value_allowed_flag
  const mbWidth = r.ue() + 1;
  const mbHeight = r.ue() + 1;
  if (r.u(1) !== 1) throw new Error('expected frame_mbs_only_flag');
  r.u(1); // direct_8x8_inference_flag
  const crop = r.u(1) ? [r.ue(), r.ue(), r.ue(), r.ue()] : [0, 0, 0, 0];
  const [left = 0, right = 0, top = 0, bottom = 0] = crop;
  return { profile, width: mbWidth * 16 - 2 * (left + right), height: mbHeight * 16 - 2 * (top + bottom) };
}
