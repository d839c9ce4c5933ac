import type { LedgerConnection } from './ledger-connection.js';

/** The runs of a batch and its event log: what happened when, for people and for import. */

export function startRun(c: LedgerConnection, pid: number): number {
  const info = c
    .prepare('INSERT INTO runs (batch_id, pid, started_at) VALUES (?, ?, ?)')
    .run(c.batchId, pid, c.at());
  return Number(info.lastInsertRowid);
}

export function endRun(c: LedgerConnection, runId: number, exitCode: number): void {
  c.prepare('UPDATE runs SET ended_at = ?, exit_code = ? WHERE id = ?').run(c.at(), exitCode, runId);
}

export function lastRun(c: LedgerConnection): { pid: number; startedAt: string } | null {
  const row = c
    .prepare('SELECT pid, started_at AS startedAt FROM runs WHERE batch_id = ? ORDER BY id DESC LIMIT 1')
    .get(c.batchId) as { pid: number; startedAt: string } | undefined;
  return row ?? null;
}

/** One event, inside whatever step writes it; `detail` is stored as JSON. */
export function appendEvent(
  c: LedgerConnection,
  itemId: string | null,
  attemptId: number | null,
  kind: string,
  detail: unknown,
): void {
  c.prepare(
    'INSERT INTO events (at, batch_id, item_id, attempt_id, kind, detail) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(c.at(), c.batchId, itemId, attemptId, kind, detail === null ? null : JSON.stringify(detail));
}
