import type { LedgerConnection } from './ledger-connection.js';
import type { ServiceBinding } from './records.js';
import { appendEvent } from './runs-and-events.js';

/**
 * The service this ledger belongs to, or null while none has answered a run's pre-flight. A
 * ledger opened read-only at an older schema has no such table yet: it is unbound too.
 */
export function boundService(c: LedgerConnection): ServiceBinding | null {
  const table = c.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'service'").get();
  if (!table) return null;
  const row = c.db.prepare('SELECT identity, bound_at AS boundAt FROM service WHERE id = 1').get() as
    | ServiceBinding
    | undefined;
  return row ?? null;
}

/** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
export function bindService(c: LedgerConnection, identity: string): ServiceBinding {
  c.db.transaction(() => {
    const info = c
      .prepare('INSERT OR IGNORE INTO service (id, identity, bound_at) VALUES (1, ?, ?)')
      .run(identity, c.at());
    if (info.changes > 0) appendEvent(c, null, null, 'service_bound', { service: identity });
  })();
  return boundService(c)!;
}
