import type { AttemptRecord } from '../ledger/records.js';
import type { ManifestItem } from '../manifest/index.js';
import type { Micros } from '../money.js';

/**
 * The service publishes no price list, so the only honest estimate is what
 * this batch was already charged for the same kind of request. Pure: ledger rows in, numbers out.
 */

export interface PriceTable {
  /** Latest amount charged per request kind (see priceKey). */
  byKey: Map<string, Micros>;
  /** Mean amount over every accepted attempt, or null when nothing was ever charged. */
  meanMicros: Micros | null;
  /** How many accepted attempts the table was built from. */
  samples: number;
}

/** Where an item's estimate came from; null when there is none. */
export type EstimateBasis = 'seen' | 'max_cost' | 'mean' | null;

export interface ItemEstimate {
  micros: Micros | null;
  basis: EstimateBasis;
}

/** Only the fields that plausibly set a price: the model, the duration and the resolution. */
export function priceKey(model: unknown, input: unknown): string {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  return JSON.stringify([scalar(model), scalar(fields.seconds), scalar(fields.definition)]);
}

function scalar(value: unknown): string | number | null {
  return typeof value === 'string' || typeof value === 'number' ? value : null;
}

/**
 * Prices from the ledger's accepted attempts, read back from the exact request body each one
 * sent (the manifest may have changed since). A later charge wins over an earlier one for the
 * same key, because a price change is better reflected by the newest answer.
 */
export function pricesSeen(attempts: readonly AttemptRecord[]): PriceTable {
  const byKey = new Map<string, Micros>();
  let sum = 0;
  let samples = 0;
  const newest = new Map<string, number>();
  for (const attempt of attempts) {
    if (attempt.state !== 'accepted' || attempt.jobId === null) continue;
    let body: unknown;
    try {
      body = JSON.parse(attempt.requestBody);
    } catch {
      continue; // a body we cannot read tells us nothing about the price
    }
    if (typeof body !== 'object' || body === null) continue;
    const { model, input } = body as { model?: unknown; input?: unknown };
    const key = priceKey(model ?? null, input);
    sum += attempt.amountMicros;
    samples += 1;
    // Attempts come in id order from the ledger, but do not rely on it.
    if ((newest.get(key) ?? -1) <= attempt.id) {
      byKey.set(key, attempt.amountMicros);
      newest.set(key, attempt.id);
    }
  }
  return { byKey, meanMicros: samples === 0 ? null : Math.round(sum / samples), samples };
}

/**
 * The same kind of request's price first; then the item's own max_cost_usd, which is exactly what
 * run must reserve for it and an upper bound of what it can cost; then the mean of every price
 * seen, a rough guess for a kind never submitted; else unknown.
 */
export function estimateItem(item: ManifestItem, prices: PriceTable): ItemEstimate {
  const seen = prices.byKey.get(priceKey(item.model, item.input));
  if (seen !== undefined) return { micros: seen, basis: 'seen' };
  if (item.maxCostMicros !== null) return { micros: item.maxCostMicros, basis: 'max_cost' };
  if (prices.meanMicros !== null) return { micros: prices.meanMicros, basis: 'mean' };
  return { micros: null, basis: null };
}
