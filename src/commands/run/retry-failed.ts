import { estimateItem, pricesSeen } from '../../batch/ledger/cost-estimate.js';
import type { Notice } from '../../batch/resolve/warnings.js';
import type { AttemptRecord, ItemRecord } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { formatUsdHuman } from '../../money.js';
import { isRetryableOnRerun, mayRetryFailed } from '../../runner/policy.js';
import { requestHash } from '../../runner/request.js';

/**
 * What `run --retry-failed` is about to do, said before it does it (docs/services.md): how many
 * items that failed for a final reason go out again, why they failed, and what they may cost.
 * Null when there is nothing to retry. Pure: manifest and ledger rows in, a notice out (`retried`
 * and `held` count the items, `codes` the failures retried by error code).
 */
export function retryFailedNotice(
  items: readonly ManifestItem[],
  records: readonly ItemRecord[],
  attempts: readonly AttemptRecord[],
  budgetLeftMicros: number | null,
): Notice | null {
  const byId = new Map(records.map((record) => [record.itemId, record]));
  const retried: ManifestItem[] = [];
  const codes = new Map<string, number>();
  let held = 0;
  for (const item of items) {
    const record = byId.get(item.id);
    // A changed item goes out anyway; a transient failure is retried without the flag.
    if (record?.state !== 'failed' || record.requestHash !== requestHash(item)) continue;
    if (isRetryableOnRerun(record.errorCode)) continue;
    if (!mayRetryFailed(record.errorCode)) {
      held += 1;
      continue;
    }
    retried.push(item);
    const code = record.errorCode ?? 'failed';
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  const lines: string[] = [];
  if (retried.length > 0) {
    const prices = pricesSeen(attempts);
    let total = 0;
    let unknown = 0;
    for (const item of retried) {
      const estimate = estimateItem(item, prices).micros;
      if (estimate === null) unknown += 1;
      else total += estimate;
    }
    const why = [...codes].map(([code, count]) => `${code}: ${count}`).join(', ');
    const cost =
      unknown === retried.length
        ? 'at a cost not known yet (no price seen and no max_cost_usd)'
        : `for about ${formatUsdHuman(total)} more${unknown > 0 ? ` plus ${unknown} item(s) of unknown price` : ''}`;
    const budget =
      budgetLeftMicros === null ? '' : `, within the ${formatUsdHuman(budgetLeftMicros)} left of budget_usd`;
    lines.push(
      `\`retryFailed\`: ${retried.length} failed item(s) go out again with new keys (${why}), ${cost}${budget}`,
    );
  }
  if (held > 0)
    lines.push(
      `\`retryFailed\`: ${held} item(s) refused with idempotency_key_reused (409) are not retried: inspect the ledger, then edit them`,
    );
  if (lines.length === 0) return null;
  const fields = { retried: retried.map((item) => item.id), held, codes: Object.fromEntries(codes) };
  return { code: 'retry_failed', message: `${lines.join('\n')}\n`, fields };
}
