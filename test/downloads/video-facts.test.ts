import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readVideoFacts, readVideoFile } from '../../src/downloads/video-facts.js';
import { jobVideo } from '../../src/sandbox/mp4.js';
import { ffmpeg, skipFfmpegTests, testPicture } from '../support/ffmpeg.js';
import { tempDir } from '../support/temp.js';

/**
 * Saved files read as videos from their container alone (docs/checks.md): real MP4 files made by
 * the sandbox and, where it is installed, by ffmpeg, written to disk and read back.
 */

const dir = tempDir();
let files = 0;
const write = (bytes: Buffer, name = `f${++files}.mp4`) => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const sandboxClip = (fault?: 'short' | 'wrong_size' | 'truncated') =>
  write(
    jobVideo('job_facts', {
      orientation: '9:16',
      seconds: 6,
      definition: '720p',
      ...(fault ? { fault } : {}),
    }),
  );

describe('the sandbox clips', () => {
  it('reads length, size and frames from the index', async () => {
    expect(await readVideoFile(sandboxClip())).toEqual({
      kind: 'video',
      seconds: 6,
      width: 720,
      height: 1280,
      frames: 12,
    });
    expect(await readVideoFile(sandboxClip('short'))).toMatchObject({ kind: 'video', seconds: 3 });
    expect(await readVideoFile(sandboxClip('wrong_size'))).toMatchObject({ width: 360, height: 640 });
  });

  it('finds a file cut inside its frames, though its index is whole', async () => {
    const facts = await readVideoFile(sandboxClip('truncated'));
    expect(facts.kind).toBe('unplayable');
    expect(facts).toMatchObject({
      reason: expect.stringMatching(/^the file ends inside its mdat box \(\d+ of its \d+ bytes there\)$/),
    });
  });

  it('finds frames past the end of a file whose boxes are whole', async () => {
    // The index says the frames start later than they do: the last one runs past the file's end.
    const bytes = jobVideo('job_facts', { orientation: '1:1', seconds: 2, definition: '480p' });
    const stco = bytes.indexOf('stco');
    bytes.writeUInt32BE(bytes.readUInt32BE(stco + 12) + 10_000, stco + 12);
    expect(await readVideoFile(write(bytes))).toEqual({
      kind: 'unplayable',
      reason: expect.stringMatching(/^its frames run to byte \d+, but the file ends at \d+$/),
    });
  });

  it('fails an index mp4box.js cannot read, with its words, and writes nothing to the console', async () => {
    const bytes = jobVideo('job_facts', { orientation: '1:1', seconds: 2, definition: '480p' });
    // tkhd says it is 3 bytes long, less than a box's header: mp4box.js logs it, then throws.
    bytes.writeUInt32BE(3, bytes.indexOf('tkhd') - 4);
    const errors = vi.spyOn(console, 'error');
    const warnings = vi.spyOn(console, 'warn');
    try {
      expect(await readVideoFile(write(bytes))).toEqual({
        kind: 'unplayable',
        reason:
          'its index cannot be read (BoxParser: Box of type tkhd has an invalid size 3 (too small to be a box))',
      });
      expect([errors.mock.calls, warnings.mock.calls]).toEqual([[], []]);
    } finally {
      errors.mockRestore();
      warnings.mockRestore();
    }
  });

  it('takes a quarter turn in the track matrix as the picture shown', async () => {
    const bytes = jobVideo('job_facts', { orientation: '16:9', seconds: 2, definition: '480p' });
    const matrix = bytes.indexOf('tkhd') + 4 + 4 + 36;
    for (const [index, value] of [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000].entries())
      bytes.writeInt32BE(value, matrix + 4 * index);
    expect(await readVideoFile(write(bytes))).toMatchObject({ kind: 'video', width: 480, height: 854 });
  });

  it('reads only the index of a large file, in a few reads', async () => {
    const size = 20 * 1024 * 1024;
    const bytes = jobVideo('job_facts', { orientation: '16:9', seconds: 20, definition: '1080p' }, size);
    const reads: Array<[number, number]> = [];
    const facts = await readVideoFacts(async (offset, length) => {
      reads.push([offset, length]);
      return bytes.subarray(offset, offset + length);
    }, size);
    expect(facts).toEqual({ kind: 'video', seconds: 20, width: 1920, height: 1080, frames: 40 });
    expect(reads.reduce((sum, [, length]) => sum + Math.min(length, 65_536), 0)).toBeLessThan(200_000);
  });
});

describe('files that are not an MP4', () => {
  it('leaves unchecked what it does not read, naming it where it can', async () => {
    const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(100)]);
    expect(await readVideoFile(write(gif, 'a.gif'))).toEqual({
      kind: 'unread',
      reason: 'a GIF image, not an MP4 or QuickTime file',
    });
    expect(await readVideoFile(write(Buffer.from('hello, world\n'), 'a.txt'))).toEqual({
      kind: 'unread',
      reason: 'a file of an unknown kind, not an MP4 or QuickTime file',
    });
    expect(await readVideoFile(write(Buffer.alloc(0), 'empty.mp4'))).toMatchObject({ kind: 'unread' });
  });

  it('fails an MP4 with no index', async () => {
    const ftyp = readFileSync(sandboxClip()).subarray(0, 32);
    const size = ftyp.readUInt32BE(0);
    expect(await readVideoFile(write(ftyp.subarray(0, size)))).toEqual({
      kind: 'unplayable',
      reason: 'the file has no index (moov box)',
    });
  });
});

describe.skipIf(skipFfmpegTests)('files made by ffmpeg', () => {
  const made = (name: string, ...args: string[]) => {
    const path = join(dir, name);
    ffmpeg(...args, path);
    return path;
  };

  it("reads an index at the end of the file (ffmpeg's default) and at its start (faststart)", async () => {
    const end = made('end.mp4', ...testPicture('1280x720', 1), '-c:v', 'libx264', '-preset', 'ultrafast');
    expect(await readVideoFile(end)).toEqual({
      kind: 'video',
      seconds: 1,
      width: 1280,
      height: 720,
      frames: 25,
    });
    const start = made(
      'start.mp4',
      ...testPicture('360x640', 2),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-movflags',
      '+faststart',
    );
    expect(await readVideoFile(start)).toEqual({
      kind: 'video',
      seconds: 2,
      width: 360,
      height: 640,
      frames: 50,
    });
  });

  it('reads a QuickTime file, and another codec than H.264', async () => {
    const mov = made('clip.mov', ...testPicture('640x480', 1), '-c:v', 'mpeg4');
    expect(await readVideoFile(mov)).toEqual({
      kind: 'video',
      seconds: 1,
      width: 640,
      height: 480,
      frames: 25,
    });
  });

  it('fails a file cut short, whose index at the end is lost', async () => {
    const whole = readFileSync(
      made('whole.mp4', ...testPicture('640x360', 2), '-c:v', 'libx264', '-preset', 'ultrafast'),
    );
    const facts = await readVideoFile(write(whole.subarray(0, Math.floor(whole.length / 2))));
    expect(facts).toMatchObject({
      kind: 'unplayable',
      reason: expect.stringMatching(/^the file ends inside its mdat box/),
    });
  });

  it('fails an MP4 with sound and no picture', async () => {
    const sound = made('sound.mp4', '-f', 'lavfi', '-i', 'sine=frequency=440', '-t', '1', '-c:a', 'aac');
    expect(await readVideoFile(sound)).toEqual({ kind: 'unplayable', reason: 'the file has no video track' });
  });

  it('leaves a WebM unchecked', async () => {
    const webm = made(
      'clip.webm',
      ...testPicture('160x120', 1),
      '-c:v',
      'libvpx-vp9',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
    );
    expect(await readVideoFile(webm)).toEqual({
      kind: 'unread',
      reason: 'a Matroska or WebM file, not an MP4 or QuickTime file',
    });
  });
});
