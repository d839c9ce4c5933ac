import type { VideoFacts } from '../downloads/video-facts.js';
import type { Manifest } from '../manifest/index.js';
import type { OwnCheckResult } from './own-checks.js';

/**
 * Whether a saved take is the video its request asked for (docs/checks.md), judged from what its
 * container says (downloads/video-facts.ts): a video a player can open, with frames, as long as
 * the `seconds` asked for within a tolerance, at the size the `definition` and `orientation` ask
 * for. A field the request leaves out is not checked. Pure.
 */

export type CheckOutcome = 'passed' | 'failed' | 'unchecked';

/** What the container said, as recorded beside the outcome. */
export interface VideoShape {
  seconds: number;
  width: number;
  height: number;
  frames: number;
}

export interface TakeCheck {
  outcome: CheckOutcome;
  /** Why it failed, or why it was not checked; null when it passed. */
  reason: string | null;
  video: VideoShape | null;
  /** The lowest score a check of your own gave (docs/checks.md); null or absent: none gave one. */
  score?: number | null;
  /** Each check of your own that ran, in order; absent where none did. */
  own?: OwnCheckResult[];
}

/** The fields of the request a take is checked against; null where the request leaves one out. */
export interface AskedFor {
  seconds: number | null;
  definition: string | null;
  orientation: string | null;
}

/** How far a take's length may be from the `seconds` asked for, unless the manifest says. */
export const DEFAULT_TOLERANCE_SECONDS = 0.5;
/**
 * The built-in check's tolerance for a manifest, or null when `video_checks: false` turns the
 * built-in check off (docs/checks.md): the one place `run` and `mediabatch check` ask.
 */
export function videoCheckTolerance(manifest: Pick<Manifest, 'durationToleranceSeconds' | 'videoChecks'>) {
  return manifest.videoChecks === false
    ? null
    : (manifest.durationToleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);
}

/** How far a take's width to height may be from the orientation's, as a share of it. */
const ASPECT_TOLERANCE = 0.01;

/** The request body as it was sent (an attempt's `requestBody`), read for what a take must be. */
export function askedFor(requestBody: string): AskedFor {
  let input: Record<string, unknown> = {};
  try {
    const body = JSON.parse(requestBody) as { input?: unknown };
    if (body.input !== null && typeof body.input === 'object') input = body.input as Record<string, unknown>;
  } catch {
    // A body that is not JSON asks for nothing this check knows.
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    seconds: typeof input.seconds === 'number' && input.seconds > 0 ? input.seconds : null,
    definition: /^[0-9]+p$/.test(text(input.definition) ?? '') ? (input.definition as string) : null,
    orientation: /^[0-9]+:[0-9]+$/.test(text(input.orientation) ?? '') ? (input.orientation as string) : null,
  };
}

export function judgeVideo(facts: VideoFacts, asked: AskedFor, toleranceSeconds: number): TakeCheck {
  if (facts.kind === 'unread') return { outcome: 'unchecked', reason: facts.reason, video: null };
  if (facts.kind === 'unplayable')
    return { outcome: 'failed', reason: `not a playable video: ${facts.reason}`, video: null };
  const video = { seconds: facts.seconds, width: facts.width, height: facts.height, frames: facts.frames };
  const problems = [lengthProblem(video, asked, toleranceSeconds), sizeProblem(video, asked)].filter(
    (problem): problem is string => problem !== null,
  );
  return problems.length === 0
    ? { outcome: 'passed', reason: null, video }
    : { outcome: 'failed', reason: problems.join('; '), video };
}

/** A take of several files: failed if one failed, else passed if one passed, else unchecked. */
export function judgeTake(files: readonly TakeCheck[]): TakeCheck {
  const failed = files.find((file) => file.outcome === 'failed');
  const passed = files.find((file) => file.outcome === 'passed');
  return failed ?? passed ?? files[0] ?? { outcome: 'unchecked', reason: 'no file', video: null };
}

/**
 * The built-in check, then the checks of your own (run only on a take the built-in check did not
 * fail): the first own check that failed fails the take, with its name and words; a take the
 * container could not tell of passes when its own checks pass.
 */
export function withOwnChecks(builtin: TakeCheck, own: readonly OwnCheckResult[]): TakeCheck {
  if (own.length === 0 || builtin.outcome === 'failed') return builtin;
  const scores = own.flatMap((check) => (check.score === null ? [] : [check.score]));
  const score = scores.length === 0 ? null : Math.min(...scores);
  const failed = own.find((check) => check.outcome === 'failed');
  const reason = failed ? `${failed.name}: ${failed.reason ?? 'failed'}` : null;
  return { outcome: failed ? 'failed' : 'passed', reason, video: builtin.video, score, own: [...own] };
}

function lengthProblem(video: VideoShape, asked: AskedFor, tolerance: number): string | null {
  if (asked.seconds === null || Math.abs(video.seconds - asked.seconds) <= tolerance + 1e-9) return null;
  return `${seconds(video.seconds)} long, ${seconds(asked.seconds)} asked for (within ${seconds(tolerance)})`;
}

function sizeProblem(video: VideoShape, asked: AskedFor): string | null {
  const lines = asked.definition === null ? null : Number.parseInt(asked.definition, 10);
  const ratio = asked.orientation === null ? null : orientationRatio(asked.orientation);
  const shorter = Math.min(video.width, video.height);
  const lineMiss = lines !== null && shorter !== lines;
  const shapeMiss = ratio !== null && Math.abs(video.width / video.height / ratio - 1) > ASPECT_TOLERANCE;
  if (!lineMiss && !shapeMiss) return null;
  const found = `${video.width}x${video.height}`;
  if (lines !== null && ratio !== null) {
    // The longer side as a service makes it: to the nearest even number (854x480 for 16:9 at 480p).
    const long = 2 * Math.round((lines * Math.max(ratio, 1 / ratio)) / 2);
    const [width, height] = ratio >= 1 ? [long, lines] : [lines, long];
    return `${found}, ${width}x${height} asked for (${asked.orientation} at ${asked.definition})`;
  }
  if (lines !== null) return `${found}, a shorter side of ${lines} asked for (${asked.definition})`;
  return `${found}, ${asked.orientation} asked for`;
}

function orientationRatio(orientation: string): number | null {
  const [width = 0, height = 0] = orientation.split(':').map(Number);
  return width > 0 && height > 0 ? width / height : null;
}

function seconds(value: number): string {
  return `${Number(value.toFixed(3))} s`;
}
