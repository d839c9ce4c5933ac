import { expect } from 'vitest';
import { find, parseBoxes, readSps, words } from './mp4-reader.js';

/** What a player would read from a clip's boxes and its H.264 parameter set. */
export function facts(bytes: Buffer) {
  const boxes = parseBoxes(bytes);
  const [, , mvhdScale = 0, mvhdDuration = 0] = words(find(boxes, 'moov/mvhd'));
  const [, , mdhdScale = 0, mdhdDuration = 0] = words(find(boxes, 'moov/trak/mdia/mdhd'));
  const tkhd = words(find(boxes, 'moov/trak/tkhd'));
  const stbl = 'moov/trak/mdia/minf/stbl';
  const [, count = 0, delta = 0] = words(find(boxes, `${stbl}/stts`));
  const [, sampleCount, ...sizes] = words(find(boxes, `${stbl}/stsz`));
  const [, chunkOffset = 0] = words(find(boxes, `${stbl}/stco`));
  const [, ...syncSamples] = words(find(boxes, `${stbl}/stss`));
  const avc1 = find(boxes, `${stbl}/stsd/avc1`);
  const avcC = find(boxes, `${stbl}/stsd/avc1/avcC`).body;
  const sps = avcC.subarray(8, 8 + avcC.readUInt16BE(6));
  const mdat = find(boxes, 'mdat');
  let offset = chunkOffset;
  const samples = sizes.map((size) => {
    expect(bytes.readUInt32BE(offset)).toBe(size - 4); // one NAL unit per sample
    offset += size;
    return bytes.subarray(offset - size, offset);
  });
  const nalTypes = samples.map((sample) => (sample[4] ?? 0) & 0x1f);
  return {
    top: boxes.map((box) => box.type),
    movieSeconds: mvhdDuration / mvhdScale,
    mediaSeconds: mdhdDuration / mdhdScale,
    sampleSeconds: (count * delta) / mdhdScale,
    tkhdSize: [(tkhd[18] ?? 0) / 0x10000, (tkhd[19] ?? 0) / 0x10000],
    entrySize: [avc1.body.readUInt16BE(24), avc1.body.readUInt16BE(26)],
    sps: readSps(sps),
    sampleCount,
    sizes,
    chunkOffset,
    mdat,
    samples,
    nalTypes,
    syncSamples,
  };
}
