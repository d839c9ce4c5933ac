/**
 * The summary form of `status` and `plan` (docs/commands.md, "Summaries"): counts, money and
 * problems, with a few examples of each group, in a few dozen lines whatever the batch's size.
 * The default for a batch of more than SUMMARY_ABOVE items, where a line per item is more than a
 * person reads; `--full` lists every item, `--json` is the whole document either way.
 */
import { cleanText } from './clean-text.js';
import {
  countsLine,
  footer,
  keeperLine,
  type LedgerNote,
  moneyLine,
  outsideKeeperLines,
  riskLines,
  savedFileLines,
} from './render-text.js';
import type { StatusItem } from './status-line.js';
import type { StatusReport } from './status-report.js';

/** Above this many items, `status` and `plan` print their summary unless asked for --full. */
export const SUMMARY_ABOVE = 1000;

/** Examples named per group: enough to find the pattern, few enough to keep one line. */
export const SUMMARY_EXAMPLES = 3;
const EXAMPLES = SUMMARY_EXAMPLES;

/** Whether the text form is the summary: asked for, or the default above SUMMARY_ABOVE items. */
export function wantsSummary(items: number, asked: { summary?: boolean; full?: boolean }): boolean {
  if (asked.full) return false;
  return asked.summary === true || items > SUMMARY_ABOVE;
}

/**
 * One line per group, largest first: `  label: count, e.g. a, b, c`. `groupOf` gives an item's
 * group (null: not shown), `shown` how an example reads.
 */
export function groupLines<T>(
  items: Iterable<T>,
  groupOf: (item: T) => string | null,
  shown: (item: T) => string,
): string[] {
  const groups = new Groups<T>(groupOf, shown);
  for (const item of items) groups.add(item);
  return groups.lines();
}

/** groupLines an item at a time, for a renderer that reads its items once for several things. */
export class Groups<T> {
  readonly #groups = new Map<string, { count: number; examples: string[] }>();

  constructor(
    private readonly groupOf: (item: T) => string | null,
    private readonly shown: (item: T) => string,
  ) {}

  add(item: T): void {
    const group = this.groupOf(item);
    if (group === null) return;
    const entry = this.#groups.get(group) ?? { count: 0, examples: [] };
    this.#groups.set(group, entry);
    entry.count += 1;
    if (entry.examples.length < EXAMPLES) entry.examples.push(cleanText(this.shown(item)));
  }

  lines(): string[] {
    return [...this.#groups]
      .sort(([, a], [, b]) => b.count - a.count)
      .map(([group, { count, examples }]) => {
        const more = count > examples.length ? ', ...' : '';
        return `  ${group}: ${count}, e.g. ${examples.join(', ')}${more}`;
      });
  }
}

/** At most `listed` lines of `lines`, then how many were left out. */
export function firstLines(lines: readonly string[], listed: number): string[] {
  if (lines.length <= listed) return [...lines];
  return [...lines.slice(0, listed), `  ... and ${lines.length - listed} more (--full or --json lists all)`];
}

/** `status` in a few dozen lines: counts, money, each state but done with examples, file problems. */
export function* statusSummaryChunks(
  report: StatusReport<Iterable<StatusItem>>,
  ledger: LedgerNote & { sandboxLedger?: string },
  saveCommand = 'mediabatch run',
  sandboxCommand = 'mediabatch status --sandbox',
): Generator<string> {
  yield riskLines(report.value_at_risk, saveCommand, true);
  yield `${countsLine(report)}\n${moneyLine(report.totals)}\n`;
  const groups = groupLines(
    report.items,
    (item) => (item.state === 'done' && item.check?.outcome !== 'failed' ? null : groupName(item)),
    (item) => (item.error === null ? item.id : `${item.id} (${item.error.code})`),
  );
  if (groups.length > 0) yield `items not done, by state:\n${groups.join('\n')}\n`;
  yield savedFileLines(report, EXAMPLES);
  yield riskLines(report.value_at_risk, saveCommand, false);
  yield keeperLine(report.without_keeper);
  yield firstLines(outsideKeeperLines(report.keepers_outside_manifest).split('\n').filter(Boolean), EXAMPLES)
    .map((line) => `${line}\n`)
    .join('');
  yield footer(firstLines(report.warnings, EXAMPLES), ledger);
  yield `${report.totals.items} items summarised: --full lists every one, --json gives the whole document\n`;
  if (ledger.sandboxLedger)
    yield `a sandbox run of ${report.manifest} keeps its ledger at ${ledger.sandboxLedger}: add --sandbox to read it (${sandboxCommand})\n`;
}

function groupName(item: StatusItem): string {
  const state = item.state.replace(/_/g, ' ');
  if (item.state === 'done') return 'done, check failed';
  return item.error === null ? state : `${state}: ${item.error.code}`;
}
