import type { ManifestItem } from '../../manifest/index.js';
import { formatUsdHuman, type Micros } from '../../money.js';
import { foreseeSend } from '../../runner/budget.js';
import type { ItemEstimate } from '../ledger/cost-estimate.js';

/**
 * The budget as plan spends it item after item, in the run's order (submitOrder): each item
 * reserves its max_cost_usd (or all that is left without one) and then spends its price, as the
 * run does (foreseeSend). A price already charged for the item's kind of request is what it spends;
 * a capped item whose price is not known yet spends somewhere between nothing and its cap, so two
 * walks are kept: `left` spends the cap (an item that fits there fits whatever the price), `best`
 * spends nothing (an item that does not fit even there never fits). Between the two, the item is
 * sent if the prices not seen yet leave room for it: the run tries it, and plan says so. (With
 * caps that differ, an item counted as fitting may yet find the room taken by such an item.)
 */
export type BudgetFit = 'fits' | 'may_fit' | 'no_room';

export class BudgetWalk {
  #left: Micros | null;
  #best: Micros | null;

  constructor(budgetLeft: Micros | null) {
    this.#left = budgetLeft;
    this.#best = budgetLeft;
  }

  /** The most that can be left before the next item: the items whose price is not known yet free. */
  get most(): Micros | null {
    return this.#best;
  }

  take(item: Pick<ManifestItem, 'maxCostMicros'>, estimate: ItemEstimate): BudgetFit {
    const unseen = estimate.basis === 'max_cost';
    const best = foreseeSend(this.#best, item.maxCostMicros, unseen ? 0 : estimate.micros);
    if (!best.fits) return 'no_room';
    this.#best = best.leftMicros;
    const worst = foreseeSend(this.#left, item.maxCostMicros, estimate.micros);
    if (!worst.fits) return 'may_fit';
    this.#left = worst.leftMicros;
    return 'fits';
  }
}

/** The reason of an item the run sends only if the prices not seen yet leave room for its cap. */
export function mayFitWords(capMicros: Micros): string {
  return (
    `sent if budget_usd still has its ${formatUsdHuman(capMicros)} max_cost_usd when its turn comes: ` +
    'that depends on the prices of the items before it, not seen yet'
  );
}

/**
 * Said in `plan` (and so in the run's opening words) when the budget decides which variants of items
 * with variants are bought: the order it buys them in (submitOrder). Null when it buys them all.
 */
export function variantsOrderNote(
  /** Whether an item asks for more than one variant (hasVariants). */
  variants: boolean,
  short: { blocked: number; mayFit: number },
): string | null {
  if (short.blocked + short.mayFit === 0 || !variants) return null;
  return 'budget_usd buys a variant at a time: variant 1 of every item first, then variant 2 of every item, and so on';
}

/** Whether some item is a variant past the first: then the budget buys a variant at a time. */
export const hasVariants = (items: ReadonlyArray<Pick<ManifestItem, 'variant'>>): boolean =>
  items.some((item) => (item.variant?.number ?? 1) > 1);
