import { formatUsdHuman, type Micros } from '../money.js';
import type { PricesSeen } from './budget.js';

/**
 * The words of every budget refusal: an item's detail (ledger, status, run events, plan's line),
 * the run's stop line and summary, and plan's warning. Pure, and shared, so a run and the plan
 * before it say the same thing. The reservation is what does not fit: an item's max_cost_usd cap,
 * or all that is left for an item without one (budget.ts); the prices seen say how far the cap
 * could come down, which is the cheaper fix when it is well above them. Cheaper indeed: a lowered
 * cap sends no done item again (currentRequest, item-plan.ts), and the run's summary says so in
 * the words `plan` gives such an item (CAP_ONLY_WORDS), so the two never disagree.
 */
export interface Shortfall {
  /** The item's max_cost_usd, which it reserves; null: it reserves all that is left. */
  capMicros: Micros | null;
  leftMicros: Micros;
  prices: PricesSeen | null;
}

type WayOut = 'raise_only' | 'lower_or_raise' | 'lower_unknown' | 'cap_at_prices' | 'lower_too_little';

/** Which ways out are true for a shortfall: the first row whose test holds. */
const WAYS_OUT: ReadonlyArray<readonly [WayOut, (s: Shortfall, high: Micros | null) => boolean]> = [
  ['raise_only', (s) => s.capMicros === null],
  ['lower_unknown', (_s, high) => high === null],
  ['cap_at_prices', (s, high) => high! >= s.capMicros!],
  ['lower_too_little', (s, high) => high! > s.leftMicros],
  ['lower_or_raise', () => true],
];

const WAY_OUT_WORDS: Record<WayOut, (high: string) => string> = {
  raise_only: () => 'raise budget_usd',
  lower_or_raise: (high) =>
    `raise budget_usd, or lower max_cost_usd to about ${high}, the prices seen (the cheaper fix)`,
  lower_unknown: () =>
    'raise budget_usd, or lower max_cost_usd (until a price is seen, each item counts at its cap)',
  cap_at_prices: () => 'raise budget_usd (max_cost_usd is not above the prices seen)',
  lower_too_little: () =>
    'raise budget_usd (even max_cost_usd lowered to the prices seen would not fit in what is left)',
};

export function wayOut(s: Shortfall): WayOut {
  const high = s.prices?.highMicros ?? null;
  return WAYS_OUT.find(([, holds]) => holds(s, high))![0];
}

/** `prices seen $0.20`, `prices seen $0.08-$0.20`, or `no price seen yet`. */
export function pricesSeenWords(prices: PricesSeen | null): string {
  if (prices === null) return 'no price seen yet';
  const { lowMicros, highMicros } = prices;
  return lowMicros === highMicros
    ? `prices seen ${formatUsdHuman(highMicros)}`
    : `prices seen ${formatUsdHuman(lowMicros)}-${formatUsdHuman(highMicros)}`;
}

/**
 * One item's refusal, starting with a verb so that it reads after the item's id too:
 * `reserves its max_cost_usd cap of $0.50 but $0.30 is left of budget_usd (prices seen $0.20):
 * raise budget_usd, or lower max_cost_usd to about $0.20, the prices seen (the cheaper fix)`.
 */
export function shortfallWords(s: Shortfall): string {
  const left = formatUsdHuman(Math.max(0, s.leftMicros));
  const why =
    s.capMicros !== null
      ? `reserves its max_cost_usd cap of ${formatUsdHuman(s.capMicros)} but ${left} is left of budget_usd`
      : s.leftMicros > 0
        ? `has no max_cost_usd, so it reserves all that is left of budget_usd, ${left}, which is less than it costs`
        : 'has nothing left of budget_usd to reserve';
  const high = formatUsdHuman(s.prices?.highMicros ?? 0);
  return `${why} (${pricesSeenWords(s.prices)}): ${WAY_OUT_WORDS[wayOut(s)](high)}`;
}

/**
 * The run's stop line, its summary and plan's warning: how many, and the first one's words.
 * `verb` is `did not fit` after a run, `will not fit` in a plan.
 */
export function notFittingLine(count: number, verb: string, firstId: string, firstWords: string): string {
  const items = `${count} item${count === 1 ? '' : 's'}`;
  return count === 1
    ? `${items} ${verb} in budget_usd: ${firstId} ${firstWords}`
    : `${items} ${verb} in budget_usd; the first, ${firstId}, ${firstWords}`;
}

/** Why a done or in-flight item whose max_cost_usd alone changed is not sent (item-plan.ts): plan's reason. */
export const CAP_ONLY_WORDS = 'only max_cost_usd changed: the same video, not paid for again';

/**
 * The run's closing budget line: the count and the first item's words (notFittingLine), then what
 * to do. Where lowering max_cost_usd is a way out, it says what `plan` will then say of a done item.
 */
export function afterBudgetStopWords(line: string, firstWords: string): string {
  return /lower max_cost_usd/.test(firstWords)
    ? `${line}; then re-run. A lowered max_cost_usd sends no done item again (plan then says of each: ${CAP_ONLY_WORDS}).`
    : `${line}; then re-run.`;
}

/** The same when no item's own words were recorded: how many, and the one way out. */
export function unspecifiedShortfallWords(count: number): string {
  return `${count} item${count === 1 ? '' : 's'} did not fit in budget_usd: raise it and re-run to submit them`;
}
