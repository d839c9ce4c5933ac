import { canonicalJson } from '../../canonical-json.js';
import type { ItemRecord, ItemState } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { formatUsd } from '../../money.js';

/**
 * What changed between the ledger and the manifest, beyond each item's own plan: the fields of an
 * edited item, the items no longer in the manifest, and files in the output folder nobody owns.
 * Pure: the command lists the output folder and reads old request bodies, and passes them in.
 */

export interface RemovedItem {
  id: string;
  state: ItemState;
  /** Saved files, as the ledger recorded them; mediabatch never deletes them. */
  files: string[];
}

const RESERVED_METADATA = 'mediabatch.';

function keyDiff(prefix: string, before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys]
    .filter((key) => !key.startsWith(RESERVED_METADATA))
    .filter((key) => canonicalJson(before[key] ?? null) !== canonicalJson(after[key] ?? null))
    .sort()
    .map((key) => `${prefix}.${key}`);
}

const asMap = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/**
 * The fields an edited item changed since the request its last attempt sent (`input.prompt`,
 * `model`, `metadata.campaign`...), or null when no earlier request is known. The body's
 * max_cost_usd may be a budget-derived cap, so a change nothing else explains is the cap's.
 */
export function changedFields(item: ManifestItem, previousBody: string | undefined): string[] | null {
  if (previousBody === undefined) return null;
  let body: Record<string, unknown>;
  try {
    body = asMap(JSON.parse(previousBody));
  } catch {
    return null;
  }
  const fields = [
    ...((body.model ?? null) === item.model ? [] : ['model']),
    ...keyDiff('input', asMap(body.input), item.input),
    ...keyDiff('metadata', asMap(body.metadata), item.metadata),
  ];
  if (fields.length > 0) return fields;
  const cap = item.maxCostMicros === null ? undefined : formatUsd(item.maxCostMicros);
  return body.max_cost_usd === cap ? [] : ['max_cost_usd'];
}

/**
 * The variables whose values differ from those the last attempt's prompt was rendered from, as
 * `name "old" -> "new"`: why a template's prompt changed. Empty when none were recorded.
 */
export function changedVars(item: ManifestItem, previousVars: string | null | undefined): string[] {
  if (!previousVars && !item.vars) return [];
  let before: Record<string, unknown>;
  try {
    before = asMap(previousVars ? JSON.parse(previousVars) : {});
  } catch {
    return [];
  }
  const after: Record<string, unknown> = item.vars ?? {};
  const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((name) => canonicalJson(before[name] ?? null) !== canonicalJson(after[name] ?? null))
    .map((name) => `${name} ${shown(before[name])} -> ${shown(after[name])}`);
}

/**
 * Items the ledger knows that the manifest no longer lists, with the files they left: `paths` is
 * every saved file as [item id, path], in the ledger's order.
 */
export function removedItems(
  unlisted: readonly ItemRecord[],
  paths: Iterable<readonly [string, string]>,
  shown: (path: string) => string,
): RemovedItem[] {
  const files = new Map(unlisted.map((record) => [record.itemId, [] as string[]]));
  for (const [itemId, path] of paths) files.get(itemId)?.push(shown(path));
  return unlisted.map((record) => ({
    id: record.itemId,
    state: record.state,
    files: files.get(record.itemId)!,
  }));
}

/**
 * Why each stray file is not taken for one of the batch's outputs (`why`: its sidecar is missing,
 * of another manifest, or records other bytes; src/downloads/files-on-disk.ts), by its shown path;
 * files with nothing to say (sidecars) are left out.
 */
export function strayReasons(
  foreign: readonly string[],
  shown: (path: string) => string,
  why: (path: string) => string | null,
): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const path of foreign) {
    const reason = why(path);
    if (reason !== null) reasons[shown(path)] = reason;
  }
  return reasons;
}
