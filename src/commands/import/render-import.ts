import { relative } from 'node:path';
import { cleanText } from '../../documents/clean-text.js';
import { renderTable } from '../../documents/render-text.js';
import { formatUsd, humanUsd, parseUsdStrict } from '../../money.js';
import type { ImportResult } from './import-jobs.js';
import { importedItemState } from './import-plan.js';

export interface ImportSummary {
  manifest: string;
  ledger: string;
  since: string;
  listed: number;
  of_manifest: number;
  truncated: boolean;
  spent_usd: string;
  /** Outputs found on disk by their sidecars and recorded as saved, earlier takes included; none downloaded. */
  found_on_disk: number;
  /** Of those, how many were copied back from a `filesFrom` folder. */
  copied: number;
  items: Array<{
    id: string;
    state: string;
    job_id: string | null;
    job_status: string | null;
    error: string | null;
    jobs: number;
    files: string[];
    problem: string | null;
    /** Its files were found on disk (in place, or copied back), not downloaded. */
    on_disk: boolean;
  }>;
  unmatched: Array<{ job_id: string; item: string; reason: string; status: string }>;
}

/** The import's findings as one plain document (`--json` prints it as is). */
export function importSummary(
  result: ImportResult,
  context: { manifest: string; ledger: string; since: Date; listed: number; truncated: boolean },
): ImportSummary {
  let spent = 0;
  for (const { job } of result.plan.attempts)
    spent += parseUsdStrict(job.cost.amount_usd) - parseUsdStrict(job.cost.refunded_usd);
  return {
    manifest: context.manifest,
    ledger: context.ledger,
    since: context.since.toISOString(),
    listed: context.listed,
    of_manifest: result.plan.attempts.length,
    truncated: context.truncated,
    spent_usd: formatUsd(spent),
    found_on_disk: result.foundOnDisk,
    copied: result.copied,
    items: result.items.map((item) => ({
      id: item.itemId,
      state: item.jobs === 0 ? 'new' : importedItemState(item.job, item.save).state,
      job_id: item.job?.id ?? null,
      job_status: item.job?.status ?? null,
      error: item.job === null ? null : importedItemState(item.job, item.save).errorCode,
      jobs: item.jobs,
      files: item.files,
      problem: item.problem,
      on_disk: item.onDisk,
    })),
    unmatched: result.plan.unmatched.map(({ job, itemId, reason }) => ({
      job_id: job.id,
      item: itemId,
      reason,
      status: job.status,
    })),
  };
}

const REASONS: Record<string, string> = {
  unknown_item: 'no such item in the manifest',
  changed_request: 'made from an earlier version of the item',
};

function note(item: ImportSummary['items'][number], baseDir: string): string {
  if (item.jobs === 0) return 'no job found: the next run submits it';
  if (item.job_id === null) return 'only jobs of an earlier version: the next run submits it';
  if (item.files.length > 0)
    return `${item.on_disk ? 'found on disk' : 'saved'} ${item.files.map((file) => relative(baseDir, file)).join(', ')}`;
  if (item.problem !== null) return `not saved (${item.problem}): the next run retries`;
  if (item.state === 'in_flight') return 'the next run follows it';
  if (item.state === 'expired') return 'outputs already deleted by the service';
  if (item.state === 'failed') return `failed with ${item.error}: the next run decides as after any failure`;
  return '';
}

export function renderImportText(summary: ImportSummary, baseDir: string, command: string): string {
  const rows = summary.items.map((item) => [
    item.id,
    item.state,
    item.job_id ?? '-',
    item.job_status ?? '-',
    note(item, baseDir),
  ]);
  let text =
    `Imported ${summary.manifest}: ${summary.listed} job(s) listed since ${summary.since}, ` +
    `${summary.of_manifest} of this manifest, net spend ${humanUsd(summary.spent_usd)}.\n` +
    renderTable(
      ['item', 'state', 'adopted job', 'job status', ''],
      rows.map((row) => row.map(cleanText)),
    );
  if (summary.unmatched.length > 0) {
    text += `\n${summary.unmatched.length} job(s) of this manifest answer no current item (recorded for spend, not adopted):\n`;
    text += renderTable(
      ['job', 'item', 'status', 'why'],
      summary.unmatched.map((job) =>
        [job.job_id, job.item, job.status, REASONS[job.reason] ?? job.reason].map(cleanText),
      ),
    );
  }
  text += `\n${onDiskLine(summary)}\n`;
  if (summary.truncated)
    text += '\nwarning: the job list was cut at its page bound; older jobs of this manifest may be missing\n';
  const missing = summary.items.filter((item) => item.state !== 'done').length;
  text += `\nledger: ${summary.ledger}\n`;
  text += missing === 0 ? 'Every item is done.\n' : `Next: ${command} (it submits only what is missing)\n`;
  return text;
}

/** `3 outputs found on disk (sidecar and SHA-256 checked), 2 of them copied back; nothing downloaded for them.` */
function onDiskLine(summary: ImportSummary): string {
  const found = summary.found_on_disk;
  if (found === 0) return 'No output found on disk whose sidecar names an imported job.';
  const copied = summary.copied === 0 ? '' : `, ${summary.copied} of them copied back into the output folder`;
  return `${found} output${found === 1 ? '' : 's'} found on disk (sidecar and SHA-256 checked)${copied}: recorded as saved, not downloaded.`;
}
