import type { ReusableTake } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import {
  compactRequestKey,
  hexKey,
  manifestVariants,
  SAME_VIDEO_WORDS,
  variantOfItem,
} from '../../runner/request-key.js';
import { heldResultOf, TakeIndex } from '../../runner/take-index.js';
import type { Decision } from './plan-decisions.js';

/**
 * What `plan` says of items a saved take already answers (runner/reuse-takes.ts, the run's own
 * rule): an item run would pay for, or an expired one, whose very request (model, input, variant)
 * has an intact saved take anywhere in the batch is `reused`: free, with the take it copies.
 * `takeIsThere` says whether a take's files are still as saved (plan checks them as it checks the
 * items' own files). Pure but for that predicate.
 */
export function planReuses(
  items: readonly ManifestItem[],
  decisions: Array<Decision | undefined>,
  takes: () => readonly ReusableTake[],
  takeIsThere: (take: ReusableTake) => boolean,
  /** The item as run would send it: past a prompt moderation rejected, with its next (runner/fallback.ts). */
  sentAs: (item: ManifestItem) => ManifestItem = (item) => item,
  /** The time a job's `expires_at` is judged by: a held job's output is fetched again, not bought. */
  nowMs = Date.now(),
): void {
  const wanting = items.flatMap((_item, index) => (wantsTake(decisions[index]) ? [index] : []));
  if (wanting.length === 0) return;
  const variants = manifestVariants(items);
  const reuses = new PlanReuses(takes(), (id) => variantOfItem(variants, id), takeIsThere, sentAs, nowMs);
  items.forEach((item, position) => {
    reuses.acquired(item, decisions[position]?.label);
  });
  for (const position of wanting) decisions[position] = reuses.decide(items[position]!, decisions[position]!);
}

/**
 * planReuses' rule an item at a time, for a plan whose items go past in manifest order
 * (plan-stream.ts): first every result the run acquires anyway (`acquired`, in manifest order),
 * then each item that wants a take (`decide`, in manifest order).
 */
export class PlanReuses {
  readonly #index: TakeIndex;
  /** A result the run fetches again for free, or a job it follows, or the first item submitted for a request. */
  readonly #submitted = new Map<string, string>();
  readonly #fetched = new Map<string, 'fetched again' | 'followed'>();

  constructor(
    takes: readonly ReusableTake[],
    variantOf: (itemId: string) => number,
    private readonly takeIsThere: (take: ReusableTake) => boolean,
    private readonly sentAs: (item: ManifestItem) => ManifestItem = (item) => item,
    /** The time a job's `expires_at` is judged by: a held job's output is fetched again, not bought. */
    private readonly nowMs = Date.now(),
  ) {
    this.#index = new TakeIndex(takes, variantOf);
  }

  /**
   * A result the run fetches again for free, or a job it follows (in flight), is acquired once: an
   * item asking for it waits for it (runner/twins.ts).
   */
  acquired(item: ManifestItem, label: Decision['label'] | undefined): void {
    if (label !== 'refetch' && label !== 'in_flight') return;
    const key = compactRequestKey(this.sentAs(item));
    if (this.#submitted.has(key)) return;
    this.#submitted.set(key, item.id);
    this.#fetched.set(item.id, label === 'refetch' ? 'fetched again' : 'followed');
  }

  /** What becomes of an item that wants a take (wantsTake): its decision, or reused, or done, or fetched again. */
  decide(item: ManifestItem, decision: Decision): Decision {
    // Kept for every item submitted: half the memory of the usual form (a million items are planned).
    const key = compactRequestKey(this.sentAs(item));
    const current = decision.changedSince?.id ?? null;
    const takes = this.#index.empty ? [] : this.#index.find(hexKey(key), item.id, null);
    const found = takes.find(this.takeIsThere);
    if (found !== undefined) {
      // Its own current take answers it: only what the key leaves out changed (reuse-takes.ts).
      return found.attemptId === current && found.itemId === item.id
        ? { label: 'done', submit: false, reason: SAME_VIDEO_WORDS }
        : reusedDecision(found);
    }
    if (!decision.submit) return decision;
    // A twin: the run submits the first item of a request and copies its take to the others.
    const first = this.#submitted.get(key);
    if (first !== undefined) return twinDecision(first, this.#fetched.get(first) ?? 'submitted');
    this.#submitted.set(key, item.id);
    // No intact take, but the service still holds a job of it: fetched again (runner/held-results.ts).
    const held = heldResultOf(takes, this.nowMs);
    if (held === undefined) return decision;
    this.#fetched.set(item.id, 'fetched again');
    return fetchDecision(held);
  }
}

function fetchDecision(take: ReusableTake): Decision {
  return {
    label: 'refetch',
    submit: false,
    reusedFrom: { item: take.itemId, take: take.take },
    reason:
      `no saved take of its request is intact (take ${take.take} of ${take.itemId} is missing or altered); ` +
      `the service keeps job ${take.jobId}'s output until ${take.expiresAt}: fetched again as a new take, nothing to pay`,
  };
}

function twinDecision(first: string, how: 'submitted' | 'fetched again' | 'followed'): Decision {
  return {
    label: 'reused',
    submit: false,
    reusedFrom: { item: first, take: null },
    reason: `the same request as ${first}, ${how} in this run: its take is copied once saved, nothing to pay`,
  };
}

/** As the run decides: what it would pay for or holds expired, unless an earlier job is still followed. */
export function wantsTake(decision: Decision | undefined): boolean {
  if (decision === undefined || decision.label === 'redo' || decision.label === 'renamed' || decision.reroll)
    return false;
  if (!decision.submit && decision.label !== 'expired') return false;
  const earlier = decision.changedSince;
  const followed =
    earlier?.state === 'accepted' &&
    !earlier.filesSaved &&
    (earlier.jobStatus === 'queued' || earlier.jobStatus === 'running' || earlier.jobStatus === 'succeeded');
  return !followed;
}

function reusedDecision(take: ReusableTake): Decision {
  const job = take.jobId === null ? '' : ` (job ${take.jobId})`;
  return {
    label: 'reused',
    submit: false,
    reusedFrom: { item: take.itemId, take: take.take },
    reason: `the same request as take ${take.take} of ${take.itemId}${job}: its saved file is copied, nothing to pay`,
  };
}
