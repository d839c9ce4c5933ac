/**
 * `sandbox`'s flags: where the emulator listens, its configuration and its saved state.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const SANDBOX_FLAGS = [
  {
    name: 'port',
    kind: 'port',
    value: 'N',
    default: '4010',
    description: 'The loopback port to listen on; 0 picks a free one.',
  },
  {
    name: 'config',
    value: 'FILE',
    default: 'the demo settings',
    description: 'A YAML or JSON sandbox configuration (see docs/sandbox.md).',
  },
  {
    name: 'state',
    value: 'FILE',
    default: 'none: everything is forgotten when the sandbox stops',
    description: 'Keep jobs, keys and wallets in FILE, so a restarted sandbox knows its old jobs.',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
