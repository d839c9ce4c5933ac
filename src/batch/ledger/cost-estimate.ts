import type { AttemptRecord, PriceSample } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import type { Micros } from '../../money.js';

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
  /** How many accepted attempts of each request kind there were (see priceKey). */
  samplesByKey: Map<string, number>;
}

/** Where an item's estimate came from; null when there is none. */
export type EstimateBasis = 'seen' | 'max_cost' | 'mean' | null;

export interface ItemEstimate {
  micros: Micros | null;
  basis: EstimateBasis;
  /** For a price seen: its request kind (priceKey), so a plan can count the charges behind it. */
  key?: string;
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
  return priceTable(
    attempts
      .filter((attempt) => attempt.state === 'accepted' && attempt.jobId !== null)
      .map((attempt) => ({
        id: attempt.id,
        requestBody: attempt.requestBody,
        amountMicros: attempt.amountMicros,
        samples: 1,
        sumMicros: attempt.amountMicros,
      })),
  );
}

/**
 * The same table from price samples: each is the newest charge of a group of accepted attempts
 * (the ledger groups them by kind of request, so 100,000 attempts arrive as a handful of rows).
 */
export function priceTable(samples: readonly PriceSample[]): PriceTable {
  const byKey = new Map<string, Micros>();
  const samplesByKey = new Map<string, number>();
  let sum = 0;
  let count = 0;
  const newest = new Map<string, number>();
  for (const sample of samples) {
    let body: unknown;
    try {
      body = JSON.parse(sample.requestBody);
    } catch {
      continue; // a body we cannot read tells us nothing about the price
    }
    if (typeof body !== 'object' || body === null) continue;
    const { model, input } = body as { model?: unknown; input?: unknown };
    const key = priceKey(model ?? null, input);
    sum += sample.sumMicros;
    count += sample.samples;
    samplesByKey.set(key, (samplesByKey.get(key) ?? 0) + sample.samples);
    // Samples come in id order from the ledger, but do not rely on it.
    if ((newest.get(key) ?? -1) <= sample.id) {
      byKey.set(key, sample.amountMicros);
      newest.set(key, sample.id);
    }
  }
  return { byKey, meanMicros: count === 0 ? null : Math.round(sum / count), samples: count, samplesByKey };
}

/**
 * The same kind of request's price first; then the item's own max_cost_usd, which is exactly what
 * run must reserve for it and an upper bound of what it can cost; then the mean of every price
 * seen, a rough guess for a kind never submitted; else unknown.
 */
export function estimateItem(item: ManifestItem, prices: PriceTable): ItemEstimate {
  const key = priceKey(item.model, item.input);
  const seen = prices.byKey.get(key);
  if (seen !== undefined) return { micros: seen, basis: 'seen', key };
  if (item.maxCostMicros !== null) return { micros: item.maxCostMicros, basis: 'max_cost' };
  if (prices.meanMicros !== null) return { micros: prices.meanMicros, basis: 'mean' };
  return { micros: null, basis: null };
}
