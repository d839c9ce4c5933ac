import {
  type AttemptRecord,
  type FileRecord,
  type ItemRecord,
  type ItemSummary,
  type MoneyTotals,
  moneyTotalsOf,
  spentMicros,
  type TakeCheckRecord,
} from '../ledger/index.js';

/**
 * A ledger held in memory whole (`run` and `report` read it so), and the per-item summaries the
 * status document reads, made from it as the ledger's streamed read makes them.
 */

export interface LedgerView {
  items: ItemRecord[];
  attempts: AttemptRecord[];
  files: FileRecord[];
  /** Each take's check (docs/checks.md); left out: none checked. */
  checks?: readonly TakeCheckRecord[];
}

/** What summarizeView gives: the status document's source (status-report.ts, StatusSource). */
export interface ViewSummary {
  summaries: ItemSummary[];
  money: MoneyTotals;
  unsaved: AttemptRecord[];
}

/** A take as the summaries' JSON lists it. */
export interface SavedTake {
  take: number;
  job_id: string | null;
  net: number;
  files: string[];
}

/**
 * The attempt that holds each take's files, newest take first. An edited item regenerates within
 * its take, so the last saved attempt of a take is the one on disk.
 */
export function takesOf<A extends Pick<AttemptRecord, 'filesSaved' | 'take'>>(attempts: readonly A[]): A[] {
  const byTake = new Map<number, A>();
  for (const attempt of attempts) if (attempt.filesSaved) byTake.set(attempt.take ?? 1, attempt);
  return [...byTake.entries()].sort((a, b) => b[0] - a[0]).map(([, attempt]) => attempt);
}

/** The same source from a ledger held in memory whole (attempts in id order, as the ledger lists them). */
export function summarizeView(view: LedgerView): ViewSummary {
  const records = new Map(view.items.map((record) => [record.itemId, record]));
  const attemptsByItem = new Map<string, AttemptRecord[]>();
  for (const attempt of view.attempts) pushTo(attemptsByItem, attempt.itemId, attempt);
  const filesByAttempt = new Map<number, FileRecord[]>();
  for (const file of view.files) pushTo(filesByAttempt, file.attemptId, file);
  const ids = new Set([...records.keys(), ...attemptsByItem.keys()]);
  const summaries = [...ids].map((itemId): ItemSummary => {
    const record = records.get(itemId);
    const attempts = attemptsByItem.get(itemId) ?? [];
    const saved = attempts.findLast((attempt) => attempt.filesSaved);
    const files = saved ? (filesByAttempt.get(saved.id) ?? []) : [];
    return {
      itemId,
      state: record?.state ?? null,
      errorCode: record?.errorCode ?? null,
      errorMessage: record?.errorMessage ?? null,
      attempts: attempts.length,
      netMicros: spentMicros(moneyTotalsOf(attempts)),
      lastJobId: attempts.findLast((attempt) => attempt.jobId !== null)?.jobId ?? null,
      savedPaths: saved ? JSON.stringify(files.map((file) => file.path)) : null,
      takes: savedTakes(takesOf(attempts), filesByAttempt),
    };
  });
  return { summaries, money: moneyTotalsOf(view.attempts), unsaved: unsavedOf(view.attempts) };
}

/** Succeeded jobs whose files are not saved yet: the candidates of expiryWarnings. */
export function unsavedOf(attempts: readonly AttemptRecord[]): AttemptRecord[] {
  return attempts.filter(
    (attempt) => attempt.jobStatus === 'succeeded' && !attempt.filesSaved && attempt.expiresAt !== null,
  );
}

function savedTakes(takes: AttemptRecord[], filesByAttempt: Map<number, FileRecord[]>): string | null {
  if (takes.length < 2) return null;
  return JSON.stringify(
    takes.map(
      (attempt): SavedTake => ({
        take: attempt.take ?? 1,
        job_id: attempt.jobId,
        net: attempt.amountMicros - attempt.refundedMicros,
        files: (filesByAttempt.get(attempt.id) ?? []).map((file) => file.path),
      }),
    ),
  );
}

/** Grouping by push: at 100,000 items, a fresh array per row is garbage the peak RSS pays for. */
function pushTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}
