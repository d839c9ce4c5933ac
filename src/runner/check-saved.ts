import type { SavedFile } from '../downloads/save-job-files.js';
import type { VideoFacts } from '../downloads/video-facts.js';
import type { AttemptRecord, TakeCheckInput } from '../ledger/index.js';
import type { OutputStore } from '../storage/output-store.js';
import { askedFor, judgeTake, judgeVideo, type TakeCheck, withOwnChecks } from './output-check.js';
import { type OwnChecks, runOwnChecks } from './own-checks.js';

/**
 * A saved take checked against the request its attempt sent (docs/checks.md): each file read as a
 * video through the store, judged by output-check.ts. A file that cannot be read at all (a store
 * error) is left unchecked, never failed: the take is paid for and saved, and the next
 * `mediabatch check` reads it again.
 */
export async function checkSavedTake(
  store: OutputStore,
  attempt: Pick<AttemptRecord, 'requestBody'>,
  files: ReadonlyArray<Pick<SavedFile, 'path' | 'bytes'>>,
  toleranceSeconds: number,
): Promise<TakeCheck> {
  const asked = askedFor(attempt.requestBody);
  const checks = await Promise.all(
    files.map(async (file) => {
      const facts = await store.videoFacts(file.path, file.bytes).catch(
        (error: unknown): VideoFacts => ({
          kind: 'unread',
          reason: `it could not be read: ${error instanceof Error ? error.message : String(error)}`,
        }),
      );
      return judgeVideo(facts, asked, toleranceSeconds);
    }),
  );
  return judgeTake(checks);
}

/**
 * A saved take's whole check: the built-in one, then the checks of your own (own-checks.ts), which
 * may throw CheckCannotRun. What `run` does after each save and `mediabatch check` does again.
 * `toleranceSeconds` null: the built-in check is off (videoCheckTolerance); with no check of your
 * own either, nothing judges the take and null says so (no check is recorded).
 */
export async function checkTakeFully(
  store: OutputStore,
  attempt: Pick<AttemptRecord, 'requestBody' | 'itemId' | 'take'>,
  files: ReadonlyArray<Pick<SavedFile, 'path' | 'bytes'>>,
  toleranceSeconds: number | null,
  own: OwnChecks,
): Promise<TakeCheck | null> {
  if (toleranceSeconds === null && own.checks.length === 0) return null;
  const builtin =
    toleranceSeconds === null ? NOT_READ : await checkSavedTake(store, attempt, files, toleranceSeconds);
  if (builtin.outcome === 'failed' || own.checks.length === 0) return builtin;
  const take = { itemId: attempt.itemId, take: attempt.take ?? 1 };
  return withOwnChecks(builtin, await runOwnChecks(own, take, files));
}

/** The built-in check's place when it is off: the checks of your own alone decide (withOwnChecks). */
const NOT_READ: TakeCheck = { outcome: 'unchecked', reason: 'video_checks: false', video: null };

/** A check as the ledger records it. */
export function checkRecord(check: TakeCheck): TakeCheckInput {
  return {
    outcome: check.outcome,
    reason: check.reason,
    video: check.video ? JSON.stringify(check.video) : null,
    score: check.score ?? null,
    checks: check.own ? JSON.stringify(check.own) : null,
  };
}
