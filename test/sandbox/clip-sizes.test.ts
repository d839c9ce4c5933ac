import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { jobVideo } from '../../src/sandbox/mp4.js';
import { facts } from './clip-facts.js';
import { body, newKey, ROOMY, setup } from './helpers.js';
import { find, parseBoxes, words } from './mp4-reader.js';

/** The level_idc an SPS names (its third byte after the NAL header). */
const levelOf = (bytes: Buffer) => {
  const avcC = find(parseBoxes(bytes), 'moov/trak/mdia/minf/stbl/stsd/avc1/avcC').body;
  return avcC[8 + 3] ?? 0;
};

describe('sandbox clips carry the size and length asked for', () => {
  it.each([
    ['16:9', '720p', 4, 1280, 720, 31],
    ['9:16', '720p', 6, 720, 1280, 31],
    ['16:9', '1080p', 20, 1920, 1080, 40],
    ['9:16', '1080p', 3, 1080, 1920, 40],
    ['1:1', '480p', 5, 480, 480, 22],
    ['4:3', '480p', 2, 640, 480, 22],
    ['21:9', '1080p', 1, 2520, 1080, 50],
  ])(
    '%s at %s for %i s is %i x %i (the shorter side the definition), level %i',
    (orientation, definition, seconds, w, h, level) => {
      const bytes = jobVideo('job_sized', { orientation, seconds, definition });
      const clip = facts(bytes);
      expect(clip.tkhdSize).toEqual([w, h]);
      expect(clip.entrySize).toEqual([w, h]);
      expect(clip.sps).toEqual({ profile: 66, width: w, height: h });
      expect([clip.movieSeconds, clip.mediaSeconds, clip.sampleSeconds]).toEqual([seconds, seconds, seconds]);
      expect(levelOf(bytes)).toBe(level);
    },
  );

  it('stays small: 20 s at 1080p is under 48 KB', () => {
    expect(
      jobVideo('job_big', { orientation: '16:9', seconds: 20, definition: '1080p' }).length,
    ).toBeLessThan(48_000);
  });
});

describe('clip faults', () => {
  it('a short clip is half as long, a wrong size half each way, a truncated file cut inside its frames', () => {
    const shape = { orientation: '16:9', seconds: 6, definition: '720p' };
    const short = facts(jobVideo('job_f', { ...shape, fault: 'short' }));
    expect([short.movieSeconds, short.sampleSeconds, short.tkhdSize]).toEqual([3, 3, [1280, 720]]);
    const small = facts(jobVideo('job_f', { ...shape, fault: 'wrong_size' }));
    expect([small.movieSeconds, small.tkhdSize, small.sps.width, small.sps.height]).toEqual([
      6,
      [640, 360],
      640,
      360,
    ]);
    const whole = jobVideo('job_f', shape);
    const cut = jobVideo('job_f', { ...shape, fault: 'truncated' });
    // The index is whole and still promises every frame; the file ends halfway through them.
    const boxes = parseBoxes(whole);
    const mdat = find(boxes, 'mdat');
    expect(cut.subarray(0, mdat.start).equals(whole.subarray(0, mdat.start))).toBe(true);
    expect(cut.readUInt32BE(mdat.start - 8)).toBe(mdat.body.length + 8);
    expect(cut.length).toBe(mdat.start + Math.floor(mdat.body.length / 2));
    const [, , , , duration = 0] = words(find(boxes, 'moov/trak/tkhd'));
    expect(duration).toBe(6000);
  });

  it('markers pick the fault of one item, a count only its first jobs; rates pick any succeeded job', async () => {
    const { client, clock } = await setup(ROOMY);
    const input = { seconds: 4, definition: '1080p', orientation: '9:16' };
    const submit = async (prompt: string) =>
      (await client.createVideoJob(body(prompt, {}, input), newKey())).data.id;
    const jobs = [
      await submit('a [[short-clipx1]]'),
      await submit('a [[short-clipx1]]'),
      await submit('b [[wrong-size]]'),
      await submit('c [[truncated]]'),
      await submit('d'),
    ];
    clock.advance(4);
    const download = async (id: string) => {
      const url = (await client.getJob(id)).data.output.files[0]?.url ?? '';
      return Buffer.from(await (await request(url)).body.arrayBuffer());
    };
    const [first, second, wrong, cut, plain] = await Promise.all(jobs.map(download));
    expect(facts(first!).movieSeconds).toBe(2);
    expect(facts(second!).movieSeconds).toBe(4);
    expect(facts(wrong!).tkhdSize).toEqual([540, 960]);
    expect(() => facts(cut!)).toThrow(/bad box size/);
    expect(facts(plain!)).toMatchObject({ movieSeconds: 4, tkhdSize: [1080, 1920] });

    const rated = await setup({ ...ROOMY, faults: { short_clip: 1 } });
    const id = (await rated.client.createVideoJob(body('e', {}, input), newKey())).data.id;
    rated.clock.advance(4);
    const url = (await rated.client.getJob(id)).data.output.files[0]?.url ?? '';
    expect(facts(Buffer.from(await (await request(url)).body.arrayBuffer())).movieSeconds).toBe(2);
  });
});
