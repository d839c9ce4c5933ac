import type { AttemptRecord, ItemState, ShownCheck } from '../../ledger/index.js';
import type { HistoryAttempt } from '../render-text.js';
import type { LedgerView } from '../status-view.js';
import { checksByAttempt, type TakeAttempt } from './model.js';

/**
 * What the gallery reads of one ledger item (docs/gallery.md): its state and error, and every
 * attempt it made without the request it sent. The page is written as these stream past
 * (page-stream.ts), one item at a time, so a batch of 100,000 items is never held whole: a
 * request body is most of an attempt's weight, and the page shows none of it.
 */
export interface GalleryEntry {
  itemId: string;
  /** Null when only attempts know the item (shown as pending, as `status` does). */
  state: ItemState | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** By attempt number (seq). */
  attempts: GalleryAttempt[];
}

/** An attempt as the gallery shows it: a row of the attempts table, and a take when its files were saved. */
export interface GalleryAttempt
  extends HistoryAttempt,
    TakeAttempt,
    Pick<AttemptRecord, 'id' | 'filesSaved'> {
  /** Its files' paths (absolute, or s3:// URIs), in index order. */
  files: string[];
}

/**
 * The entries of a ledger held in memory whole, as the ledger's itemHistories streams them
 * (the page's tests build a page both ways): every item of `ids` in their order, then the other items the
 * ledger knows (attempts of items the manifest no longer lists), in id order.
 */
export function entriesOfView(view: LedgerView, ids: readonly string[]): GalleryEntry[] {
  const records = new Map(view.items.map((record) => [record.itemId, record]));
  const paths = new Map<number, string[]>();
  // In the view's order: listFiles gives them by attempt and index.
  for (const file of view.files) push(paths, file.attemptId, file.path);
  const attempts = new Map<string, GalleryAttempt[]>();
  const checks = checksByAttempt(view);
  for (const attempt of view.attempts)
    push(attempts, attempt.itemId, galleryAttempt(attempt, paths, checks.get(attempt.id) ?? null));
  const listed = new Set(ids);
  const others = [...new Set([...records.keys(), ...attempts.keys()])].filter((id) => !listed.has(id));
  return [...ids, ...others.sort()].map((itemId) => {
    const record = records.get(itemId);
    return {
      itemId,
      state: record?.state ?? null,
      errorCode: record?.errorCode ?? null,
      errorMessage: record?.errorMessage ?? null,
      attempts: (attempts.get(itemId) ?? []).sort((a, b) => a.seq - b.seq),
    };
  });
}

/** A whole attempt record reduced to what the gallery reads: its request body is dropped here. */
function galleryAttempt(
  attempt: AttemptRecord,
  paths: Map<number, string[]>,
  check: ShownCheck | null,
): GalleryAttempt {
  return {
    id: attempt.id,
    itemId: attempt.itemId,
    seq: attempt.seq,
    take: attempt.take ?? 1,
    idempotencyKey: attempt.idempotencyKey,
    state: attempt.state,
    httpStatus: attempt.httpStatus,
    jobId: attempt.jobId,
    jobStatus: attempt.jobStatus,
    amountMicros: attempt.amountMicros,
    refundedMicros: attempt.refundedMicros,
    errorCode: attempt.errorCode,
    errorMessage: attempt.errorMessage,
    filesSaved: attempt.filesSaved,
    createdAt: attempt.createdAt,
    completedAt: attempt.completedAt,
    files: paths.get(attempt.id) ?? [],
    check,
  };
}

function push<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}
