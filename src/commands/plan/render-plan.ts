import type { PlanDocument, PlanItem, PlanLabel } from '../../batch/plan/plan-report.js';
import { cleanText } from '../../documents/clean-text.js';
import { OnRequestNamed, onRequestLines } from '../../documents/on-request.js';
import {
  footer,
  humanUsdCached,
  keeperLine,
  type LedgerNote,
  outsideKeeperLines,
  riskLines,
  savedFileLines,
  tableChunks,
} from '../../documents/render-text.js';
import { firstLines, Groups, groupLines, SUMMARY_EXAMPLES } from '../../documents/summary-text.js';
import { humanUsd } from '../../money.js';

/**
 * `plan` for people, read like a Terraform plan: one row per item with a sign for what happens
 * to it (+ submitted, ~ changed and submitted again, or renamed (`~ old -> new`, nothing paid),
 * > resumed, = unchanged, ! skipped, - removed from the manifest), then stray files, the money, and the one summary line last.
 */

const WORDS: Record<PlanLabel, { sign: string; word: string }> = {
  new: { sign: '+', word: 'new' },
  changed: { sign: '~', word: 'changed' },
  retry: { sign: '+', word: 'retry' },
  redo: { sign: '+', word: 'new take' },
  renamed: { sign: '~', word: 'renamed' },
  reused: { sign: '=', word: 'reused (free)' },
  in_flight: { sign: '>', word: 'resume' },
  done: { sign: '=', word: 'unchanged (done)' },
  refetch: { sign: '>', word: 'fetch again (free)' },
  expired: { sign: '!', word: 'expired' },
  failed: { sign: '!', word: 'failed' },
  held_back: { sign: '!', word: 'held back' },
  blocked_by_budget: { sign: '!', word: 'blocked by budget' },
};

const LISTED = 20;

function itemRow(item: PlanItem, usd: (decimal: string) => string): string[] {
  const { sign, word } = WORDS[item.plan];
  const regenerated = item.plan === 'expired' && item.estimate_usd !== null;
  const because = item.changed_vars ? ` (variable ${item.changed_vars.join(', ')})` : '';
  const detail =
    item.plan === 'changed' && item.changed_fields?.length
      ? cleanText(`${item.changed_fields.join(', ')}${because}`)
      : cleanText(item.reason ?? (item.prompt === undefined ? '' : JSON.stringify(item.prompt)));
  const from = item.renamed_from === undefined ? '' : `${item.renamed_from} -> `;
  return [
    `${regenerated ? '+' : sign} ${from}${item.id}`,
    regenerated ? 'expired, again' : word,
    item.estimate_usd === null ? '' : usd(item.estimate_usd),
    detail,
  ];
}

function removedRows(doc: ShownPlan): string[][] {
  return doc.removed.map((item) => [
    `- ${item.id}`,
    'removed',
    '',
    item.files.length === 0
      ? `was ${item.state.replace(/_/g, ' ')}; no files saved`
      : `files kept: ${item.files.map(cleanText).join(', ')}`,
  ]);
}

function strayLines(doc: ShownPlan, listed = LISTED): string[] {
  const stray = doc.stray_files ?? [];
  if (stray.length === 0) return [];
  const more =
    stray.length > listed ? [`  ... and ${stray.length - listed} more (plan --json lists all)`] : [];
  return [
    'files in the output folder this ledger did not write (left as they are; run never overwrites them):',
    ...stray.slice(0, listed).map((path) => {
      const why = doc.stray_reasons?.[path];
      return `  ? ${cleanText(path)}${why === undefined ? '' : ` (${cleanText(why)})`}`;
    }),
    ...more,
    '',
  ];
}

function accountLine(doc: ShownPlan): string {
  const a = doc.account;
  if (!a) return 'account: not checked (pass --base-url or set MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY)';
  if (a.error)
    return `account (${cleanText(a.base_url)}): GET /account failed: ${cleanText(a.error.message)}`;
  return `account (${cleanText(a.base_url)}): wallet ${a.wallet_enabled ? 'enabled' : 'DISABLED'}, balance ${humanUsd(a.balance_usd)}, concurrency ${a.concurrency?.active}/${a.concurrency?.limit} active`;
}

/** A plan document, its items held whole or read back from a spool each time (documents/spooled-items.ts). */
type ShownPlan = PlanDocument<Iterable<PlanItem>>;

/**
 * `plan` for people, in chunks for writeChunks: at 100,000 items the table is never one string,
 * and a streamed plan's rows are made from its items as they are read back.
 */
export function* planTextChunks(
  doc: ShownPlan,
  ledger: LedgerNote,
  saveCommand = 'mediabatch run',
): Generator<string> {
  const usd = humanUsdCached();
  const rows = {
    *[Symbol.iterator]() {
      for (const item of doc.items) yield itemRow(item, usd);
      yield* removedRows(doc);
    },
  };
  yield riskLines(doc.value_at_risk, saveCommand, true);
  yield `${doc.manifest}: ${doc.totals.items} items\n`;
  yield* tableChunks(['ITEM', 'PLAN', 'EXPECTED', 'DETAIL'], rows);
  yield savedFileLines(doc);
  yield closingText(doc, ledger, saveCommand, onRequestLines(doc.items), {
    stray: strayLines(doc),
    warnings: doc.warnings,
  });
}

/**
 * `plan` in a few dozen lines (docs/commands.md, "Summaries"): what happens to how many items,
 * with a few of each, and what the full form says after its table, its lists cut to a few.
 */
export function* planSummaryChunks(
  doc: ShownPlan,
  ledger: LedgerNote,
  saveCommand = 'mediabatch run',
): Generator<string> {
  const usd = humanUsdCached();
  yield riskLines(doc.value_at_risk, saveCommand, true);
  // One read of the items for both: a streamed plan's are read back from a file each time.
  const groups = new Groups<PlanItem>(
    (item) => WORDS[item.plan].word,
    (item) => (item.estimate_usd === null ? item.id : `${item.id} ${usd(item.estimate_usd)}`),
  );
  const onRequest = new OnRequestNamed();
  for (const item of doc.items) {
    groups.add(item);
    onRequest.add(item);
  }
  const plans = groups.lines();
  const removed = groupLines(
    doc.removed,
    () => 'removed from the manifest',
    (item) => item.id,
  );
  yield `${doc.manifest}: ${doc.totals.items} items, by plan:\n${[...plans, ...removed].join('\n')}\n`;
  yield savedFileLines(doc, SUMMARY_EXAMPLES);
  yield closingText(doc, ledger, saveCommand, onRequest.lines(), {
    stray: strayLines(doc, SUMMARY_EXAMPLES),
    warnings: firstLines(doc.warnings, SUMMARY_EXAMPLES),
  });
  yield `${doc.totals.items} items summarised: --full lists every one, --json gives the whole document\n`;
}

/** What both forms say after the items: stray files, money, the account, keepers, the summary line. */
function closingText(
  doc: ShownPlan,
  ledger: LedgerNote,
  saveCommand: string,
  onRequest: readonly string[],
  shown: { stray: string[]; warnings: readonly string[] },
): string {
  const t = doc.totals;
  const budget =
    t.budget_usd === null
      ? 'no budget_usd'
      : `budget left ${humanUsd(t.budget_left_usd)} of ${humanUsd(t.budget_usd)}`;
  const lines = [
    ...shown.stray,
    ...onRequest,
    `spent so far ${humanUsd(t.spent_usd)} net of refunds (refunded ${humanUsd(t.refunded_usd)}), reserved ${humanUsd(t.reserved_usd)}, ${budget}`,
    accountLine(doc),
  ];
  const risk = riskLines(doc.value_at_risk, saveCommand, false);
  if (risk) lines.push(risk.trimEnd());
  if (doc.without_keeper?.length) lines.push(keeperLine(doc.without_keeper).trimEnd());
  if (doc.keepers_outside_manifest?.length)
    lines.push(outsideKeeperLines(doc.keepers_outside_manifest).trimEnd());
  if (doc.definition?.message) lines.push(doc.definition.message);
  return `\n${lines.join('\n')}\n${footer(shown.warnings, ledger)}\n${doc.summary}\n`;
}
