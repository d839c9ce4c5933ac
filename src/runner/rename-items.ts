import { sep } from 'node:path';
import type { AttemptRecord, FileMove, FileRecord, RecordReads } from '../ledger/index.js';
import { isS3Uri, type ManifestItem, outputChild } from '../manifest/index.js';
import type { NameMove } from '../storage/output-store.js';
import { latestAttempts } from './item-plan.js';
import { sidecarFactsOf } from './provenance.js';
import { holdsPaidResult, pairRenames, type Rename, renamedFilePath } from './renames.js';
import { requestHash } from './request.js';
import type { RunContext } from './run-context.js';

/**
 * Before a run restores its items: each item renamed in the manifest with its request unchanged
 * (renames.ts) takes its paid result under the new id, and nothing is sent for it. Its files and
 * sidecars are given the new name first, the ledger follows in one step, then the old names go.
 * A new name held by a file this ledger did not write keeps the item back, renamed nowhere and
 * submitted never, as names-in-the-way does. Returns those held-back ids and how many moved.
 */
export async function adoptRenames(
  run: RunContext,
  items: readonly ManifestItem[],
): Promise<{ held: Set<string>; renamed: number }> {
  const { ledger, manifest, observer, store } = run.deps;
  const held = new Set<string>();
  const pairs = await renamesOf(ledger, manifest.items, items);
  if (pairs.length === 0) return { held, renamed: 0 };
  const attempts = await ledger.listAttempts();
  const files = await ledger.listFiles();
  let renamed = 0;
  for (const pair of pairs) {
    const item = items.find((each) => each.id === pair.to)!;
    const moves = fileMoves(item, manifest.outputDir, pair.from, attempts, files);
    try {
      await store.linkNewNames(moves);
    } catch (error) {
      held.add(pair.to);
      const why =
        (error as { code?: unknown }).code === 'EEXIST' ? 'in the way: ' : 'cannot move its files: ';
      observer.log(
        'error',
        `${pair.to}: not renamed from ${pair.from} and not submitted: ${why}${(error as Error).message}`,
      );
      continue;
    }
    await ledger.renameItem(pair.from, pair.to, moves);
    renamed += 1;
    observer.log('info', `${pair.from} -> ${pair.to}: renamed, the same request: nothing to pay`);
    // The ledger names the new files now; an old name left behind is only a second name for them.
    await store.dropOldNames(moves).catch((error: Error) => {
      observer.log('warn', `${pair.to}: could not remove an old name after the rename: ${error.message}`);
    });
    await rewriteSidecars(run, moves);
  }
  return { held, renamed };
}

/**
 * Every take's sidecar names the item: each is written again under the new id. The current take's
 * would be anyway when the run checks its saved files; the earlier takes' are never checked.
 */
async function rewriteSidecars(run: RunContext, moves: ReadonlyArray<FileMove & NameMove>): Promise<void> {
  const { ledger, manifest, observer, store } = run.deps;
  if (manifest.sidecars === false) return;
  for (const attemptId of new Set(moves.map((move) => move.attemptId))) {
    const attempt = await ledger.getAttempt(attemptId);
    const files = moves
      .filter((move) => move.attemptId === attemptId)
      .map((move) => ({ path: move.to, bytes: move.bytes, sha256: move.sha256 }));
    await store
      .ensureSidecars(
        await sidecarFactsOf(ledger, manifest.name, attempt, await run.keptMark(attempt)),
        files,
      )
      .catch((error: Error) => {
        observer.log('warn', `${attempt.itemId}: cannot rewrite its sidecar: ${error.message}`);
      });
  }
}

/** The pairs of this run: removed items holding a paid result, and `items` the ledger does not know. */
async function renamesOf(
  ledger: RecordReads,
  all: readonly ManifestItem[],
  items: readonly ManifestItem[],
): Promise<Rename[]> {
  const records = await ledger.listItems();
  const listed = new Set(all.map((item) => item.id));
  const unlisted = records.filter((record) => !listed.has(record.itemId));
  if (unlisted.length === 0) return [];
  const latest = latestAttempts(await ledger.listAttempts());
  const removed = unlisted.flatMap((record) => {
    const attempt = latest.get(record.itemId);
    return holdsPaidResult(record, attempt)
      ? [{ id: record.itemId, hash: record.requestHash, order: attempt.id }]
      : [];
  });
  if (removed.length === 0) return [];
  const known = new Set([...records.map((record) => record.itemId), ...latest.keys()]);
  const added = items
    .filter((item) => !known.has(item.id))
    .map((item) => ({ id: item.id, hash: requestHash(item) }));
  return pairRenames(removed, added);
}

/** Where each saved file of `from` goes under the new item's name; one that cannot say stays. */
function fileMoves(
  item: ManifestItem,
  outputDir: string,
  from: string,
  attempts: readonly AttemptRecord[],
  files: readonly FileRecord[],
): Array<FileMove & NameMove> {
  const base = outputChild(outputDir, item.name ?? item.id);
  return attempts
    .filter((attempt) => attempt.itemId === from)
    .flatMap((attempt) => {
      const own = files.filter((file) => file.attemptId === attempt.id);
      return own.map((file) => {
        // A file outside the output location (an output.dir changed since) stays where it is.
        const inside = file.path.startsWith(isS3Uri(outputDir) ? `${outputDir}/` : `${outputDir}${sep}`);
        const to = inside ? renamedFilePath(file, own.length, attempt.take ?? 1, base) : null;
        return {
          attemptId: attempt.id,
          idx: file.idx,
          from: file.path,
          to: to ?? file.path,
          bytes: file.bytes,
          sha256: file.sha256,
        };
      });
    });
}
