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
export function onRequestLines(items: ReadonlyArray<{ id: string; paid_only_by?: OnRequest }>): string[] {
  const lines: string[] = [];
  for (const option of Object.keys(WORDS) as OnRequest[]) {
    const ids = items.filter((item) => item.paid_only_by === option).map((item) => item.id);
    if (ids.length === 0) continue;
    const shown =
      ids.length > 10 ? `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more` : ids.join(', ');
    lines.push(`${WORDS[option]}: ${shown}`);
  }
  return lines;
}
