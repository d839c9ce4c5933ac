/**
 * Re-rolls (docs/checks.md, "Re-rolls"): a take that failed its check is bought again, as a new
 * take under a new key, while the item has re-rolls left: `rerolls: N` buys at most N takes after
 * the first. Pure; the budget is the run's own rule (budget.ts), applied to a re-roll as to any
 * request, and the run queues re-rolls behind every item's first take (breadth first).
 */
export function mayReroll(failedTakes: number, rerolls: number): boolean {
  return failedTakes >= 1 && failedTakes <= rerolls;
}

/** `2 of 3` (the re-roll's number and the item's allowance), for the run's words. */
export function rerollWords(failedTakes: number, rerolls: number): string {
  return `re-roll ${failedTakes} of ${rerolls}`;
}
