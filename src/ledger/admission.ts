import type { NewAttempt } from './attempt-writes.js';

/**
 * Which of a runner's new attempts a shared ledger admits (RunnerClaims.prepare), decided from
 * what it read under the batch's lock: pure, so that the one rule is read in one place.
 */

/** An item as admission found it: whether this runner may take it, and its newest attempt's seq. */
export interface Candidate {
  itemId: string;
  free: boolean;
  latest: number;
}

export interface BatchRoom {
  /** Unanswered POSTs and unfinished jobs of the batch, every runner's. */
  open: number;
  /** Spent and reserved, every runner's. */
  committed: number;
  slotLimit: number;
  budgetMicros: number | null;
}

export interface Verdicts {
  admitted: Set<NewAttempt>;
  elsewhere: string[];
  noRoom: string[];
}

/**
 * Each attempt in order is admitted only if a slot of the batch is free, its reservation fits
 * what is left of the budget after every charge and reservation of every runner, and its item is
 * this runner's to work (free, its own, or its lease lapsed; and no runner sent a newer attempt
 * of it than the one this runner knew). As the runner's own budget check does, an attempt whose
 * reservation does not fit lets a smaller one after it go; once the slots are full, none goes.
 */
export function admit(
  attempts: readonly NewAttempt[],
  candidates: readonly Candidate[],
  room: BatchRoom,
): Verdicts {
  const items = new Map(candidates.map((candidate) => [candidate.itemId, { ...candidate }]));
  const verdicts: Verdicts = { admitted: new Set(), elsewhere: [], noRoom: [] };
  let { open, committed } = room;
  let slotsFull = false;
  for (const attempt of attempts) {
    const slot: boolean = open < room.slotLimit && !slotsFull;
    slotsFull = !slot;
    const fits = room.budgetMicros === null || committed + attempt.reservedMicros <= room.budgetMicros;
    const item = items.get(attempt.itemId);
    if (!slot || !fits) verdicts.noRoom.push(attempt.itemId);
    else if (!item?.free || Number(item.latest) !== attempt.seq - 1) verdicts.elsewhere.push(attempt.itemId);
    else {
      verdicts.admitted.add(attempt);
      item.latest = attempt.seq;
      open += 1;
      committed += attempt.reservedMicros;
    }
  }
  return verdicts;
}
