import { hash } from 'node:crypto';
import type { ManifestItem } from '../manifest/index.js';
import { formatUsd, type Micros } from '../money.js';
import type { CreateVideoJobBody, Job } from '../service-client/schemas.js';
import { promptsOf, withPrompt } from './fallback.js';

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
  let known = hashes.get(item);
  if (known === undefined) {
    const content = {
      model: item.model,
      input: item.input,
      metadata: item.metadata,
      max_cost: item.maxCostMicros,
    };
    // One-shot hash: a Hash object per item was a tenth of `plan`'s time over 100,000 items.
    known = hash('sha256', requestHashText(content), 'hex');
    hashes.set(item, known);
  }
  return known;
}

/**
 * Each item's hash, made once: a run asks for it when it plans, restores and submits the item, and
 * a resolved item never changes (a new manifest is new items).
 */
const hashes = new WeakMap<ManifestItem, string>();

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
 * The item a job was submitted for, when it was submitted by mediabatch for this manifest: the
 * metadata buildRequestBody writes, read back (by `import`, and the known-jobs check of `run`).
 */
export function jobItemId(job: Job, manifestName: string): string | null {
  if (job.metadata['mediabatch.manifest'] !== manifestName) return null;
  const item = job.metadata['mediabatch.item'];
  return typeof item === 'string' && item !== '' ? item : null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * What a request asks to be generated: without `max_cost_usd` (a spending cap the service checks
 * before it accepts a job; it changes nothing in the video) and without mediabatch's own
 * `mediabatch.*` metadata (manifest, item and attempt number, which differ between attempts of one
 * request); an absent model is a null one (an imported job's body writes null, ours leaves it out).
 */
function generatedOf(body: Record<string, unknown>): Record<string, unknown> {
  const { max_cost_usd: _cap, model, metadata, ...rest } = body;
  const own = isObject(metadata)
    ? Object.fromEntries(Object.entries(metadata).filter(([key]) => !key.startsWith('mediabatch.')))
    : (metadata ?? {});
  return { ...rest, model: model ?? null, metadata: own };
}

/**
 * Equal JSON values, whatever the order of their keys. Compared in place rather than as sorted
 * text: `plan` may compare 100,000 bodies, and building the text was most of its time.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, index) => sameJson(value, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && sameJson(left[key], right[key]));
}

/**
 * Whether a recorded request body asks for the same video as the item does now, whatever the
 * max_cost_usd of either: lowering the cap of an item whose job already answered it is not a new
 * request, and must not pay again (item-plan.ts, currentRequest). Key order does not matter; a
 * body that is not a JSON object never matches.
 */
export function sameApartFromCap(recordedBody: string, item: ManifestItem): boolean {
  let recorded: unknown;
  try {
    recorded = JSON.parse(recordedBody);
  } catch {
    // Not JSON: `recorded` stays undefined, which the object check below refuses.
  }
  if (!isObject(recorded)) return false;
  // A body sent with one of the item's fallback prompts asks what the item asks (fallback.ts).
  const sent = isObject(recorded.input) ? recorded.input.prompt : undefined;
  const as = typeof sent === 'string' && promptsOf(item).includes(sent) ? withPrompt(item, sent) : item;
  // The fields buildRequestBody sends from the item, apart from the cap and mediabatch's metadata.
  const asked = generatedOf({ model: as.model, input: as.input, metadata: as.metadata });
  return sameJson(generatedOf(recorded), asked);
}
