import { hash } from 'node:crypto';
import type { ManifestItem } from '../manifest/index.js';
import { formatUsd, type Micros } from '../money.js';
import type { CreateVideoJobBody } from '../service-client/schemas.js';

/**
 * The text whose hash says whether an item changed. Not `src/canonical-json.ts` on purpose: this
 * sorts by rebuilding objects, so integer-like keys ("9", "10") come out in numeric order, and
 * every ledger already stores hashes of this exact text. Switching would make such items look
 * edited and pay for them again.
 */
function requestHashText(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * What the user asked for, independent of attempt number and budget-derived caps: when it
 * changes, the item's earlier result no longer answers the manifest.
 */
export function requestHash(item: ManifestItem): string {
  const content = {
    model: item.model,
    input: item.input,
    metadata: item.metadata,
    max_cost: item.maxCostMicros,
  };
  // One-shot hash: a Hash object per item was a tenth of `plan`'s time over 100,000 items.
  return hash('sha256', requestHashText(content), 'hex');
}

/** The exact POST body of one attempt; the ledger stores this text and every resend reuses it. */
export function buildRequestBody(
  manifestName: string,
  item: ManifestItem,
  attemptSeq: number,
  maxCostMicros: Micros | null,
): string {
  const body: CreateVideoJobBody = {
    ...(item.model === null ? {} : { model: item.model }),
    input: item.input,
    ...(maxCostMicros === null ? {} : { max_cost_usd: formatUsd(maxCostMicros) }),
    metadata: {
      ...item.metadata,
      'mediabatch.manifest': manifestName,
      'mediabatch.item': item.id,
      'mediabatch.attempt': String(attemptSeq),
    },
  };
  return JSON.stringify(body);
}
