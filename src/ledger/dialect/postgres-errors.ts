import { DatabaseError } from '../../errors.js';

/**
 * Telling a lost connection (run the step again once the database answers) from an answer the
 * database gave (a constraint, a refused login: the step fails), as pg reports them.
 */

const LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const LOST_MESSAGES =
  /Connection terminated|Query read timeout|timeout expired|not queryable|Client has encountered a connection error|Client was closed/i;

/** A connection that failed: refused, cut, timed out, or ended by the server (SQLSTATE 08xxx, 57P0x). */
export function isLost(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const state = error instanceof DatabaseError ? error.sqlState : code;
  const text = typeof state === 'string' ? state : '';
  return LOST_CODES.has(text) || /^(08|57P0)/.test(text) || LOST_MESSAGES.test(String(message ?? ''));
}

/**
 * An answer that says only that this transaction met another one (deadlock_detected, 40P01;
 * serialization_failure, 40001): the database rolled it back, and PostgreSQL's advice is to run it
 * again. Runners sharing a batch lock its items' rows in the order each step needs them.
 */
export function isConflict(error: unknown): boolean {
  return error instanceof DatabaseError && (error.sqlState === '40P01' || error.sqlState === '40001');
}

/** pg's own error (a SQLSTATE and a severity) as the ledger's DatabaseError; anything else as it is. */
export function asDatabaseError(error: unknown): unknown {
  if (error instanceof DatabaseError) return error;
  const { code, severity, constraint, message } = error as Record<string, unknown>;
  if (typeof code !== 'string' || typeof severity !== 'string') return error;
  return new DatabaseError(String(message), code, typeof constraint === 'string' ? constraint : null);
}

/**
 * The password pg asks for when the server wants one and neither the URL nor PGPASSWORD gave it:
 * a message saying where to put it, instead of pg's own ("client password must be a string").
 */
export function missingPassword(address: string): () => never {
  return () => {
    throw new DatabaseError(
      `the database at ${address} asks for a password: set PGPASSWORD, or put the password in the URL`,
      '28P01',
      null,
    );
  };
}

/** The words of an error, never more than its message (pg's errors never hold the password). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
