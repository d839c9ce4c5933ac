import { spawnSync } from 'node:child_process';

/**
 * ffmpeg, to make real videos in a test's set-up (Debian's package; .ci/run installs it). Without
 * it the tests that need it skip with a notice, and under CI=true they fail instead.
 */
export const ffmpegMissing = spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status !== 0;
/** True when the ffmpeg tests should be skipped (only outside CI). */
export const skipFfmpegTests = ffmpegMissing && process.env.CI !== 'true';

if (skipFfmpegTests) {
  console.warn(
    "\n*** ffmpeg tests SKIPPED: ffmpeg not found (install Debian's ffmpeg; under CI=true this fails) ***\n",
  );
}

/** Runs ffmpeg quietly with these arguments (the output file last), failing with its words. */
export function ffmpeg(...args: string[]): void {
  if (ffmpegMissing) throw new Error("ffmpeg is missing: install Debian's ffmpeg package (.ci/run does)");
  const result = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ffmpeg ${args.join(' ')} failed: ${result.stderr}`);
}

/** `seconds` of a test picture at `size` (WxH), 25 frames a second. */
export const testPicture = (size: string, seconds: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc=size=${size}:rate=25`,
  '-t',
  String(seconds),
];
