import { isRetryableOnRerun, mayRetryFailed } from '../runner/policy.js';

/**
 * Items that only an option of `run` pays for (docs/results.md, "What only an option pays for"):
 * an expired item only with `regenerateExpired`, a failed one that no re-run retries by itself
 * only with `retryFailed`. `plan` and `status` name them, by the option's API name (the CLI words
 * it as its flag), in a field of each such item and in one line per option.
 */

export type OnRequest = 'regenerateExpired' | 'retryFailed';

/** The option an item in this state needs before a run sends it again; undefined: none does. */
export function onRequestOf(state: string, errorCode: string | null): OnRequest | undefined {
  if (state === 'expired') return 'regenerateExpired';
  if (state === 'failed' && !isRetryableOnRerun(errorCode) && mayRetryFailed(errorCode)) return 'retryFailed';
  return undefined;
}

const WORDS: Record<OnRequest, string> = {
  regenerateExpired: 'only run `regenerateExpired` pays for these again',
  retryFailed: 'only run `retryFailed` sends these again',
};

/** One line per option that some of these items wait for: `only run ... pays for these again: a, b`. */
export function onRequestLines(items: Iterable<{ id: string; paid_only_by?: OnRequest }>): string[] {
  const named = new OnRequestNamed();
  for (const item of items) named.add(item);
  return named.lines();
}

/** Ids named per line before the rest are counted. */
const NAMED = 10;

/** onRequestLines an item at a time, for a renderer that reads its items once for several things. */
export class OnRequestNamed {
  readonly #ids: Record<OnRequest, string[]> = { regenerateExpired: [], retryFailed: [] };
  readonly #counts: Record<OnRequest, number> = { regenerateExpired: 0, retryFailed: 0 };

  add(item: { id: string; paid_only_by?: OnRequest }): void {
    const option = item.paid_only_by;
    if (option === undefined) return;
    this.#counts[option] += 1;
    if (this.#ids[option].length < NAMED) this.#ids[option].push(item.id);
  }

  lines(): string[] {
    const lines: string[] = [];
    for (const option of Object.keys(WORDS) as OnRequest[]) {
      const ids = this.#ids[option];
      const count = this.#counts[option];
      if (count === 0) continue;
      const shown = count > NAMED ? `${ids.join(', ')} and ${count - NAMED} more` : ids.join(', ');
      lines.push(`${WORDS[option]}: ${shown}`);
    }
    return lines;
  }
}
