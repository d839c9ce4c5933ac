import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { BitWriter, nalUnit } from '../../src/sandbox/bit-writer.js';
import { clipGeometry, jobColour } from '../../src/sandbox/clip-look.js';
import { parseSandboxConfig } from '../../src/sandbox/config.js';
import { CLIP_FPS, clipShape, jobVideo } from '../../src/sandbox/mp4.js';
import { facts } from './clip-facts.js';
import { body, newKey, setup } from './helpers.js';
import { BitReader } from './mp4-reader.js';

describe('sandbox clips', () => {
  it.each([
    ['16:9', 4, 64, 36],
    ['9:16', 8, 36, 64],
    ['1:1', 5, 48, 48],
    ['4:3', 1, 56, 42],
    ['16:9', 20, 64, 36],
  ])(
    'a %s clip of %i s: boxes tile the file, %i x %i, the length asked for',
    (orientation, seconds, w, h) => {
      const bytes = jobVideo('job_shape', { orientation, seconds });
      const clip = facts(bytes);
      expect(clip.top).toEqual(['ftyp', 'moov', 'mdat', 'free']);
      expect([clip.movieSeconds, clip.mediaSeconds, clip.sampleSeconds]).toEqual([seconds, seconds, seconds]);
      expect(clip.tkhdSize).toEqual([w, h]);
      expect(clip.entrySize).toEqual([w, h]);
      expect(clip.sps).toEqual({ profile: 66, width: w, height: h });
      expect(clip.sampleCount).toBe(seconds * CLIP_FPS);
      expect(clip.sizes.reduce((sum, size) => sum + size, 0)).toBe(clip.mdat.body.length);
      expect(clip.chunkOffset).toBe(clip.mdat.start);
      // An IDR (type 5) first and wherever stss says a player may start, P slices (type 1) between.
      expect(clip.nalTypes[0]).toBe(5);
      expect(clip.syncSamples).toEqual(
        clip.nalTypes.flatMap((type, index) => (type === 5 ? [index + 1] : [])),
      );
      expect(clip.nalTypes.every((type) => type === 5 || type === 1)).toBe(true);
    },
  );

  it('stays small: a 20 s clip is under 24 KB, its frames after an IDR about 400 bytes each', () => {
    const clip = facts(jobVideo('job_small', { orientation: '9:16', seconds: 20 }));
    expect(clip.mdat.body.length).toBeLessThan(24_000);
    clip.sizes.forEach((size, index) => {
      if (clip.nalTypes[index] === 1) expect(size).toBeLessThan(450);
    });
  });

  it('gives a job the same bytes every time, and two jobs different pictures, not just ids', () => {
    const shape = { orientation: '16:9', seconds: 4 };
    const a = jobVideo('job_a', shape);
    expect(jobVideo('job_a', shape).equals(a)).toBe(true);
    const b = jobVideo('job_b', shape);
    expect(b.equals(a)).toBe(false);
    expect(jobColour('job_a')).not.toEqual(jobColour('job_b'));
    expect(facts(a).mdat.body.equals(facts(b).mdat.body)).toBe(false);
  });

  it('keeps apart shapes with the same macroblock grid, whose tiles take different paths', () => {
    // 64x36 and 56x42 are both 4x3 macroblocks, but 56 px has three whole columns, not four: the
    // fourth frame's tile is at column 3 of row 0 in one, column 0 of row 1 in the other.
    const wide = facts(jobVideo('job_grid', { orientation: '16:9', seconds: 2 }));
    const four = facts(jobVideo('job_grid', { orientation: '4:3', seconds: 2 }));
    expect(wide.samples[3]?.equals(four.samples[3] ?? Buffer.alloc(0))).toBe(false);
    expect(wide.samples[1]?.equals(four.samples[1] ?? Buffer.alloc(0))).toBe(true);
  });

  it('pads to totalBytes inside the trailing free box, leaving the clip itself unchanged', () => {
    const shape = { orientation: '1:1', seconds: 3 };
    const plain = jobVideo('job_pad', shape);
    const padded = jobVideo('job_pad', shape, 100_000);
    expect(padded.length).toBe(100_000);
    const clipEnd = facts(plain).mdat.start + facts(plain).mdat.body.length;
    expect(padded.subarray(0, clipEnd).equals(plain.subarray(0, clipEnd))).toBe(true);
    expect(facts(padded).top).toEqual(['ftyp', 'moov', 'mdat', 'free']);
  });

  it('sizes other orientations to about the same area, and clamps extreme ones', () => {
    expect(clipGeometry('21:9')).toMatchObject({ width: 74, height: 32, mbWidth: 5, mbHeight: 2 });
    expect(clipGeometry('100:1')).toMatchObject({ width: 256, height: 16 });
    expect(clipGeometry('nonsense')).toMatchObject({ width: 48, height: 48 });
  });

  it('takes the first accepted orientation and the default length when the input says neither', () => {
    const rules = parseSandboxConfig({}).input;
    expect(clipShape({ prompt: 'x' }, rules)).toEqual({
      orientation: '16:9',
      seconds: 5,
      definition: '720p',
    });
    expect(clipShape({ prompt: 'x', orientation: '9:16', seconds: 8, definition: '480p' }, rules)).toEqual({
      orientation: '9:16',
      seconds: 8,
      definition: '480p',
    });
  });

  it('serves each job the clip its input asked for, fixed when the job was accepted', async () => {
    const { sandbox, client, clock } = await setup();
    const tall = await client.createVideoJob(body('tall', {}, { orientation: '9:16', seconds: 8 }), newKey());
    const plain = await client.createVideoJob(body('plain'), newKey());
    clock.advance(3);
    const download = async (id: string) => {
      const url = (await client.getJob(id)).data.output.files[0]?.url ?? '';
      return facts(Buffer.from(await (await request(url)).body.arrayBuffer()));
    };
    const sizeAndLength = (clip: ReturnType<typeof facts>) => [
      clip.sps.width,
      clip.sps.height,
      clip.movieSeconds,
    ];
    expect(sizeAndLength(await download(tall.data.id))).toEqual([720, 1280, 8]);
    // New defaults change the clips of new jobs only: a job's bytes never change once accepted
    // (plain's clip is made after the change, so no cached copy can hide a wrong shape).
    sandbox.update({
      input: {
        orientations: ['1:1', '16:9'],
        seconds: { min: 1, max: 20, default: 3 },
        default_definition: '480p',
      },
    });
    expect(sizeAndLength(await download(plain.data.id))).toEqual([1280, 720, 5]);
    const later = await client.createVideoJob(body('later'), newKey());
    clock.advance(3);
    expect(sizeAndLength(await download(later.data.id))).toEqual([480, 480, 3]);
  });
});

describe('H.264 bit writing', () => {
  it('writes Exp-Golomb codes a reader reads back', () => {
    const values = [0, 1, 2, 3, 7, 8, 64, 255, 1000];
    const w = new BitWriter();
    for (const value of values) w.ue(value);
    const reader = new BitReader(nalUnit(0, 1, w.finish()));
    expect(values.map(() => reader.ue())).toEqual(values);
    expect(Buffer.from(new BitWriter().se(-2).se(2).finish())).toEqual(Buffer.from([0b00101001, 0b00100000]));
  });

  it('escapes every would-be start code inside a NAL unit, and the reader undoes it', () => {
    const payload = Buffer.from([0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 9]);
    const nal = nalUnit(3, 5, payload);
    expect(nal[0]).toBe(0x65);
    for (let i = 0; i + 2 < nal.length; i += 1) {
      expect(nal[i] === 0 && nal[i + 1] === 0 && (nal[i + 2] ?? 9) <= 2).toBe(false);
    }
    const reader = new BitReader(nal);
    expect([...payload].map(() => reader.u(8))).toEqual([...payload]);
  });
});
