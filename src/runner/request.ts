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
 * changes, the item's earlier result may no longer answer the manifest. It includes the item's
 * max_cost_usd, and every ledger stores it so: a hash that differs is therefore settled by
 * `sameApartFromCap` over the recorded body (item-plan.ts, `currentRequest`), never by rehashing.
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

/**
 * What a request body asks to be generated, as comparable text: without `max_cost_usd` (a spending
 * cap the service checks before it accepts a job; it changes nothing in the video) and without
 * mediabatch's own `mediabatch.*` metadata (manifest, item and attempt number, which differ
 * between attempts of one request); a null model is the same as none (an imported job's body
 * writes it, ours leaves it out). Null when the text is not a JSON object.
 */
function generatedPart(body: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const { max_cost_usd: _cap, model, metadata, ...rest } = parsed as Record<string, unknown>;
  const ownKeys =
    metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)
      ? Object.fromEntries(Object.entries(metadata).filter(([key]) => !key.startsWith('mediabatch.')))
      : metadata;
  return requestHashText({ ...rest, ...(model == null ? {} : { model }), metadata: ownKeys ?? {} });
}

/**
 * Whether two request bodies ask for the same video, whatever their max_cost_usd: lowering the
 * cap on an item whose job already answered it is not a new request, and must not pay again.
 * Key order does not matter; a body that is not a JSON object is never the same as anything.
 */
export function sameApartFromCap(before: string, after: string): boolean {
  const a = generatedPart(before);
  return a !== null && a === generatedPart(after);
}
