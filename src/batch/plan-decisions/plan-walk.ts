import type { ShownFileProblem } from '../../documents/file-problems.js';
import type { OnRequest } from '../../documents/on-request.js';
import type { AttemptRecord } from '../../ledger/index.js';
import { type Manifest, type ManifestItem, submitOrder } from '../../manifest/index.js';
import { formatUsd, formatUsdHuman, type Micros } from '../../money.js';
import { type PricesSeen, pricesSeenOf } from '../../runner/budget.js';
import { shortfallWords } from '../../runner/budget-words.js';
import { estimateItem, type PriceTable } from '../ledger/cost-estimate.js';
import { BudgetWalk, mayFitWords } from './plan-budget.js';
import { changedFields, changedVars } from './plan-changes.js';
import { type Decision, PLAN_LABELS, type PlanLabel } from './plan-decisions.js';
import type { PlanSource } from './plan-source.js';

/** The exact request body an attempt sent, to name the fields an edited item changed. */
export type PreviousBody = (attempt: AttemptRecord) => string | undefined;
/** The template variables an attempt's prompt was rendered from (JSON text), to say why it changed. */
export type PreviousVars = (attempt: AttemptRecord) => string | null | undefined;

/**
 * The plan's walk over the manifest: each item's line, and the items to submit counted against
 * the budget in the order run queues them (submitOrder: variant 1 of every item, then variant 2),
 * spending the estimates (plan-budget.ts).
 */

export interface PlanItem {
  id: string;
  plan: PlanLabel;
  reason?: string;
  /** For a changed item: which fields differ from its last request (null: no request to compare). */
  changed_fields?: string[] | null;
  /** For a changed item with template variables: which changed, `name "old" -> "new"`. */
  changed_vars?: string[];
  /** For a renamed item: the id whose paid result it takes; nothing is paid for it. */
  renamed_from?: string;
  /** For a reused item: the saved take of its very request that run copies into its place, for free. */
  reused_from?: { item: string; take: number | null };
  /** The prompt as it will be sent, for an item rendered from a template. */
  prompt?: string;
  /** What submitting it would likely cost; null when it is not submitted or nothing is known. */
  estimate_usd: string | null;
  /** Its saved files that are missing, altered or modified since saved; present only then. */
  file_problems?: ShownFileProblem[];
  /** The option of run that alone sends it again (on-request.ts); present only then. */
  paid_only_by?: OnRequest;
}

export interface Walk {
  items: PlanItem[];
  counts: Record<PlanLabel, number>;
  toSubmit: number;
  /** Items run tries that fit only if prices not seen yet leave room (plan-budget.ts): not in toSubmit. */
  mayFit: number;
  /** Items to submit with no estimate at all. */
  unknown: number;
  estimateTotal: Micros;
  /**
   * What the items to submit whose model and input shape were charged before are expected to
   * cost: prices seen, never a cap or a guess; with how many items and charges it rests on.
   */
  expected: { micros: Micros; items: number; samples: number };
  capsTotal: Micros;
  uncapped: number;
  /** Of the items to submit, those whose paid job the service lost: paid for again. */
  again: { items: number; estimate: Micros; unknown: number; caps: Micros; uncapped: number };
  /** The first item that will not fit, and why, in the words a run would record for it. */
  firstBlocked: { id: string; words: string } | null;
}

/** The items to submit in the order run queues them, spending the estimates; the items in manifest order. */
export function walkItems(
  manifest: Manifest,
  decisions: ReadonlyArray<Decision | undefined>,
  source: Pick<PlanSource, 'prices'>,
  budgetLeft: Micros | null,
  reserved: Micros,
  previousBody: PreviousBody | undefined,
  previousVars?: PreviousVars,
): Walk {
  const walker = new PlanWalker(source, budgetLeft, reserved, previousBody, previousVars);
  const lines = new Array<PlanItem>(manifest.items.length);
  for (const index of submitOrder(manifest.items))
    lines[index] = walker.step(manifest.items[index]!, index, decisions[index]!);
  return { ...walker.finish(), items: lines };
}

/**
 * The walk an item at a time, in the order run queues them: each item's line, its estimate
 * spent against the budget. A streamed plan (plan-stream.ts) steps through the items in manifest
 * order, which is that order where no item has variants.
 */
export class PlanWalker {
  readonly #walk: Walk = {
    items: [],
    counts: Object.fromEntries(PLAN_LABELS.map((label) => [label, 0])) as Record<PlanLabel, number>,
    toSubmit: 0,
    mayFit: 0,
    unknown: 0,
    estimateTotal: 0,
    expected: { micros: 0, items: 0, samples: 0 },
    capsTotal: 0,
    uncapped: 0,
    again: { items: 0, estimate: 0, unknown: 0, caps: 0, uncapped: 0 },
    firstBlocked: null,
  };
  readonly #spend: Spending;

  constructor(
    source: Pick<PlanSource, 'prices'>,
    budgetLeft: Micros | null,
    reserved: Micros,
    private readonly previousBody: PreviousBody | undefined,
    private readonly previousVars?: PreviousVars,
  ) {
    this.#spend = {
      walk: this.#walk,
      budget: new BudgetWalk(budgetLeft),
      source,
      reserved,
      keysSeen: new Set(),
    };
  }

  /** One item's line, `index` its place in the manifest. */
  step(item: ManifestItem, index: number, decided: Decision): PlanItem {
    const walk = this.#walk;
    let label: PlanLabel = decided.label;
    let { reason } = decided;
    let fields: string[] | null | undefined;
    let vars: string[] = [];
    let estimate: Micros | null = null;
    if (decided.label === 'changed')
      ({ fields, reason, vars } = changedReason(item, decided, this.previousBody, this.previousVars));
    if (decided.submit) {
      const spent = spendOn(this.#spend, item, index, decided);
      estimate = spent.estimate;
      if (spent.blocked) label = 'blocked_by_budget';
      reason = spent.reason ?? reason;
    }
    walk.counts[label] += 1;
    const planned = planItemOf(
      item.id,
      label,
      reason,
      fields,
      estimate === null ? null : formatUsd(estimate),
    );
    if (vars.length > 0) planned.changed_vars = vars;
    if (decided.renamedFrom !== undefined) planned.renamed_from = decided.renamedFrom;
    if (decided.reusedFrom !== undefined) planned.reused_from = decided.reusedFrom;
    if (decided.onRequest !== undefined) planned.paid_only_by = decided.onRequest;
    if (item.vars) planned.prompt = String(item.input.prompt);
    return planned;
  }

  /** The walk's counts and sums, once every item has had its step (its items are the caller's). */
  finish(): Omit<Walk, 'items'> {
    const { items: _items, ...walk } = this.#walk;
    const first = this.#spend.firstBlocked;
    return { ...walk, firstBlocked: first ? { id: first.id, words: first.words } : null };
  }
}

/** The walk's budget as it goes, in submit order. */
interface Spending {
  walk: Walk;
  budget: BudgetWalk;
  source: Pick<PlanSource, 'prices'>;
  reserved: Micros;
  prices?: PriceTable;
  seen?: PricesSeen | null;
  keysSeen: Set<string>;
  /** The first that will not fit in manifest order, as the run's summary names it. */
  firstBlocked?: { index: number; id: string; words: string };
}

/** One item to submit against the budget: its estimate, and the reason of an item that may not be sent. */
function spendOn(
  spend: Spending,
  item: ManifestItem,
  index: number,
  decided: Decision,
): { estimate: Micros | null; blocked: boolean; reason?: string } {
  const { walk, budget } = spend;
  spend.prices ??= spend.source.prices();
  const estimated = estimateItem(item, spend.prices);
  const estimate = estimated.micros;
  const leftBefore = budget.most;
  const fit = budget.take(item, estimated);
  if (fit === 'fits') {
    countToSubmit(walk, item, estimate);
    if (decided.paysAgain) countAgain(walk.again, item, estimate);
    if (estimated.key !== undefined)
      countExpected(walk, estimated.key, estimate ?? 0, spend.prices, spend.keysSeen);
    return { estimate, blocked: false };
  }
  if (fit === 'may_fit') {
    walk.mayFit += 1;
    countCap(walk, item);
    return { estimate, blocked: false, reason: mayFitWords(item.maxCostMicros!) };
  }
  spend.seen ??= pricesSeenOf(spend.prices.byKey.values());
  const words = shortfallWords({
    capMicros: item.maxCostMicros,
    leftMicros: leftBefore!,
    prices: spend.seen,
  });
  if (spend.firstBlocked === undefined || index < spend.firstBlocked.index)
    spend.firstBlocked = { index, id: item.id, words };
  return { estimate, blocked: true, reason: blockedReason(words, spend.reserved) };
}

/** Adds an item priced by a charge seen for its kind; each kind's charges are counted once. */
function countExpected(
  walk: Walk,
  key: string,
  micros: Micros,
  prices: PriceTable,
  keysSeen: Set<string>,
): void {
  walk.expected.micros += micros;
  walk.expected.items += 1;
  if (keysSeen.has(key)) return;
  keysSeen.add(key);
  walk.expected.samples += prices.samplesByKey.get(key) ?? 0;
}

/** What an edited item's line says: the fields that changed, when the earlier request is known. */
function changedReason(
  item: ManifestItem,
  decided: Decision,
  previousBody: PreviousBody | undefined,
  previousVars: PreviousVars | undefined,
): { fields: string[] | null; reason: string; vars: string[] } {
  const fields = changedFields(item, decided.changedSince && previousBody?.(decided.changedSince));
  const vars =
    decided.changedSince && previousVars ? changedVars(item, previousVars(decided.changedSince)) : [];
  const because = vars.length > 0 ? ` (variable ${vars.join(', ')})` : '';
  const reason = fields?.length
    ? `changed since the last run: ${fields.join(', ')}${because}`
    : 'model, input, metadata or max_cost_usd changed since the last run';
  return { fields, reason, vars };
}

/** Counts an item that fits the budget at the prices it will spend (BudgetWalk) among those to submit. */
function countToSubmit(walk: Walk, item: ManifestItem, estimate: Micros | null): void {
  walk.toSubmit += 1;
  if (estimate === null) walk.unknown += 1;
  else walk.estimateTotal += estimate;
  countCap(walk, item);
}

/**
 * Its cap bounds what the run can spend (an item the run may send counts too), once for its take
 * and once for each re-roll it may buy (docs/checks.md).
 */
function countCap(walk: Walk, item: ManifestItem): void {
  if (item.maxCostMicros === null) walk.uncapped += 1;
  else walk.capsTotal += item.maxCostMicros * (1 + (item.rerolls ?? 0));
}

function countAgain(again: Walk['again'], item: ManifestItem, estimate: Micros | null): void {
  again.items += 1;
  if (estimate === null) again.unknown += 1;
  else again.estimate += estimate;
  if (item.maxCostMicros === null) again.uncapped += 1;
  else again.caps += item.maxCostMicros;
}

function planItemOf(
  id: string,
  plan: PlanLabel,
  reason: string | undefined,
  fields: string[] | null | undefined,
  estimate_usd: string | null,
): PlanItem {
  // The common item has neither: spreading two empty objects into 100,000 literals cost more
  // than the rest of the walk.
  if (reason === undefined && fields === undefined) return { id, plan, estimate_usd };
  return {
    id,
    plan,
    ...(reason === undefined ? {} : { reason }),
    ...(fields === undefined ? {} : { changed_fields: fields }),
    estimate_usd,
  };
}

/**
 * The caps bound what the items to submit can cost; an item without one reserves all that is
 * left of the budget, and with no budget either nothing bounds it.
 */
export function mostItCanCost(caps: Micros, uncapped: number, budgetLeft: Micros | null): Micros | null {
  const bounded = Math.max(0, budgetLeft ?? Number.POSITIVE_INFINITY);
  const most = Math.min(uncapped > 0 ? Number.POSITIVE_INFINITY : caps, bounded);
  return Number.isFinite(most) ? most : null;
}

function blockedReason(words: string, reserved: Micros): string {
  // run waits for unanswered attempts before giving up on an item, so say what may still free up.
  const pending =
    reserved > 0 ? `; ${formatUsdHuman(reserved)} reserved by unanswered attempts may free up` : '';
  return `${words}${pending}`;
}
