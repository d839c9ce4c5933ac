import type { ItemState, ItemSummary } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { formatUsd } from '../money.js';
import { type FileProblems, type ShownFileProblem, shownProblems } from './file-problems.js';
import { type OnRequest, onRequestOf } from './on-request.js';
import type { SavedTake } from './status-view.js';

/** One item of the status document, as `status` shows it, and how each is made from its summary. */

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

/**
 * One manifest item's line: its summary (none: the ledger does not know it), its prompt and
 * variables, its saved files not as saved and its take's check. A streamed status makes each as
 * its chunk goes past (commands/status/status-stream.ts).
 */
export function statusLine(
  item: ManifestItem,
  summary: ItemSummary | undefined,
  source: { fileProblems?: FileProblems; checks?: ReadonlyMap<string, TakeCheckShown> },
  now: number,
  shown: (path: string) => string,
): StatusItem {
  const entry = statusItem(summary ?? emptySummary(item.id), shown);
  if (item.vars) {
    entry.prompt = String(item.input.prompt);
    entry.vars = item.vars;
  }
  const files = source.fileProblems?.get(item.id);
  if (files) entry.file_problems = shownProblems(files, now, shown);
  const check = entry.job_id === null ? undefined : source.checks?.get(entry.job_id);
  if (check) entry.check = check;
  return entry;
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
