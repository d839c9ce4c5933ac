import type { Statement } from './dialect/database.js';
import type { BatchDefinitions, StoredDefinition } from './ledger.js';
import type { LedgerContext } from './ledger-context.js';
import type { DefinitionRecord } from './records.js';

/**
 * A shared batch's definition, one row per revision (docs/shared-ledger.md, "One definition per
 * batch"). A new revision is written under the batch's lock, the one admission takes (claims.ts),
 * so no attempt is admitted against a revision that is no longer current. PostgreSQL only: a
 * ledger one run holds has its manifest file for a definition.
 */
export class StoredDefinitions implements BatchDefinitions {
  readonly #c: LedgerContext;

  constructor(c: LedgerContext) {
    this.#c = c;
  }

  current(): Promise<StoredDefinition | null> {
    const c = this.#c;
    return c.db.step(async () => {
      // A read-only look at a database without the batch, or older than definitions, finds none.
      if (c.none || !c.has('batch_definitions')) return null;
      const [row] = await c.db.read(currentQuery(c));
      return row ? numbers(row) : null;
    });
  }

  definedNames(limit: number): Promise<string[]> {
    const c = this.#c;
    return c.db.step(async () => {
      if (!c.has('batch_definitions') || !c.has('batches')) return [];
      const rows = await c.db.read(
        c.q
          .selectFrom('batches')
          .select('name')
          .where((eb) =>
            eb.exists(
              eb.selectFrom('batch_definitions').select('revision').whereRef('batch_id', '=', 'batches.id'),
            ),
          )
          .orderBy('name')
          .limit(limit)
          .compile(),
      );
      return rows.map((row) => row.name);
    });
  }

  define(next: Omit<StoredDefinition, 'revision' | 'definedAt'>, over: number): Promise<StoredDefinition> {
    const c = this.#c;
    return c.db.step(() =>
      c.db.transaction(async (tx) => {
        const lock = c.db.sql.lockBatch(c.q, c.batchId);
        const results = await tx.run([...(lock ? [lock] : []), currentQuery(c)]);
        const [row] = results[results.length - 1]!.rows as StoredDefinition[];
        const current = row ? numbers(row) : null;
        if (current !== null && (current.revision !== over || current.hash === next.hash)) return current;
        const [written] = await tx.run(
          [
            c.q
              .insertInto('batch_definitions')
              .values({
                batch_id: c.batchId,
                revision: (current?.revision ?? 0) + 1,
                hash: next.hash,
                definition: next.definition,
                budget_micros: next.budgetMicros,
                defined_at: c.at(),
                defined_by: next.definedBy,
              })
              .returning(COLUMNS)
              .compile(),
          ],
          true,
        );
        return numbers(written!.rows[0] as StoredDefinition);
      }),
    );
  }
}

const COLUMNS = [
  'revision',
  'hash',
  'definition',
  'budget_micros as budgetMicros',
  'defined_at as definedAt',
  'defined_by as definedBy',
] as const;

/** Every revision of the batch, oldest first, for a copy (batch-dump.ts); none where SQLite keeps none. */
export async function dumpedDefinitions(c: LedgerContext): Promise<DefinitionRecord[]> {
  if (!c.can.storesDefinitions || c.none || !c.has('batch_definitions')) return [];
  const rows = await c.db.read(
    c.q
      .selectFrom('batch_definitions')
      .select(COLUMNS)
      .where('batch_id', '=', c.batchId)
      .orderBy('revision')
      .compile(),
  );
  return rows.map((row) => numbers(row as StoredDefinition));
}

/** The rows that load `definitions` into this batch; none into SQLite, which keeps no definition. */
export function definitionRows(c: LedgerContext, definitions: readonly DefinitionRecord[]) {
  if (!c.can.storesDefinitions) return [];
  return definitions.map((one) => ({
    batch_id: c.batchId,
    revision: one.revision,
    hash: one.hash,
    definition: one.definition,
    budget_micros: one.budgetMicros,
    defined_at: one.definedAt,
    defined_by: one.definedBy,
  }));
}

/** The batch's current revision: the highest. */
export function currentQuery(c: LedgerContext): Statement {
  return c.q
    .selectFrom('batch_definitions')
    .select(COLUMNS)
    .where('batch_id', '=', c.batchId)
    .orderBy('revision', 'desc')
    .limit(1)
    .compile();
}

export function numbers(row: StoredDefinition): StoredDefinition {
  return {
    ...row,
    revision: Number(row.revision),
    budgetMicros: row.budgetMicros === null ? null : Number(row.budgetMicros),
  };
}
