import { createHash } from 'node:crypto';
import { parseUsd } from '../money.js';

/**
 * Every random decision is a hash of the seed and of what identifies the decision (workspace,
 * Idempotency-Key, attempt number, purpose) rather than the next number of one shared stream.
 * That keeps faults reproducible for a given seed even when a client sends requests concurrently
 * and in a different order from one run to the next.
 */
export function draw(seed: string | number, ...parts: Array<string | number>): number {
  const digest = createHash('sha256')
    .update(`${seed}\u0000${parts.join('\u0000')}`)
    .digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Picks a code from `{code: rate}` with one uniform draw, or null for "no fault". */
export function pickCode(rates: Record<string, number>, u: number): string | null {
  let edge = 0;
  for (const code of Object.keys(rates).sort()) {
    edge += rates[code] ?? 0;
    if (u < edge) return code;
  }
  return null;
}

/**
 * Prompt markers force a fault for one item, written anywhere in `input.prompt`:
 *
 *   [[fail:<code>]]      the job is accepted, then fails with <code> (`canceled` ends it canceled)
 *   [[reject:<code>]]    the POST answers 202 with a job already failed with <code>
 *   [[500-before]]       the POST answers 500 before any job is stored
 *   [[500-after]]        the job is stored and charged, then the POST answers 500
 *   [[drop-before]]      the connection is destroyed without an answer, nothing stored
 *   [[drop-after]]       the job is stored and charged, then the connection is destroyed
 *   [[cut-download]]     a download of the job's file sends half of the body, then drops
 *   [[no-refund]]        the job fails or is canceled (by another marker or a rate) and is left
 *                        charged: its refund never comes, against the spec's rule
 *   [[url-expired]]      a download of the job's file answers 403 url_expired, as a signed URL
 *                        past its lifetime does (use a count: `[[url-expiredx1]]`)
 *   [[short-body]]       a download sends the whole file, but its Content-Length promises twice
 *                        as much; the server closes the connection once the body is out
 *   [[long-body]]        a download sends the whole file in chunked encoding, but its
 *                        Content-Length promises only half of it
 *   [[short-clip]]       the job succeeds with a clip half as long as the seconds asked for
 *   [[wrong-size]]       the job succeeds with a clip of half the width and height asked for
 *   [[truncated]]        the job succeeds with a file cut in the middle of its frames (the
 *                        download is whole: its Content-Length is the cut file's)
 *   [[run:<seconds>]]    the job runs for exactly that long (decimal seconds)
 *   [[queued:<seconds>]] the job stays queued for exactly that long before it runs
 *   [[cost:<usd>]]       the job costs exactly that (decimal string), whatever the input
 *
 * Every fault marker takes an optional count suffix `xN` (`[[fail:model_busyx2]]`,
 * `[[500-beforex1]]`): only the first N occurrences for that exact prompt text are affected, so
 * that a retry or resubmission eventually goes through. Occurrences are counted per created job
 * for fail/reject, per succeeded job for short-clip, wrong-size and truncated, per failed or canceled job for no-refund, per POST for 500/drop, and per download for cut-download, url-expired,
 * short-body and long-body.
 */
export type MarkerKind =
  | 'fail'
  | 'reject'
  | 'no-refund'
  | '500-before'
  | '500-after'
  | 'drop-before'
  | 'drop-after'
  | 'cut-download'
  | 'url-expired'
  | 'short-body'
  | 'long-body'
  | 'short-clip'
  | 'wrong-size'
  | 'truncated';

export interface FaultMarker {
  kind: MarkerKind;
  code: string | null;
  /** null: every occurrence. */
  times: number | null;
}

export interface PromptMarkers {
  faults: FaultMarker[];
  runSeconds: number | null;
  queuedSeconds: number | null;
  costMicros: number | null;
}

const FAULT_MARKER =
  /\[\[(?:(fail|reject):([a-z_]+)|(no-refund|500-before|500-after|drop-before|drop-after|cut-download|url-expired|short-body|long-body|short-clip|wrong-size|truncated))(?:x(\d+))?\]\]/g;
const RUN_MARKER = /\[\[run:(\d+(?:\.\d+)?)\]\]/;
const QUEUED_MARKER = /\[\[queued:(\d+(?:\.\d+)?)\]\]/;
const COST_MARKER = /\[\[cost:(\d+(?:\.\d{1,6})?)\]\]/;

export function parseMarkers(prompt: string): PromptMarkers {
  const faults: FaultMarker[] = [];
  for (const match of prompt.matchAll(FAULT_MARKER)) {
    const kind = (match[1] ?? match[3]) as MarkerKind;
    faults.push({ kind, code: match[2] ?? null, times: match[4] === undefined ? null : Number(match[4]) });
  }
  const run = RUN_MARKER.exec(prompt);
  const queued = QUEUED_MARKER.exec(prompt);
  const cost = COST_MARKER.exec(prompt);
  return {
    faults,
    runSeconds: run ? Number(run[1]) : null,
    queuedSeconds: queued ? Number(queued[1]) : null,
    costMicros: cost ? parseUsd(cost[1] ?? '') : null,
  };
}

/** Counts marker occurrences per exact prompt text, so that `xN` limits hold across keys and jobs. */
export class MarkerCounter {
  readonly #seen = new Map<string, number>();
  readonly #onCount: (name: string, value: number) => void;

  constructor(onCount: (name: string, value: number) => void = () => {}) {
    this.#onCount = onCount;
  }

  entries(): Array<[string, number]> {
    return [...this.#seen];
  }

  restore(name: string, value: number): void {
    this.#seen.set(name, value);
  }

  /**
   * Registers one occurrence of `kind` for `prompt` and returns the marker to apply, if any:
   * the first marker of that kind whose count is not used up.
   */
  take(prompt: string, markers: PromptMarkers, kind: MarkerKind): FaultMarker | null {
    const marker = markers.faults.find((candidate) => candidate.kind === kind);
    if (!marker) return null;
    const key = `${kind}\u0000${prompt}`;
    const occurrence = (this.#seen.get(key) ?? 0) + 1;
    this.#seen.set(key, occurrence);
    this.#onCount(key, occurrence);
    return marker.times === null || occurrence <= marker.times ? marker : null;
  }
}
