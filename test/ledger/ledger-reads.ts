import type { Ledger } from '../../src/ledger/ledger.js';
import { all } from '../support/ledger-fixtures.js';

/**
 * Every read of a ledger's batch, attempt ids replaced by their position in id order (each
 * database numbers its own): what the migration tests compare with what the synchronous ledgers
 * read of the same rows (fixtures/README-v7-and-postgres.md).
 */
export async function everyRead(l: Ledger): Promise<unknown> {
  const attempts = await l.listAttempts();
  const files = await l.listFiles();
  const items = await l.listItems();
  const ids = [...items.map((item) => item.itemId), 'zz'];
  const norm = (id: number) => attempts.findIndex((attempt) => attempt.id === id);
  return {
    items,
    attempts: attempts.map((a) => ({ ...a, id: norm(a.id) })),
    requests: await Promise.all(attempts.map((a) => l.attemptRequest(a.id))),
    savedAt: await Promise.all(attempts.map((a) => l.savedAt(a.id))),
    hasAttempts: await l.hasAttempts(),
    files: files.map((f) => ({ ...f, attemptId: norm(f.attemptId) })),
    wrote: await Promise.all(files.map((f) => l.wroteFile(f.path))),
    totals: await l.savedFileTotals(),
    summaries: await all(l.itemSummaries()),
    entries: (await all(l.itemEntries())).map((e) => ({
      ...e,
      attempt: e.attempt && { ...e.attempt, id: norm(e.attempt.id) },
    })),
    exports: await all(l.itemExports(ids)),
    paid: await l.paidItemsNotIn(['beach-sunrise']),
    prices: (await l.priceSamples()).map((p) => ({ ...p, id: norm(p.id) })),
    unsaved: (await l.unsavedSucceeded()).map((a) => ({ ...a, id: norm(a.id) })),
    facts: await all(l.savedFileFacts()),
    paths: await all(l.itemFilePaths()),
    keepers: await l.keepers(),
    savedTakes: (await l.savedTakes()).map((t) => ({ ...t, attemptId: norm(t.attemptId) })),
    reusable: (await l.reusableTakes()).map((t) => ({ ...t, attemptId: norm(t.attemptId) })),
    laterTakes: await l.hasLaterTakes(),
    service: await l.service(),
    money: await l.moneyTotals(),
    lastRun: await l.lastRun(),
  };
}
