import { setTimeout as delay } from 'node:timers/promises';

/** Time as the runner sees it; injected so the core can be driven without waiting. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fire` after `ms` unless the returned function cancels it first. */
  timer(ms: number, fire: () => void): () => void;
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
  timer: (ms, fire) => {
    const timeout = setTimeout(fire, Math.max(0, ms));
    return () => clearTimeout(timeout);
  },
};
