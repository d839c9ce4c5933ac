import type { JobView, RunnerClaims } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import type { Next } from './next-step.js';

/** How soon an attempt that found no slot or budget left among all runners is tried again. */
export const NO_ROOM_RETRY_MS = 250;

/**
 * How often a run with nothing of its own left to do looks at the others' items: it ends soon after
 * they settle, instead of at its next renewal.
 */
const IDLE_TURN_MS = 1000;

/**
 * This run's share of a batch that several runners work through one shared ledger
 * (docs/shared-ledger.md). Which items are another runner's (`elsewhere`: a live lease, or a
 * newer attempt than this run knew), when the leases are renewed, and which items come back to
 * this run. No I/O of its own apart from the ledger's claims; the loop (run-loop.ts) turns it.
 */
export class SharedWork {
  readonly claims: RunnerClaims;
  readonly #elsewhere = new Set<string>();
  #nextRenewAt = 0;
  #lastTurnAt = 0;
  /** As the batch's lister: the status of each view this run wrote, by job. */
  readonly #published = new Map<string, string>();
  /** As the batch's lister: other runners' jobs the service does not show this run (shared-look.ts). */
  readonly #unseen = new Set<string>();
  #batchInUse: number | null = null;
  #ownAtAdmission = 0;
  #lookLineAt = Number.NEGATIVE_INFINITY;
  /** When a count last found the batch without room (offerNow). */
  #fullAt = Number.NEGATIVE_INFINITY;

  constructor(claims: RunnerClaims) {
    this.claims = claims;
  }

  /** The batch's slots in use by all its runners, as the last admission said (Admitted.batchInUse). */
  get batchInUse(): number | null {
    return this.#batchInUse;
  }

  /** Whether the lister's line is due: at most one per `intervalMs`. */
  lookLineDue(now: number, intervalMs: number): boolean {
    if (now < this.#lookLineAt + intervalMs) return false;
    this.#lookLineAt = now;
    return true;
  }

  /**
   * After an admission: the batch's slots in use it counted, and this run's own unfinished
   * attempts then (the ones it admitted among them).
   */
  admittedWith(inUse: number | undefined, ownUnfinished: number): void {
    if (inUse === undefined) return;
    this.#batchInUse = inUse;
    this.#ownAtAdmission = ownUnfinished;
  }

  /**
   * How many new attempts to offer the next admission, of `free` own slots: the batch's room as
   * the last admission left it, plus what this run freed since, and at least a few (other
   * runners free slots this run does not see until it asks). Offering every own free slot when
   * four runners share the batch's 200 made each admission try ten attempts for each it wrote,
   * all under the batch's lock (docs/performance.md).
   */
  offer(free: number, slotLimit: number, ownUnfinished: number): number {
    if (this.#batchInUse === null) return free;
    return Math.min(free, Math.max(SharedWork.PROBE_OFFER, this.#room(slotLimit, ownUnfinished)));
  }

  /**
   * The offer (offer), except while the batch's room looked used up at the last admission: then
   * the batch's slots in use are counted again first (one read, without the batch's lock) and
   * only the room found is offered, none if there is none. A probe of a few attempts sent to
   * admission each time was refused whole more often than not: 2,300 refusals for 1,500 items
   * admitted with four runners, each with its four statements and the batch's lock and sums.
   * A count that found no room is not made again for NO_ROOM_RETRY_MS: what this run frees meanwhile
   * it offers at once (#room), what others free waits that long. Counting at every turn of the
   * loop was 8,450 reads for 10,000 items with four runners, a third of their round trips.
   */
  async offerNow(free: number, slotLimit: number, ownUnfinished: number, now: number): Promise<number> {
    if (free <= 0 || this.#batchInUse === null || this.#room(slotLimit, ownUnfinished) > 0)
      return this.offer(free, slotLimit, ownUnfinished);
    if (now < this.#fullAt + NO_ROOM_RETRY_MS) return 0;
    this.admittedWith(await this.claims.slotsInUse(), ownUnfinished);
    const room = Math.max(0, this.#room(slotLimit, ownUnfinished));
    this.#fullAt = room > 0 ? Number.NEGATIVE_INFINITY : now;
    return Math.min(free, room);
  }

  /** The batch's room as the last count left it, plus what this run freed since. */
  #room(slotLimit: number, ownUnfinished: number): number {
    return slotLimit - this.#batchInUse! + Math.max(0, this.#ownAtAdmission - ownUnfinished);
  }

  /** The fewest attempts an admission is offered while the batch's room looks used up. */
  static readonly PROBE_OFFER = 8;

  /**
   * How many queued items past an offer of `offered` the admission leases or finds another
   * runner's (Admission.ahead): enough for the next offer or two, few enough that the batch's
   * last items are not kept from idle runners for long. Runners walk the same queue; four of them
   * offered 2.5 items another had already taken for each item admitted, each refused with its
   * own four statements.
   */
  static lookAhead(offered: number): number {
    return Math.min(SharedWork.MOST_AHEAD, Math.max(SharedWork.PROBE_OFFER * 4, offered * 2));
  }

  /** The most items an admission leases ahead: a few index lookups each, under the batch's lock. */
  static readonly MOST_AHEAD = 400;

  /** Renewals per lease: a runner stalled for two of them still keeps its items. */
  static readonly RENEWALS_PER_LEASE = 3;

  isElsewhere(itemId: string): boolean {
    return this.#elsewhere.has(itemId);
  }

  /** Items another runner works, whose end this run waits for before it ends itself. */
  get waitingOnOthers(): number {
    return this.#elsewhere.size;
  }

  elsewhere(itemId: string): void {
    this.#elsewhere.add(itemId);
  }

  /**
   * Of a start's (or an adoption's) steps, those this run may take: an item held by another
   * runner's live lease does nothing here; one to resume, watch, verify or fetch is claimed
   * first, and does nothing if another runner claimed it a moment before. Items to submit are
   * claimed when their attempts are admitted (claims.prepare).
   */
  async ownSteps(
    items: readonly ManifestItem[],
    steps: readonly Next[],
    settled: ReadonlySet<string>,
  ): Promise<Next[]> {
    const held = await this.claims.heldElsewhere();
    const wanted = items.filter(
      (item, index) => !held.has(item.id) && steps[index]!.kind !== 'none' && steps[index]!.kind !== 'submit',
    );
    const claimed = await this.claims.claim(wanted.map((item) => item.id));
    const wantedIds = new Set(wanted.map((item) => item.id));
    return steps.map((step, index) => {
      const id = items[index]!.id;
      // A settled item another runner is checking is left to it: nothing to wait for.
      const taken = wantedIds.has(id) && !claimed.has(id);
      const theirs = held.has(id) || (taken && !settled.has(id));
      if (theirs) this.#elsewhere.add(id);
      else this.#elsewhere.delete(id);
      return theirs || taken ? { kind: 'none' } : step;
    });
  }

  /** Whether the leases are due for renewal at `now` (then the next renewal is set). */
  renewalDue(now: number, idle: boolean): boolean {
    if (now < this.#nextRenewAt && !(idle && now >= this.#lastTurnAt + IDLE_TURN_MS)) return false;
    this.#lastTurnAt = now;
    this.#nextRenewAt = now + this.claims.leaseMs / SharedWork.RENEWALS_PER_LEASE;
    return true;
  }

  /** Time until the next renewal: the loop never sleeps past it. */
  untilRenewal(now: number, idle: boolean): number {
    const next = idle ? Math.min(this.#nextRenewAt, this.#lastTurnAt + IDLE_TURN_MS) : this.#nextRenewAt;
    return Math.max(1, next - now);
  }

  /**
   * Of a lister's views, those whose status changed since this run wrote them, now remembered as
   * written; null when there is nothing to write: none changed, and no job this run wrote a view
   * of has left `unfinished` (its view is then dropped with the next write).
   */
  changedViews(views: readonly JobView[], unfinished: readonly string[]): JobView[] | null {
    const still = new Set(unfinished);
    let left = false;
    for (const jobId of this.#published.keys())
      if (!still.has(jobId)) {
        this.#published.delete(jobId);
        left = true;
      }
    const changed = views.filter((view) => this.#published.get(view.jobId) !== view.status);
    for (const view of changed) this.#published.set(view.jobId, view.status);
    return changed.length > 0 || left ? changed : null;
  }

  /** The service answered this run's lister that it does not know another runner's job: not asked again. */
  notSeenByLister(jobId: string): void {
    this.#unseen.add(jobId);
  }

  unseenByLister(jobId: string): boolean {
    return this.#unseen.has(jobId);
  }

  /**
   * After a renewal: `lost` are this run's items another runner took over (this run stalled past
   * its lease), `held` the items other runners hold now. Returns the items to read again: those
   * no runner holds any more (finished, or their lease lapsed).
   */
  settle(lost: readonly string[], held: ReadonlySet<string>): string[] {
    for (const id of lost) this.#elsewhere.add(id);
    const back = [...this.#elsewhere].filter((id) => !held.has(id) && !lost.includes(id));
    for (const id of back) this.#elsewhere.delete(id);
    for (const id of held) this.#elsewhere.add(id);
    return back;
  }
}

/** The first `count` of the queued `ids`, each with the newest seq this run knows of it (Admission.ahead). */
export function aheadOf(
  ids: Iterable<string>,
  count: number,
  seqOf: (itemId: string) => number,
): Array<{ itemId: string; seq: number }> {
  const ahead: Array<{ itemId: string; seq: number }> = [];
  for (const itemId of ids) {
    if (ahead.length >= count) break;
    ahead.push({ itemId, seq: seqOf(itemId) });
  }
  return ahead;
}
