import { setTimeout as delay } from 'node:timers/promises';

/** Time as the runner sees it; injected so the core can be driven without waiting. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    try {
      await delay(Math.max(0, ms), undefined, signal ? { signal } : {});
    } catch {
      // aborted: the caller was woken on purpose
    }
  },
};
