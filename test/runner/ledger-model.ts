import {
  type AttemptRecord,
  type ItemRecord,
  type ItemState,
  newItemRecord,
  preparedAttempt,
} from '../../src/ledger/records.js';
import { formatUsd } from '../../src/money.js';
import type { BudgetState } from '../../src/runner/budget.js';
import type { ServiceJob } from './service-model.js';

/** Thrown right after a durable write when a kill was armed to strike there. */
export class Crash extends Error {}

/**
 * The ledger as the runner's decisions see it: items and attempts that survive a crash. Every
 * method is one transaction, as in src/ledger; a crash armed with `crashAfterWrites` strikes
 * right after the n-th of them commits.
 */
export class LedgerModel {
  readonly items = new Map<string, ItemRecord>();
  readonly attempts: AttemptRecord[] = [];
  crashAfterWrites: number | null = null;

  write(apply: () => void): void {
    apply();
    if (this.crashAfterWrites !== null && --this.crashAfterWrites <= 0) {
      this.crashAfterWrites = null;
      throw new Crash('crash');
    }
  }

  attempt(id: number): AttemptRecord {
    return this.attempts.find((attempt) => attempt.id === id)!;
  }

  putItems(records: readonly ItemRecord[]): void {
    this.write(() => {
      for (const record of records) this.items.set(record.itemId, record);
    });
  }

  /** Ledger.setItemState: retries_used kept unless given, error fields replaced. */
  setItem(itemId: string, state: ItemState, extra: { errorCode?: string; retriesUsed?: number } = {}): void {
    this.write(() => {
      const record = this.items.get(itemId)!;
      this.items.set(itemId, {
        ...record,
        state,
        errorCode: extra.errorCode ?? null,
        errorMessage: null,
        retriesUsed: extra.retriesUsed ?? record.retriesUsed,
      });
    });
  }

  updateAttempt(id: number, patch: Partial<AttemptRecord>): AttemptRecord {
    const index = this.attempts.findIndex((attempt) => attempt.id === id);
    this.write(() => {
      this.attempts[index] = { ...this.attempts[index]!, ...patch };
    });
    return this.attempts[index]!;
  }

  /** Ledger.prepareAttempt: key, body and reservation committed, item in flight. */
  prepare(itemId: string, hash: string, seq: number, reserve: number, maxCost: number | null): AttemptRecord {
    const id = this.attempts.length + 1;
    const attempt = preparedAttempt({
      id,
      itemId,
      seq,
      idempotencyKey: `key-${id}`,
      requestBody: JSON.stringify(maxCost === null ? {} : { max_cost_usd: formatUsd(maxCost) }),
      requestHash: hash,
      reservedMicros: reserve,
      createdAt: '',
    });
    this.write(() => {
      this.attempts.push(attempt);
      this.items.set(itemId, { ...this.items.get(itemId)!, state: 'in_flight' });
    });
    return attempt;
  }

  /** BatchRun.budgetState over Ledger.moneyTotals. */
  budgetState(budgetMicros: number | null): BudgetState {
    let spent = 0;
    let reserved = 0;
    for (const attempt of this.attempts) {
      spent += attempt.amountMicros - attempt.refundedMicros;
      if (attempt.state === 'prepared') reserved += attempt.reservedMicros;
    }
    return { budgetMicros, spentMicros: spent, reservedMicros: reserved };
  }
}

/** What a fetch of the job tells the ledger (jobSnapshot). */
export function jobPatch(job: ServiceJob): Partial<AttemptRecord> {
  return {
    jobId: job.id,
    jobStatus: job.status,
    amountMicros: job.amount,
    refundedMicros: job.refunded,
    errorCode: job.code,
  };
}

export const blankItem = newItemRecord;
