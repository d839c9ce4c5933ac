import { isAbsolute, relative } from 'node:path';
import { budgetLeftMicros, moneyTotalsOf, spentMicros } from '../ledger/money-totals.js';
import type { AttemptRecord, FileRecord, ItemRecord, ItemState } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatUsd } from '../money.js';

export interface StatusItem {
  id: string;
  state: ItemState;
  job_id: string | null;
  attempts: number;
  cost_usd: string;
  files: string[];
  error: { code: string; message: string } | null;
  /** Every take with saved files, newest first; present once the item has been redone. */
  takes?: StatusTake[];
}

export interface StatusTake {
  take: number;
  job_id: string | null;
  cost_usd: string;
  files: string[];
}

export interface StatusReport {
  manifest: string;
  totals: {
    items: number;
    done: number;
    failed: number;
    pending: number;
    in_flight: number;
    budget_exceeded: number;
    expired: number;
    spent_usd: string;
    refunded_usd: string;
    charged_usd: string;
    reserved_usd: string;
    budget_usd: string | null;
    budget_left_usd: string | null;
  };
  items: StatusItem[];
  warnings: string[];
}

export interface LedgerView {
  items: ItemRecord[];
  attempts: AttemptRecord[];
  files: FileRecord[];
}

const SIX_HOURS_MS = 6 * 60 * 60 * 1000;

/** The document `status --json` prints, from the manifest and the ledger alone (pure). */
export function buildStatusReport(manifest: Manifest, view: LedgerView, now: number): StatusReport {
  const records = new Map(view.items.map((record) => [record.itemId, record]));
  const attemptsByItem = new Map<string, AttemptRecord[]>();
  for (const attempt of view.attempts) {
    pushTo(attemptsByItem, attempt.itemId, attempt);
  }
  const filesByAttempt = new Map<number, FileRecord[]>();
  for (const file of view.files) pushTo(filesByAttempt, file.attemptId, file);
  const baseDir = manifest.file.replace(/[/\\][^/\\]*$/, '');
  const shown = (path: string) => {
    const rel = relative(baseDir, path);
    return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  };

  const counts: Record<ItemState, number> = {
    pending: 0,
    in_flight: 0,
    done: 0,
    failed: 0,
    budget_exceeded: 0,
    expired: 0,
  };
  const items = manifest.items.map((item): StatusItem => {
    const record = records.get(item.id);
    const attempts = attemptsByItem.get(item.id) ?? [];
    const state = record?.state ?? 'pending';
    counts[state] += 1;
    const last = attempts.findLast((attempt) => attempt.jobId !== null);
    const saved = attempts.findLast((attempt) => attempt.filesSaved);
    const takes = takesOf(attempts).map(
      (attempt): StatusTake => ({
        take: attempt.take ?? 1,
        job_id: attempt.jobId,
        cost_usd: formatUsd(attempt.amountMicros - attempt.refundedMicros),
        files: (filesByAttempt.get(attempt.id) ?? []).map((file) => shown(file.path)),
      }),
    );
    return {
      id: item.id,
      state,
      job_id: last?.jobId ?? null,
      attempts: attempts.length,
      cost_usd: formatUsd(spentMicros(moneyTotalsOf(attempts))),
      files: saved ? (filesByAttempt.get(saved.id) ?? []).map((file) => shown(file.path)) : [],
      error:
        state === 'done' || !record?.errorCode || state === 'pending' || state === 'in_flight'
          ? null
          : { code: record.errorCode, message: record.errorMessage ?? '' },
      ...(takes.length > 1 ? { takes } : {}),
    };
  });

  const money = moneyTotalsOf(view.attempts);
  const warnings: string[] = [];
  for (const attempt of view.attempts) {
    if (attempt.jobStatus === 'succeeded' && !attempt.filesSaved && attempt.expiresAt !== null) {
      const left = Date.parse(attempt.expiresAt) - now;
      if (left > 0 && left <= SIX_HOURS_MS) {
        warnings.push(
          `${attempt.itemId}: finished output not saved yet expires in ${Math.ceil(left / 60_000)} min (${attempt.expiresAt}); run mediabatch run now`,
        );
      }
    }
  }
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  return {
    manifest: manifest.name,
    totals: {
      items: items.length,
      done: counts.done,
      failed: counts.failed,
      pending: counts.pending,
      in_flight: counts.in_flight,
      budget_exceeded: counts.budget_exceeded,
      expired: counts.expired,
      spent_usd: formatUsd(spentMicros(money)),
      refunded_usd: formatUsd(money.refundedMicros),
      charged_usd: formatUsd(money.chargedMicros),
      reserved_usd: formatUsd(money.reservedMicros),
      budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
      budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
    },
    items,
    warnings,
  };
}

/**
 * The attempt that holds each take's files, newest take first. An edited item regenerates within
 * its take, so the last saved attempt of a take is the one on disk.
 */
export function takesOf(attempts: readonly AttemptRecord[]): AttemptRecord[] {
  const byTake = new Map<number, AttemptRecord>();
  for (const attempt of attempts) if (attempt.filesSaved) byTake.set(attempt.take ?? 1, attempt);
  return [...byTake.entries()].sort((a, b) => b[0] - a[0]).map(([, attempt]) => attempt);
}

/** Grouping by push: at 100,000 items, a fresh array per row is garbage the peak RSS pays for. */
function pushTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}
