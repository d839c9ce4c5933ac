import type { FileProblems, ItemFiles } from '../../documents/file-problems.js';
import { checkSavedFile } from '../../downloads/saved-file-check.js';
import type { ReadingLedger, ReusableTake, SavedFileFacts } from '../../ledger/index.js';

/**
 * Each item's saved output checked against the disk for `status` and `plan`: one stat per file
 * (size and modification time), or with `verify` its SHA-256 as well. Only what is not as saved
 * is kept, so 100,000 intact items cost 100,000 stats and no memory. An object in a bucket is
 * left to `run`, which asks the bucket (a HEAD each): these commands make no request.
 */
export async function savedFileProblems(ledger: ReadingLedger, verify: boolean): Promise<FileProblems> {
  const found = new Map<string, ItemFiles>();
  for await (const facts of ledger.savedFileFacts()) judgeSavedFile(found, facts, verify);
  return found;
}

/** The same for these items only (a page of a manifest's, as a streamed command walks it). */
export async function savedFileProblemsOf(
  ledger: ReadingLedger,
  itemIds: readonly string[],
  verify: boolean,
): Promise<FileProblems> {
  const found = new Map<string, ItemFiles>();
  for (const facts of await ledger.savedFileFactsOf(itemIds)) judgeSavedFile(found, facts, verify);
  return found;
}

function judgeSavedFile(found: Map<string, ItemFiles>, facts: SavedFileFacts, verify: boolean): void {
  if (facts.path.includes('://')) return;
  const judged = checkSavedFile(facts.path, facts, verify);
  if (judged.check === 'intact') return;
  let item = found.get(facts.itemId);
  if (item === undefined) {
    const { savedAt, jobId, expiresAt } = facts;
    item = { problems: [], savedAt, jobId, expiresAt };
    found.set(facts.itemId, item);
  }
  item.problems.push({ path: facts.path, problem: judged.check, detail: judged.detail });
}

/**
 * Whether a saved take that another item could reuse (report/plan-reuses.ts) is still as saved, by
 * the same check: its size (with `verify`, its SHA-256). `run` reads every byte before it copies;
 * an object in a bucket is left to it, as above.
 */
export function takeIsThere(verify: boolean): (take: ReusableTake) => boolean {
  return (take) =>
    take.files.every(
      (file) =>
        file.path.includes('://') ||
        checkSavedFile(file.path, { bytes: file.bytes, sha256: file.sha256, mtimeMs: null }, verify).check ===
          'intact',
    );
}
