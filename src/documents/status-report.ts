import type { ItemSummary } from '../ledger/item-summaries.js';
import { budgetLeftMicros, spentMicros } from '../ledger/money-totals.js';
import { type AttemptRecord, type ItemState, type MoneyTotals, zeroCounts } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatUsd } from '../money.js';
import {
  countProblems,
  type FileProblemCounts,
  type FileProblems,
  type ShownFileProblem,
  shownProblems,
} from './file-problems.js';
import type { KeeperOutsideManifest } from './kept-records.js';
import { type OnRequest, onRequestOf } from './on-request.js';
import type { RejectedRecord } from './rejected-records.js';
import { shownFrom } from './shown-path.js';
import { type LedgerView, type SavedTake, summarizeView } from './status-view.js';
import { type ValueAtRisk, valueAtRisk } from './value-at-risk.js';

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
  /** Its saved files that are missing, altered or modified since saved; present only then. */
  file_problems?: ShownFileProblem[];
  /** For an item rendered from a template: its prompt as the manifest sends it, and its variables. */
  prompt?: string;
  vars?: Record<string, unknown>;
  /** The option of run that alone sends it again (on-request.ts); present only then. */
  paid_only_by?: OnRequest;
  /** The check of the take its files are (docs/checks.md); present once that take was checked. */
  check?: TakeCheckShown;
}

/** A take's check as the status document shows it. */
export interface TakeCheckShown {
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  /** The lowest score a check of your own gave the take; absent when none gave one. */
  score?: number;
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
    /** Items none of whose takes passed the checks of their output (docs/checks.md). */
    checks_failed: number;
    spent_usd: string;
    refunded_usd: string;
    charged_usd: string;
    reserved_usd: string;
    budget_usd: string | null;
    budget_left_usd: string | null;
  } & FileProblemCounts;
  /**
   * How saved files were checked: one stat each (`stat`), or their content read (`sha256`,
   * --verify); null when this document did not look at them (a run's own, which verified them).
   */
  file_check: FileCheckMode | null;
  /** Outputs paid for and not saved yet (value-at-risk.ts). */
  value_at_risk: ValueAtRisk;
  items: StatusItem[];
  warnings: string[];
  /** Manifest items asking for more than one variant with no keeper yet (`mediabatch keep`). */
  without_keeper?: string[];
  /** Keepers whose variant or item the manifest no longer asks for (docs/gallery.md, "Keepers"). */
  keepers_outside_manifest?: KeeperOutsideManifest[];
  /** Requests moderation rejected, not sent again (docs/manifest.md, "Fallback prompts"); absent: none. */
  rejected?: RejectedRecord[];
}

export type FileCheckMode = 'stat' | 'sha256';

const SIX_HOURS_MS = 6 * 60 * 60 * 1000;

/**
 * What the status document is computed from: one summary per item (any order), the money sums
 * and the succeeded jobs whose files are not saved yet. `status` reads it from SQLite row by row;
 * `run` and `report`, which hold the whole ledger anyway, derive it with summarizeView.
 */
export interface StatusSource {
  summaries: Iterable<ItemSummary>;
  money: MoneyTotals;
  unsaved: readonly AttemptRecord[];
  /** Items whose saved files are not as saved, by id; absent: the files were not looked at. */
  fileProblems?: FileProblems;
  fileCheck?: FileCheckMode;
  /** Each checked take's check, by its job (docs/checks.md); absent: not read. */
  checks?: ReadonlyMap<string, TakeCheckShown>;
}

/** The document `status --json` prints, from the manifest and the ledger alone (pure). */
export function buildStatusReport(manifest: Manifest, view: LedgerView, now: number): StatusReport {
  return buildStatus(manifest, summarizeView(view), now);
}

/** StatusSource as a ledger that streams gives it: the summaries go past one at a time. */
export type StatusReads = Omit<StatusSource, 'summaries'> & { summaries: AsyncIterable<ItemSummary> };

export function buildStatus(manifest: Manifest, source: StatusSource, now: number): StatusReport {
  const placed = placeSummaries(manifest);
  for (const summary of source.summaries) placed.add(summary);
  return statusOf(manifest, placed.items, source, now);
}

export async function buildStatusStreamed(
  manifest: Manifest,
  source: StatusReads,
  now: number,
): Promise<StatusReport> {
  const placed = placeSummaries(manifest);
  for await (const summary of source.summaries) placed.add(summary);
  return statusOf(manifest, placed.items, source, now);
}

/** Each summary in its item's place in the manifest; a summary of an item no longer listed is dropped. */
function placeSummaries(manifest: Manifest): { items: StatusItem[]; add: (summary: ItemSummary) => void } {
  const shown = shownFrom(manifest.file);
  const position = new Map<string, number>();
  manifest.items.forEach((item, index) => {
    position.set(item.id, index);
  });
  const items = new Array<StatusItem>(manifest.items.length);
  return {
    items,
    add: (summary) => {
      const index = position.get(summary.itemId);
      if (index !== undefined) items[index] = statusItem(summary, shown);
    },
  };
}

function statusOf(
  manifest: Manifest,
  items: StatusItem[],
  source: Omit<StatusSource, 'summaries'>,
  now: number,
): StatusReport {
  const shown = shownFrom(manifest.file);
  const counts: Record<ItemState, number> = zeroCounts();
  const problems = source.fileProblems;
  manifest.items.forEach((item, index) => {
    const entry = items[index] ?? statusItem(emptySummary(item.id), shown);
    if (item.vars) {
      entry.prompt = String(item.input.prompt);
      entry.vars = item.vars;
    }
    const files = problems?.get(item.id);
    if (files) entry.file_problems = shownProblems(files, now, shown);
    const check = entry.job_id === null ? undefined : source.checks?.get(entry.job_id);
    if (check) entry.check = check;
    items[index] = entry;
    counts[entry.state] += 1;
  });

  return {
    manifest: manifest.name,
    totals: statusTotals(
      manifest,
      counts,
      source.money,
      countProblems(problems && problems.size > 0 ? items : []),
    ),
    file_check: source.fileCheck ?? null,
    value_at_risk: valueAtRisk(source.unsaved, now),
    items,
    warnings: expiryWarnings(source.unsaved, now),
  };
}

/**
 * The totals from each state's count and the money sums: what `status` and the gallery (which
 * counts its items as they stream past, src/documents/gallery/page-stream.ts) both show.
 */
export function statusTotals(
  manifest: Pick<Manifest, 'budgetMicros'>,
  counts: Readonly<Record<ItemState, number>>,
  money: MoneyTotals,
  problems: FileProblemCounts,
): StatusReport['totals'] {
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  return {
    items: Object.values(counts).reduce((sum, count) => sum + count, 0),
    done: counts.done,
    failed: counts.failed,
    pending: counts.pending,
    in_flight: counts.in_flight,
    budget_exceeded: counts.budget_exceeded,
    expired: counts.expired,
    checks_failed: counts.checks_failed,
    spent_usd: formatUsd(spentMicros(money)),
    refunded_usd: formatUsd(money.refundedMicros),
    charged_usd: formatUsd(money.chargedMicros),
    reserved_usd: formatUsd(money.reservedMicros),
    budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
    budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
    ...problems,
  };
}

/** The error an item shows: none while it is done, pending or in flight, or when it has no code. */
export function shownError(
  state: ItemState,
  code: string | null,
  message: string | null,
): StatusItem['error'] {
  return state === 'done' || !code || state === 'pending' || state === 'in_flight'
    ? null
    : { code, message: message ?? '' };
}

/**
 * Succeeded jobs whose files are not saved yet and expire within six hours: `status` and `plan`
 * both warn of them, in these words.
 */
export function expiryWarnings(unsaved: readonly AttemptRecord[], now: number): string[] {
  const warnings: string[] = [];
  for (const attempt of unsaved) {
    if (attempt.jobStatus === 'succeeded' && !attempt.filesSaved && attempt.expiresAt !== null) {
      const left = Date.parse(attempt.expiresAt) - now;
      if (left > 0 && left <= SIX_HOURS_MS) {
        warnings.push(
          `${attempt.itemId}: finished output not saved yet expires in ${Math.ceil(left / 60_000)} min (${attempt.expiresAt}); run mediabatch run now`,
        );
      }
    }
  }
  return warnings;
}

function statusItem(summary: ItemSummary, shown: (path: string) => string): StatusItem {
  const state = summary.state ?? 'pending';
  const paths = summary.savedPaths === null ? [] : (JSON.parse(summary.savedPaths) as string[]);
  const item: StatusItem = {
    id: summary.itemId,
    state,
    job_id: summary.lastJobId,
    attempts: summary.attempts,
    cost_usd: formatUsd(summary.netMicros),
    files: paths.map(shown),
    error: shownError(state, summary.errorCode, summary.errorMessage),
  };
  const onRequest = onRequestOf(state, summary.errorCode);
  if (onRequest) item.paid_only_by = onRequest;
  // Added last, as the last key; most items have one take and no such key.
  const takes = summary.takes === null ? [] : (JSON.parse(summary.takes) as SavedTake[]);
  if (takes.length > 1) {
    item.takes = takes.map((take) => ({
      take: take.take,
      job_id: take.job_id,
      cost_usd: formatUsd(take.net),
      files: take.files.map(shown),
    }));
  }
  return item;
}

function emptySummary(itemId: string): ItemSummary {
  return {
    itemId,
    state: null,
    errorCode: null,
    errorMessage: null,
    attempts: 0,
    netMicros: 0,
    lastJobId: null,
    savedPaths: null,
    takes: null,
  };
}
