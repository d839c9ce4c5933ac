import type { Statement, StatementResult } from './database.js';

/** One write step waiting its turn: its statements, and what its caller makes of their results. */
interface PendingWrite {
  statements: readonly Statement[];
  settle: (results: StatementResult[]) => void;
  fail: (error: unknown) => void;
}

/**
 * Write steps of one batch each (LedgerDatabase.write) that wait their turn one after another, with
 * no other step between them, go to the database together: one transaction, one round trip. A
 * shared ledger's runner sends its steps through one connection, one at a time, and each POST's
 * answer, each look and each saved take was a step of its own: its next admission waited behind
 * them all (docs/performance.md). Joining only the group last queued keeps every step in the order
 * it was called. A group that fails for a reason other than a lost database runs its writes again
 * one by one, so that a write fails alone, as it would have on its own.
 */
export class WriteGroups {
  /** The group last queued, while it has not begun and no other step was queued after it. */
  #open: PendingWrite[] | null = null;
  #openAt = -1;
  /** Statements in the open group. */
  #openStatements = 0;

  constructor(
    private readonly queue: {
      readonly calls: number;
      run<T>(work: () => Promise<T>): Promise<T>;
    },
    private readonly send: (statements: readonly Statement[]) => Promise<StatementResult[]>,
    private readonly isLost: (error: unknown) => boolean,
  ) {}

  /** The most statements one group sends: a transaction stays short under the batch's rows. */
  static readonly MOST_STATEMENTS = 400;

  write<T>(statements: readonly Statement[], parse: (results: StatementResult[]) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: PendingWrite = {
        statements,
        settle: (results) => {
          try {
            resolve(parse(results));
          } catch (error) {
            reject(error);
          }
        },
        fail: reject,
      };
      const open = this.#open;
      const fits = this.#openStatements + statements.length <= WriteGroups.MOST_STATEMENTS;
      if (open !== null && this.queue.calls === this.#openAt && fits) {
        open.push(pending);
        this.#openStatements += statements.length;
        return;
      }
      const group = [pending];
      this.#open = group;
      this.#openStatements = statements.length;
      void this.queue.run(() => this.#sendGroup(group));
      this.#openAt = this.queue.calls;
    });
  }

  async #sendGroup(group: PendingWrite[]): Promise<void> {
    if (this.#open === group) this.#open = null;
    if (group.length > 1) {
      let results: StatementResult[] | null = null;
      try {
        results = await this.send(group.flatMap((each) => each.statements));
      } catch (error) {
        if (this.isLost(error)) {
          for (const each of group) each.fail(error);
          return;
        }
      }
      if (results !== null) {
        let at = 0;
        for (const each of group) {
          each.settle(results.slice(at, at + each.statements.length));
          at += each.statements.length;
        }
        return;
      }
    }
    for (const each of group) {
      try {
        each.settle(await this.send(each.statements));
      } catch (error) {
        each.fail(error);
      }
    }
  }
}
