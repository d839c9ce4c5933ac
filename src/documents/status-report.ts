import {
  type AttemptRecord,
  budgetLeftMicros,
  type ItemState,
  type ItemSummary,
  type MoneyTotals,
  spentMicros,
  zeroCounts,
} from '../ledger/index.js';
import type { Manifest } from '../manifest/index.js';
import { formatUsd } from '../money.js';
import { countProblems, type FileProblemCounts, type FileProblems } from './file-problems.js';
import type { KeeperOutsideManifest } from './kept-records.js';
import type { RejectedRecord } from './rejected-records.js';
import { shownFrom } from './shown-path.js';
import { type StatusItem, statusLine, type TakeCheckShown } from './status-line.js';
import { type LedgerView, summarizeView } from './status-view.js';
import { type ValueAtRisk, valueAtRisk } from './value-at-risk.js';

/** `Items`: held whole, or a streamed status's, read back each time they are iterated (spooled-items.ts). */
export interface StatusReport<Items extends Iterable<StatusItem> = StatusItem[]> {
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
  items: Items;
  warnings: string[];
  /** Manifest items asking for more than one variant with no keeper yet (`mediabatch keep`). */
  without_keeper?: string[];
  /** Keepers whose variant or item the manifest no longer asks for (docs/gallery.md, "Keepers"). */
  keepers_outside_manifest?: KeeperOutsideManifest[];
  /** Requests moderation rejected, not sent again (docs/manifest.md, "Fallback prompts"); absent: none. */
  rejected?: RejectedRecord[];
}

export type FileCheckMode = 'stat' | 'sha256';
export type { StatusItem, StatusTake, TakeCheckShown } from './status-line.js';

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
  return statusOf(manifest, placed.summaries, source, now);
}

export async function buildStatusStreamed(
  manifest: Manifest,
  source: StatusReads,
  now: number,
): Promise<StatusReport> {
  const placed = placeSummaries(manifest);
  for await (const summary of source.summaries) placed.add(summary);
  return statusOf(manifest, placed.summaries, source, now);
}

/** Each summary in its item's place in the manifest; a summary of an item no longer listed is dropped. */
function placeSummaries(manifest: Manifest): {
  summaries: Array<ItemSummary | undefined>;
  add: (summary: ItemSummary) => void;
} {
  const position = new Map<string, number>();
  manifest.items.forEach((item, index) => {
    position.set(item.id, index);
  });
  const summaries = new Array<ItemSummary | undefined>(manifest.items.length);
  return {
    summaries,
    add: (summary) => {
      const index = position.get(summary.itemId);
      if (index !== undefined) summaries[index] = summary;
    },
  };
}

function statusOf(
  manifest: Manifest,
  summaries: ReadonlyArray<ItemSummary | undefined>,
  source: Omit<StatusSource, 'summaries'>,
  now: number,
): StatusReport {
  const shown = shownFrom(manifest.file);
  const counts: Record<ItemState, number> = zeroCounts();
  const items = manifest.items.map((item, index) => {
    const entry = statusLine(item, summaries[index], source, now, shown);
    counts[entry.state] += 1;
    return entry;
  });
  return statusReportOf(manifest, items, { counts, problems: countProblems(items) }, source, now);
}

/** The report from its items (held, or spooled) and what was counted of them as they were made. */
export function statusReportOf<Items extends Iterable<StatusItem>>(
  manifest: Pick<Manifest, 'name' | 'budgetMicros'>,
  items: Items,
  counted: { counts: Readonly<Record<ItemState, number>>; problems: FileProblemCounts },
  source: Pick<StatusSource, 'money' | 'unsaved' | 'fileCheck'>,
  now: number,
): StatusReport<Items> {
  return {
    manifest: manifest.name,
    totals: statusTotals(manifest, counted.counts, source.money, counted.problems),
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
