import { hash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { ManifestItem } from '../manifest/index.js';

/**
 * What a paid result is (docs/results.md, "A result is found by its request"): the model, the
 * input with its prompt, and the variant number. Not the item's id, its take, its file's name, its
 * max_cost_usd (a cap the service checks before it accepts a job, which changes nothing in the
 * video) or its metadata (labels the service stores beside the job). Two requests with one key ask
 * for the same video: a saved take of one answers the other, so it is never bought twice. The
 * variant number is part of it because `variants: 3` asks for three different variants of one input.
 * Pure: `run` and `plan` find takes by the same key.
 */
export function requestKey(item: Pick<ManifestItem, 'model' | 'input' | 'variant'>): string {
  return keyOf(item.model, item.input, item.variant?.number ?? 1);
}

/** Why an item whose request key did not change is not paid for again, in `run` and `plan` alike. */
export const SAME_VIDEO_WORDS =
  'only its metadata changed: its saved take is the same video, not paid for again';

/**
 * The key of a recorded request body (what an attempt sent, or the body `import` rebuilt from a
 * job) made for the variant `variant`; null for a body that is not a JSON object with an input.
 */
export function requestKeyOfBody(body: string, variant: number): string | null {
  const parsed = objectOf(body);
  if (parsed === null || !isObject(parsed.input)) return null;
  return keyOf(parsed.model ?? null, parsed.input, variant);
}

/** The JSON object a text holds, or null for any other text. */
function objectOf(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * The variant a ledger item is, from the manifest where it still lists the item, else from its id
 * (`<id>.v<n>`, variants.ts): an item since removed has no other record of it.
 */
export function variantOfItem(variants: ReadonlyMap<string, number>, itemId: string): number {
  const listed = variants.get(itemId);
  if (listed !== undefined) return listed;
  const match = /\.v([1-9][0-9]*)$/.exec(itemId);
  return match ? Number(match[1]) : 1;
}

/** The variant each ledger item is, by id, for a manifest's items (variantOfItem). */
export function variantsOfItems(
  items: readonly Pick<ManifestItem, 'id' | 'variant'>[],
): (itemId: string) => number {
  const variants = manifestVariants(items);
  return (itemId) => variantOfItem(variants, itemId);
}

/** Each manifest item's variant number, for variantOfItem. */
export function manifestVariants(
  items: readonly Pick<ManifestItem, 'id' | 'variant'>[],
): Map<string, number> {
  return new Map(items.map((item) => [item.id, item.variant?.number ?? 1]));
}

function keyOf(model: unknown, input: unknown, variant: number, encoding: 'hex' | 'binary' = 'hex'): string {
  return hash('sha256', canonicalJson({ model, input, variant }), encoding);
}

/**
 * requestKey as its 32 bytes, one character each (latin1): the same key in half the memory, for a
 * plan that remembers every item's key across a million items (plan-reuses.ts). hexKey makes it
 * the usual key again.
 */
export function compactRequestKey(item: Pick<ManifestItem, 'model' | 'input' | 'variant'>): string {
  return keyOf(item.model, item.input, item.variant?.number ?? 1, 'binary');
}

/** The usual (hex) form of a compactRequestKey. */
export function hexKey(compact: string): string {
  return Buffer.from(compact, 'latin1').toString('hex');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
