import type { SavedFile } from '../downloads/save-job-files.js';
import type { VideoFacts } from '../downloads/video-facts.js';
import type { TakeCheckInput } from '../ledger/ledger.js';
import type { AttemptRecord } from '../ledger/records.js';
import type { OutputStore } from '../storage/output-store.js';
import { askedFor, judgeTake, judgeVideo, type TakeCheck } from './output-check.js';

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

/** A check as the ledger records it. */
export function checkRecord(check: TakeCheck): TakeCheckInput {
  return {
    outcome: check.outcome,
    reason: check.reason,
    video: check.video ? JSON.stringify(check.video) : null,
  };
}
