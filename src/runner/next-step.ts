import type { AttemptRecord } from '../ledger/index.js';

/** What restoring one item asks of the rest of the run. */
export type Next =
  | { kind: 'submit' }
  | { kind: 'watch'; attempt: AttemptRecord }
  | { kind: 'verify'; attempt: AttemptRecord }
  | { kind: 'refetch'; attempt: AttemptRecord }
  | { kind: 'resend'; attempt: AttemptRecord }
  | { kind: 'none' };
