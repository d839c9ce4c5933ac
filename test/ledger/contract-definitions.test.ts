import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { newAttempt } from '../support/ledger-fixtures.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * A shared batch's definition, one revision after another (BatchDefinitions), and admission held
 * to its current revision and budget (RunnerClaims.prepare). A SQLite ledger keeps none.
 */

const defined = (hash: string, budgetMicros: number | null = null) => ({
  hash,
  definition: `{"h":"${hash}"}`,
  budgetMicros,
  definedBy: 'host-a',
});

describe('the SQLite ledger', () => {
  it('keeps no definition: its manifest file is the definition', async () => {
    const ledger = await openLedger(
      { kind: 'sqlite', path: join(tempDir('mediabatch-def-'), 'l.sqlite'), shown: 'l' },
      'b',
      '/m.yaml',
      {
        leaseMs: 1000,
        reconnectWithinMs: 1000,
      },
    );
    try {
      expect(ledger.definitions).toBeNull();
    } finally {
      await ledger.close();
    }
  });
});

describe.skipIf(skipPostgresTests)('the shared ledger: one definition per batch', () => {
  const postgres = usePostgresServer();
  let url: string;
  let root: string;
  const open: Ledger[] = [];

  afterAll(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
  });
  beforeEach(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
    url = await postgres.server.createDatabase('definitions');
    root = tempDir('mediabatch-definitions-');
  });

  async function ledgerOf(runnerId?: string, readonly = false): Promise<Ledger> {
    const ledger = await openLedger(postgresLocation(url, {}), 'b', join(root, 'm.yaml'), {
      ...(runnerId ? { runnerId } : {}),
      ...(readonly ? { readonly: true } : {}),
      leaseMs: 1000,
      reconnectWithinMs: 1000,
    });
    open.push(ledger);
    return ledger;
  }

  it('writes revision 1 once, keeps it for the same hash, and a new revision only over the current one', async () => {
    const first = await ledgerOf('r1');
    const second = await ledgerOf('r2');
    expect(await first.definitions!.current()).toBeNull();
    const one = await first.definitions!.define(defined('h1', 500), 0);
    expect(one).toMatchObject({ revision: 1, hash: 'h1', budgetMicros: 500, definedBy: 'host-a' });
    // Another runner that also saw none is not written over: it gets revision 1 back.
    expect(await second.definitions!.define(defined('h2'), 0)).toMatchObject({ revision: 1, hash: 'h1' });
    // The same hash again writes nothing.
    expect(await second.definitions!.define(defined('h1'), 1)).toMatchObject({ revision: 1, hash: 'h1' });
    const two = await second.definitions!.define(defined('h2', 300), 1);
    expect(two).toMatchObject({ revision: 2, hash: 'h2', budgetMicros: 300, definition: '{"h":"h2"}' });
    // A writer still over revision 1 is not written: it gets the current one back.
    expect(await first.definitions!.define(defined('h3'), 1)).toMatchObject({ revision: 2, hash: 'h2' });
    expect(await first.definitions!.current()).toMatchObject({ revision: 2, hash: 'h2' });
  });

  it('reads none from a database without the batch, read-only', async () => {
    expect(await (await ledgerOf(undefined, true)).definitions!.current()).toBeNull();
  });

  it('admits nothing to a runner on an older revision, and holds every runner to the current budget', async () => {
    const ledger = await ledgerOf('r1');
    await ledger.putItems(
      ['a', 'b'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
    );
    await ledger.definitions!.define(defined('h1', 100), 0);
    await ledger.definitions!.define(defined('h2', 150), 1);
    const stale = await ledger.claims!.prepare([newAttempt('a', 1, { reserved: 100 })], {
      slotLimit: 4,
      budgetMicros: null,
      revision: 1,
    });
    expect(stale).toEqual({ admitted: [], elsewhere: [], noRoom: [], redefined: 2, batchInUse: 0 });
    expect(await ledger.listAttempts()).toHaveLength(0);
    // The runner's own budget says none; the current revision's 150 binds.
    const current = await ledger.claims!.prepare(
      [newAttempt('a', 1, { reserved: 100 }), newAttempt('b', 1, { reserved: 100 })],
      { slotLimit: 4, budgetMicros: null, revision: 2 },
    );
    expect(current.admitted.map((attempt) => attempt.itemId)).toEqual(['a']);
    expect(current.noRoom).toEqual(['b']);
    expect(current.redefined).toBeNull();
  });
});
