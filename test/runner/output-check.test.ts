import { describe, expect, it } from 'vitest';
import type { VideoFacts } from '../../src/downloads/video-facts.js';
import { askedFor, judgeTake, judgeVideo, type TakeCheck } from '../../src/runner/output-check.js';

/** Every rule of a take's check against its request, with its exact words (docs/checks.md). */

const video = (seconds: number, width: number, height: number, frames = 10): VideoFacts => ({
  kind: 'video',
  seconds,
  width,
  height,
  frames,
});
const asked = (seconds: number | null, definition: string | null, orientation: string | null) => ({
  seconds,
  definition,
  orientation,
});

describe('askedFor: what the request sent asks of its take', () => {
  it('reads seconds, definition and orientation from the body as sent', () => {
    const body = JSON.stringify({
      model: 'm',
      input: { prompt: 'p', seconds: 6, definition: '1080p', orientation: '9:16', style: 'x' },
    });
    expect(askedFor(body)).toEqual(asked(6, '1080p', '9:16'));
  });

  it('leaves out what the request leaves out, or sends in a form the service does not document', () => {
    expect(askedFor(JSON.stringify({ input: { prompt: 'p' } }))).toEqual(asked(null, null, null));
    const odd = { prompt: 'p', seconds: '6', definition: 'HD', orientation: 'wide' };
    expect(askedFor(JSON.stringify({ input: odd }))).toEqual(asked(null, null, null));
    expect(askedFor(JSON.stringify({ input: { prompt: 'p', seconds: 0 } }))).toEqual(asked(null, null, null));
    expect(askedFor(JSON.stringify({ input: null }))).toEqual(asked(null, null, null));
    expect(askedFor('not json')).toEqual(asked(null, null, null));
    expect(askedFor('')).toEqual(asked(null, null, null));
  });
});

describe('judgeVideo', () => {
  const full = asked(6, '720p', '16:9');

  it('passes the take asked for, and records what the container said', () => {
    expect(judgeVideo(video(6, 1280, 720), full, 0.5)).toEqual({
      outcome: 'passed',
      reason: null,
      video: { seconds: 6, width: 1280, height: 720, frames: 10 },
    });
  });

  it('takes a length within the tolerance, both ways, and the edge itself', () => {
    for (const seconds of [5.5, 5.75, 6.5, 6.25])
      expect(judgeVideo(video(seconds, 1280, 720), full, 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(5.49, 1280, 720), full, 0.5)).toMatchObject({
      outcome: 'failed',
      reason: '5.49 s long, 6 s asked for (within 0.5 s)',
    });
    expect(judgeVideo(video(6.51, 1280, 720), full, 0.5).reason).toBe(
      '6.51 s long, 6 s asked for (within 0.5 s)',
    );
    expect(judgeVideo(video(6.1, 1280, 720), full, 0).reason).toBe('6.1 s long, 6 s asked for (within 0 s)');
    expect(judgeVideo(video(1 / 3, 1280, 720), asked(1, null, null), 0.5).reason).toBe(
      '0.333 s long, 1 s asked for (within 0.5 s)',
    );
  });

  it('names both sizes when the size is wrong, the longer side as a service rounds it', () => {
    expect(judgeVideo(video(6, 640, 360), full, 0.5)).toMatchObject({
      outcome: 'failed',
      reason: '640x360, 1280x720 asked for (16:9 at 720p)',
    });
    expect(judgeVideo(video(6, 720, 1280), full, 0.5).reason).toBe(
      '720x1280, 1280x720 asked for (16:9 at 720p)',
    );
    expect(judgeVideo(video(6, 480, 480), asked(6, '480p', '16:9'), 0.5).reason).toBe(
      '480x480, 854x480 asked for (16:9 at 480p)',
    );
    expect(judgeVideo(video(6, 1280, 720), asked(6, '1080p', '9:16'), 0.5).reason).toBe(
      '1280x720, 1080x1920 asked for (9:16 at 1080p)',
    );
  });

  it('takes the orientation within 1%, the shorter side exactly', () => {
    const wide = asked(null, '480p', '16:9');
    expect(judgeVideo(video(1, 854, 480), wide, 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(1, 852, 480), wide, 0.5).outcome).toBe('passed');
    // 16:9 is 1.7778: 1% either way is 1.7600 to 1.7956, 844.8 to 861.9 pixels across 480.
    expect(judgeVideo(video(1, 861, 480), wide, 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(1, 862, 480), wide, 0.5).outcome).toBe('failed');
    expect(judgeVideo(video(1, 845, 480), wide, 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(1, 844, 480), wide, 0.5).outcome).toBe('failed');
    expect(judgeVideo(video(1, 854, 482), wide, 0.5).outcome).toBe('failed');
  });

  it('checks only the fields asked for', () => {
    expect(judgeVideo(video(3, 640, 360), asked(null, null, null), 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(3, 360, 640), asked(null, '360p', null), 0.5).outcome).toBe('passed');
    expect(judgeVideo(video(3, 640, 480), asked(null, '360p', null), 0.5).reason).toBe(
      '640x480, a shorter side of 360 asked for (360p)',
    );
    expect(judgeVideo(video(3, 640, 480), asked(null, null, '16:9'), 0.5).reason).toBe(
      '640x480, 16:9 asked for',
    );
    expect(judgeVideo(video(3, 1000, 1000), asked(null, null, '1:1'), 0.5).outcome).toBe('passed');
  });

  it('gives every problem of a take, the length first', () => {
    expect(judgeVideo(video(2, 640, 360), full, 0.5).reason).toBe(
      '2 s long, 6 s asked for (within 0.5 s); 640x360, 1280x720 asked for (16:9 at 720p)',
    );
  });

  it('fails what is not playable, and leaves unchecked what it cannot read', () => {
    expect(judgeVideo({ kind: 'unplayable', reason: 'the file has no video track' }, full, 0.5)).toEqual({
      outcome: 'failed',
      reason: 'not a playable video: the file has no video track',
      video: null,
    });
    expect(judgeVideo({ kind: 'unread', reason: 'a GIF image' }, full, 0.5)).toEqual({
      outcome: 'unchecked',
      reason: 'a GIF image',
      video: null,
    });
  });
});

describe('judgeTake: a take of several files', () => {
  const passed: TakeCheck = { outcome: 'passed', reason: null, video: null };
  const failed: TakeCheck = { outcome: 'failed', reason: 'short', video: null };
  const unchecked: TakeCheck = { outcome: 'unchecked', reason: 'a GIF image', video: null };

  it('fails when one file fails, passes when one passes and none fails, else stays unchecked', () => {
    expect(judgeTake([unchecked, passed, failed])).toBe(failed);
    expect(judgeTake([unchecked, passed])).toBe(passed);
    expect(judgeTake([unchecked])).toBe(unchecked);
    expect(judgeTake([])).toEqual({ outcome: 'unchecked', reason: 'no file', video: null });
  });
});
