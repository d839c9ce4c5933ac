import { savedFileProblemsOf } from '../../batch/ledger/saved-file-problems.js';
import type { StreamedManifest } from '../../batch/resolve/streamed-manifest.js';
import { addProblemCounts, countProblems, type FileProblemCounts } from '../../documents/file-problems.js';
import { shownFrom } from '../../documents/shown-path.js';
import { SpooledItems } from '../../documents/spooled-items.js';
import { type StatusItem, statusLine, type TakeCheckShown } from '../../documents/status-line.js';
import { type StatusReport, statusReportOf } from '../../documents/status-report.js';
import {
  type ItemState,
  type MoneyTotals,
  type ReadingLedger,
  type RecordReads,
  shownCheck,
  zeroCounts,
} from '../../ledger/index.js';
import type { ManifestRead } from '../../manifest/index.js';

/**
 * The status of a manifest too large to hold (docs/performance.md, "Issue 53"): the document
 * status-report.ts makes of a manifest held whole, made in one read of the manifest a chunk of
 * items at a time, each chunk's summaries and saved files read from the ledger for its ids alone
 * (one walk: items, their attempts and the files their outputs stand on, a page at a time). The
 * lines wait in a spool until the totals, which come before them, are known; what is held across
 * the walk is the ids (for their uniqueness) and the counts.
 */
export interface StreamedStatus {
  report: StatusReport<SpooledItems<StatusItem>>;
  read: ManifestRead;
}

const NO_MONEY: MoneyTotals = { chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 };

export async function statusStreamed(
  manifest: StreamedManifest,
  ledger: (RecordReads & ReadingLedger) | null,
  verify: boolean,
  now: number,
): Promise<StreamedStatus> {
  const source = {
    money: (await ledger?.moneyTotals()) ?? NO_MONEY,
    unsaved: (await ledger?.unsavedSucceeded()) ?? [],
    fileCheck: verify ? ('sha256' as const) : ('stat' as const),
    checks: await checksOf(ledger),
  };
  const shown = shownFrom(manifest.file);
  const counts: Record<ItemState, number> = zeroCounts();
  let problems: FileProblemCounts = { files_missing: 0, files_altered: 0, files_touched: 0 };
  const spool = new SpooledItems<StatusItem>();
  const { chunks, read } = manifest.readItems();
  try {
    for await (const items of chunks) {
      const ids = items.map((item) => item.id);
      const summaries = ledger === null ? new Map() : await ledger.itemSummariesOf(ids);
      const fileProblems = ledger === null ? undefined : await savedFileProblemsOf(ledger, ids, verify);
      const lines = items.map((item) =>
        statusLine(item, summaries.get(item.id), { ...source, fileProblems }, now, shown),
      );
      for (const line of lines) {
        counts[line.state] += 1;
        spool.add(line);
      }
      problems = addProblemCounts(problems, countProblems(lines));
    }
  } catch (error) {
    spool.close();
    throw error;
  }
  return { report: statusReportOf(manifest, spool, { counts, problems }, source, now), read };
}

/** Each checked take's check, by its job (docs/checks.md). */
async function checksOf(ledger: RecordReads | null): Promise<ReadonlyMap<string, TakeCheckShown>> {
  const checks = (await ledger?.takeChecks()) ?? [];
  return new Map(checks.flatMap((check) => (check.jobId ? [[check.jobId, shownCheck(check)] as const] : [])));
}
