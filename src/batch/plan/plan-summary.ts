import { humanUsd } from '../../money.js';
import { copiesWords } from '../plan-decisions/plan-copies.js';

/** The totals the line is made of (plan-report's PlanTotals has them all). */
interface SummaryTotals {
  new: number;
  changed: number;
  retry: number;
  redo: number;
  renamed: number;
  reused: number;
  copies: number;
  copied_requests: number;
  in_flight: number;
  done: number;
  refetch: number;
  expired: number;
  failed: number;
  held_back: number;
  blocked_by_budget: number;
  to_submit: number;
  budget_permitting: number;
  removed: number;
  stray_files: number;
  expected_usd: string | null;
  expected_items: number;
  expected_samples: number;
  at_most_usd: string | null;
  budget_usd: string | null;
  budget_left_usd: string | null;
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/**
 * The plan in one line, printed by `plan` last and by `run` before it spends anything, e.g.
 * `Plan: 2 new, 1 changed, 1 to resume, 5 unchanged; expected $0.75 (based on 4 prices seen), at most $1.50 (budget left $8.50 of $10.00).`
 */
export function planSummary(t: SummaryTotals): string {
  // Every item the run will try, whether or not the budget turns out to have room for it.
  const tried = t.to_submit + t.budget_permitting;
  const skipped = t.failed + (tried === t.new + t.changed + t.retry + t.redo ? t.expired : 0);
  const regenerated = tried - t.new - t.changed - t.retry - t.redo;
  const parts = [
    t.new ? `${t.new} new` : '',
    t.changed ? `${t.changed} changed` : '',
    t.renamed ? `${t.renamed} renamed (nothing to pay)` : '',
    t.reused > t.copies ? `${t.reused - t.copies} found already paid for (nothing to pay)` : '',
    t.copies ? copiesWords({ copies: t.copies, requests: t.copied_requests }) : '',
    t.retry ? `${t.retry} to retry` : '',
    t.redo ? plural(t.redo, 'new take') : '',
    regenerated ? `${regenerated} expired to generate again` : '',
    t.in_flight ? `${t.in_flight} to resume` : '',
    t.refetch ? `${t.refetch} saved, missing or altered, to fetch again (free)` : '',
    t.done ? `${t.done} unchanged` : '',
    t.blocked_by_budget ? `${t.blocked_by_budget} beyond budget_usd` : '',
    t.held_back ? `${t.held_back} held back (a file this ledger did not write is in the way)` : '',
    skipped ? `${skipped} skipped` : '',
    t.removed ? `${t.removed} removed from the manifest` : '',
    t.stray_files ? `${plural(t.stray_files, 'stray file')}` : '',
  ].filter(Boolean);
  const what = tried === 0 ? ['nothing to submit', ...parts] : parts;
  return `Plan: ${what.join(', ')}${fitting(t, tried)}${tried === 0 ? '' : `; ${cost(t)}`}${budget(t)}.`;
}

/**
 * What the budget allows of the items to try, at the prices the run will spend: a range while
 * capped items' prices are not seen yet (plan-budget.ts), `budget_usd fits 1 to 9 of them, ...`.
 */
function fitting(t: SummaryTotals, tried: number): string {
  if (t.budget_permitting === 0) return '';
  return `; budget_usd fits ${t.to_submit} to ${tried} of the ${tried} to submit, as their prices (not seen yet) allow`;
}

/**
 * "expected" only from prices already charged for the same model and input shape, with how many
 * charges it rests on; before any, only the bound, and why there is nothing better to say.
 */
function cost(t: SummaryTotals): string {
  const most = t.at_most_usd === null ? 'no upper bound' : `at most ${humanUsd(t.at_most_usd)}`;
  if (t.expected_usd === null || t.expected_items === 0)
    return `${most} (no price seen yet for this model and input)`;
  const based = `based on ${plural(t.expected_samples, 'price')} seen`;
  if (t.expected_items === t.to_submit) return `expected ${humanUsd(t.expected_usd)} (${based}), ${most}`;
  return `expected ${humanUsd(t.expected_usd)} for ${t.expected_items} of ${t.to_submit} items (${based}; none yet for the others' model and input), ${most}`;
}

function budget(t: SummaryTotals): string {
  return t.budget_usd === null
    ? ''
    : ` (budget left ${humanUsd(t.budget_left_usd)} of ${humanUsd(t.budget_usd)})`;
}
