import type { AttemptRecord } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { manifestVariants, requestKey, requestKeyOfBody, variantOfItem } from './request-key.js';
import type { RunContext } from './run-context.js';

/**
 * Items of this run asking for the very request of another item it submits or fetches again (the
 * same model, input and variant): the first is submitted (or fetched), the others wait for its
 * take and copy it once it is saved (run-loop.ts), so one request is acquired once per run and two
 * items of one manifest never buy the same video. A shared ledger's runners submit each their own.
 */
export function twinsOf(
  run: RunContext,
  items: readonly ManifestItem[],
  toSubmit: readonly string[],
  /** The results this run fetches again (a GET) or follows: an item asking for one waits for it too. */
  fetching: readonly AttemptRecord[] = [],
): Set<string> {
  const twins = new Set<string>();
  if (run.shared !== null || toSubmit.length + fetching.length < 2) return twins;
  const submitted = new Set(toSubmit);
  const variants = manifestVariants(run.deps.manifest.items);
  const firsts = new Set(
    fetching.flatMap((attempt) => {
      const key = requestKeyOfBody(attempt.requestBody, variantOfItem(variants, attempt.itemId));
      return key === null ? [] : [key];
    }),
  );
  for (const item of items) {
    if (!submitted.has(item.id)) continue;
    const key = requestKey(run.rejections.asSent(item));
    if (!firsts.has(key)) {
      firsts.add(key);
      continue;
    }
    twins.add(item.id);
    run.awaitTwin(item);
  }
  return twins;
}
