import type { AttemptRecord } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { requestKey, requestKeyOfBody } from './request-key.js';

/**
 * Fallbacks past moderation (docs/manifest.md, "Fallback prompts"): an item's prompts are sent in
 * turn, its own first, each only while moderation has not rejected its request. A rejected request
 * is known by its request key (request-key.ts), so no item of the batch sends it again, unless the
 * item is sent again on purpose (`redo`, `retryFailed`). Pure: `run` and `plan` decide alike.
 */

/** A request moderation rejected (`content_rejected`), as the ledger recorded its job. */
export interface Rejection {
  key: string;
  itemId: string;
  prompt: string;
  /** The service's message, as it gave it. */
  message: string | null;
  jobId: string | null;
  at: string | null;
}

/** The code a job carries when moderation rejected its input or output (the spec's table 7.3). */
export const CONTENT_REJECTED = 'content_rejected';

/** Why an item is not sent: run's and plan's words. */
export const ALL_REJECTED_WORDS = 'moderation rejected the request of every prompt it lists';

/** What a person can do about it (an option named by its API name: the CLI words it). */
export const ALL_REJECTED_FIX =
  'change its prompt or add fallback_prompts, or send it again with `retryFailed`';

/**
 * Whether an attempt is a job moderation rejected: the rule Ledger.rejectedAttempts reads in SQL,
 * for a ledger held in memory whole.
 */
export function isRejectedAttempt(
  attempt: Pick<AttemptRecord, 'state' | 'jobStatus' | 'errorCode'>,
): boolean {
  return (
    attempt.state === 'accepted' && attempt.jobStatus === 'failed' && attempt.errorCode === CONTENT_REJECTED
  );
}

/** An item's prompts in the order they are sent: its own, then its fallbacks. */
export function promptsOf(item: Pick<ManifestItem, 'input' | 'fallbackPrompts'>): string[] {
  return [String(item.input.prompt), ...(item.fallbackPrompts ?? [])];
}

/** The item as it asks with another of its prompts: the same request in every other field. */
export function withPrompt(item: ManifestItem, prompt: string): ManifestItem {
  if (item.input.prompt === prompt) return item;
  return { ...item, input: { ...item.input, prompt } };
}

/** The prompt an item sends next: its number among its prompts (1 is its own), and the item asking with it. */
export interface NextPrompt {
  number: number;
  of: number;
  item: ManifestItem;
}

/**
 * The first of the item's prompts whose request is not rejected for it, or null when every one is.
 * An item with no fallbacks is itself, whatever was rejected: the service answers for it as before.
 */
export function nextPrompt(item: ManifestItem, rejected: (key: string) => boolean): NextPrompt | null {
  const prompts = promptsOf(item);
  for (const [index, prompt] of prompts.entries()) {
    const asked = withPrompt(item, prompt);
    if (!rejected(requestKey(asked))) return { number: index + 1, of: prompts.length, item: asked };
  }
  return null;
}

/** The rejections a ledger's rejected attempts stand for; an attempt whose body is not a request has none. */
export function rejectionsOf(
  attempts: readonly AttemptRecord[],
  variantOf: (itemId: string) => number,
): Rejection[] {
  return attempts.flatMap((attempt) => {
    const key = requestKeyOfBody(attempt.requestBody, variantOf(attempt.itemId));
    if (key === null) return [];
    return [
      {
        key,
        itemId: attempt.itemId,
        prompt: promptOfBody(attempt.requestBody),
        message: attempt.errorMessage,
        jobId: attempt.jobId,
        at: attempt.completedAt ?? attempt.answeredAt,
      },
    ];
  });
}

function promptOfBody(body: string): string {
  const prompt = (JSON.parse(body) as { input?: { prompt?: unknown } }).input?.prompt;
  return typeof prompt === 'string' ? prompt : '';
}

/**
 * The rejected requests of a batch: those the ledger held when the run began, and those of this
 * run. An item sent again on purpose (`asked`) is held only to this run's: a redo sends its
 * prompts again from its own, each once.
 */
export class Rejections {
  readonly #before = new Map<string, Rejection>();
  readonly #during = new Map<string, Rejection>();
  readonly #asked: ReadonlySet<string>;

  constructor(before: readonly Rejection[], asked: ReadonlySet<string> = new Set()) {
    for (const rejection of before) this.#before.set(rejection.key, rejection);
    this.#asked = asked;
  }

  /** A request moderation rejected in this run. */
  add(rejection: Rejection): void {
    this.#during.set(rejection.key, rejection);
  }

  /** The rejection that keeps `itemId` from sending the request `key`, or undefined. */
  of(itemId: string, key: string): Rejection | undefined {
    return this.#during.get(key) ?? (this.#asked.has(itemId) ? undefined : this.#before.get(key));
  }

  /** What the item sends next, or null when every one of its prompts is rejected for it. */
  next(item: ManifestItem): NextPrompt | null {
    // Most batches have no rejection: no item needs its requests' keys made to know that.
    if (this.empty) return { number: 1, of: promptsOf(item).length, item };
    return nextPrompt(item, (key) => this.of(item.id, key) !== undefined);
  }

  /**
   * Whether an item that failed `content_rejected` has a fallback left to send: a prompt after its
   * own whose request is not rejected. Its own prompt never counts: the item failed on it, and a
   * ledger that cannot say so by key (a job an import adopted, whose recorded body is not the
   * request the item makes) must not send a rejected request again.
   */
  fallbackLeft(item: ManifestItem): boolean {
    return (this.next(item)?.number ?? 1) > 1;
  }

  /** The item as it would be sent now: its next prompt's, or itself when none is left. */
  asSent(item: ManifestItem): ManifestItem {
    return this.next(item)?.item ?? item;
  }

  /** The rejection of the item's last prompt: what an item with none left says. */
  lastOf(item: ManifestItem): Rejection | undefined {
    const prompts = promptsOf(item);
    return this.of(item.id, requestKey(withPrompt(item, prompts[prompts.length - 1]!)));
  }

  /** Whether any request is known rejected: with none, every item sends its own prompt. */
  get empty(): boolean {
    return this.#before.size === 0 && this.#during.size === 0;
  }
}

/** Words for the prompt an item sends: `fallback prompt 2 of 3`, or `its prompt`. */
export function promptWords(next: Pick<NextPrompt, 'number' | 'of'>): string {
  return next.number === 1 ? 'its prompt' : `fallback prompt ${next.number - 1} of ${next.of - 1}`;
}
