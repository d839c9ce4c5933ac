import { priceTable } from '../../batch/ledger/cost-estimate.js';
import { finishPlan, SAVED_BEFORE_COMMIT_WORDS, withItems } from '../../batch/plan/plan-finish.js';
import type { AccountCheck, PlanDocument } from '../../batch/plan/plan-report.js';
import { CopiesCount } from '../../batch/plan-decisions/plan-copies.js';
import { decideOptionsOf } from '../../batch/plan-decisions/plan-decide-all.js';
import type { RenamedItem } from '../../batch/plan-decisions/plan-renames.js';
import type { StreamedManifest } from '../../batch/resolve/streamed-manifest.js';
import {
  addProblemCounts,
  countProblems,
  type FileProblemCounts,
  shownProblems,
} from '../../documents/file-problems.js';
import { shownFrom } from '../../documents/shown-path.js';
import { SpooledItems } from '../../documents/spooled-items.js';
import {
  type AttemptRecord,
  budgetLeftMicros,
  type ItemEntry,
  type ReadingLedger,
  type RecordReads,
  type SharedLedger,
  type TakeLedger,
} from '../../ledger/index.js';
import type { ManifestRead } from '../../manifest/index.js';
import { ChunkDecider } from './plan-chunk.js';
import {
  type PlanLedger,
  readPlanLedger,
  StreamedItemRules,
  type StreamedPlanInputs,
  type Survey,
} from './plan-stream-rules.js';

export type { StreamedPlanInputs } from './plan-stream-rules.js';

import { type PlanItem, PlanWalker } from '../../batch/plan-decisions/plan-walk.js';

/**
 * The plan of a manifest too large to hold (docs/performance.md, "Issue 53"): the same document
 * as plan-report.ts makes of a manifest held whole, made a chunk of items at a time. What the
 * plan must know of every item across the walk is kept compact (the ids, the count, what run
 * would acquire anyway), and each item's line goes to a spool as it is made (its totals come
 * before its items). A ledger that knows no item is planned in one read of the manifest; one that
 * does is first read through once (the survey: what the walk needs before its first item, such as
 * the items the manifest no longer lists), then again to make the lines.
 */

/** A streamed plan and what else the command says of it: the manifest's read (its ids, its warnings). */
export interface StreamedPlan {
  doc: PlanDocument<SpooledItems<PlanItem>>;
  read: ManifestRead;
}

/**
 * The plan; `checks` are run's pre-flight checks, made once the manifest was read through once
 * (with the items run would still try), before the lines are made: what GET /account said.
 */
export async function planStreamed(
  manifest: StreamedManifest,
  ledger: (RecordReads & ReadingLedger & TakeLedger & SharedLedger) | null,
  inputs: StreamedPlanInputs,
  checks: (waiting: number) => Promise<AccountCheck | null>,
): Promise<StreamedPlan> {
  const wide = await readPlanLedger(ledger);
  const nowMs = inputs.nowMs ?? Date.now();
  const options = decideOptionsOf(inputs, undefined, nowMs, wide.rejected, wide.failedTakes);
  const decider = new ChunkDecider(ledger, options, inputs.verify);
  // A ledger that knows no item has nothing the walk needs before its first item.
  const survey = wide.knowsItems ? await surveyItems(manifest, decider) : null;
  const rules = await StreamedItemRules.make(manifest, ledger, wide, survey, options, { ...inputs, nowMs });
  // run's checks once nothing can send this plan back to the manifest held whole (NotStreamable).
  const account = survey === null ? null : await checks(survey.waiting);
  const spool = new SpooledItems<PlanItem>();
  try {
    const walked = await walkLines(manifest, ledger, decider, rules, wide, nowMs, spool);
    const checked = survey === null ? await checks(walked.waiting) : account;
    const head = { ...manifest, warnings: walked.read.warnings() };
    const rest = finishPlan(
      head,
      { money: wide.money, unsaved: wide.unsaved, fileProblems: ledger === null ? undefined : new Map() },
      checked,
      nowMs,
      inputs,
      walked.found,
      { renamed: walked.renamed, removed: rules.removed(walked.renamed), foreign: rules.foreign },
    );
    return { doc: withItems(rest, spool), read: survey?.read ?? walked.read };
  } catch (error) {
    spool.close();
    throw error;
  }
}

async function surveyItems(manifest: StreamedManifest, decider: ChunkDecider): Promise<Survey> {
  const { chunks, read } = manifest.readItems();
  const survey: Survey = { read, unknown: 0, rows: 0, waiting: 0, wanting: false, acquired: [] };
  let position = 0;
  for await (const items of chunks) {
    const { decisions, entries } = await decider.decide(items);
    decisions.forEach((decision, index) => {
      const entry = entries[index];
      if (entry === undefined) survey.unknown += 1;
      else if (entry.record) survey.rows += 1;
      if (waitsForRun(entry)) survey.waiting += 1;
      if (StreamedItemRules.wants(decision)) survey.wanting = true;
      if (decision.label === 'refetch' || decision.label === 'in_flight')
        survey.acquired.push({ position, label: decision.label });
      position += 1;
    });
  }
  return survey;
}

const waitsForRun = (entry: ItemEntry | undefined) =>
  entry?.record?.state !== 'done' && entry?.record?.state !== 'failed';

/** The lines, each to the spool as it is made, and what the walk found besides. */
async function walkLines(
  manifest: StreamedManifest,
  ledger: RecordReads | null,
  decider: ChunkDecider,
  rules: StreamedItemRules,
  wide: PlanLedger,
  nowMs: number,
  spool: SpooledItems<PlanItem>,
) {
  const prices = ledger === null ? priceTable([]) : priceTable(await ledger.priceSamples());
  let earlier = new Map<number, AttemptRecord>();
  const walker = new PlanWalker(
    { prices: () => prices },
    budgetLeftMicros(manifest.budgetMicros, wide.money),
    wide.money.reservedMicros,
    (attempt) => earlier.get(attempt.id)?.requestBody,
    (attempt) => earlier.get(attempt.id)?.vars,
  );
  const shown = shownFrom(manifest.file);
  const copies = new CopiesCount();
  const renamed: RenamedItem[] = [];
  let problems: FileProblemCounts = { files_missing: 0, files_altered: 0, files_touched: 0 };
  let waiting = 0;
  let position = 0;
  // Read again after a survey, the items' ids are the survey's: held once.
  const { chunks, read } = manifest.readItems(undefined, rules.surveyed);
  for await (const items of chunks) {
    const decided = await decider.decide(items);
    earlier = await decider.earlier(decided.decisions);
    const lines = items.map((item, index) => {
      const entry = decided.entries[index];
      if (waitsForRun(entry)) waiting += 1;
      const decision = rules.decide(item, entry, decided.decisions[index]!, renamed);
      const line = walker.step(item, position++, decision);
      const files = decided.files?.get(item.id);
      if (files) line.file_problems = shownProblems(files, nowMs, shown);
      if (rules.savedEarly.has(item.id)) line.reason = SAVED_BEFORE_COMMIT_WORDS;
      copies.see(line);
      spool.add(line);
      return line;
    });
    problems = addProblemCounts(problems, countProblems(lines));
  }
  const found = {
    walk: walker.finish(),
    items: position,
    copies: copies.result(),
    problems,
    variants: false,
    heldBack: rules.heldBack?.warnings ?? [],
  };
  return { found, renamed, read, waiting };
}
