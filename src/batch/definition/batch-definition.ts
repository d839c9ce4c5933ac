import { hostname } from 'node:os';
import { UserError } from '../../errors.js';
import type { LedgerLifecycle, SharedLedger, StoredDefinition } from '../../ledger/index.js';
import {
  type BatchDefinition,
  type DefinitionDiff,
  definitionOf,
  definitionText,
  diffDefinitions,
  parseDefinition,
} from '../../manifest/definition.js';
import type { Manifest } from '../../manifest/index.js';
import { definitionDiffersWords, definitionRefusalWords } from '../../runner/definition-words.js';
import type { Notice } from '../resolve/warnings.js';

/**
 * One definition per shared batch (docs/shared-ledger.md): a runner's manifest against the one its
 * PostgreSQL ledger stores. A SQLite ledger has none: its manifest file is the definition.
 */

/** Where a manifest stands against its shared batch's definition. */
export type DefinitionStanding =
  /** The ledger keeps no definition (SQLite). */
  | { kind: 'none' }
  /** The batch has no definition yet: a run writes this manifest's as revision 1. */
  | { kind: 'first' }
  | { kind: 'same'; revision: number }
  | { kind: 'differs'; revision: number; diff: DefinitionDiff; message: string };

/** The manifest against the batch's current definition; reads only. */
export async function definitionStanding(
  ledger: (SharedLedger & Pick<LedgerLifecycle, 'path'>) | null,
  manifest: Manifest,
): Promise<DefinitionStanding> {
  if (!ledger?.definitions) return { kind: 'none' };
  const stored = await ledger.definitions.current();
  if (stored === null) return { kind: 'first' };
  const mine = definitionOf(manifest);
  if (definitionText(mine).hash === stored.hash) return { kind: 'same', revision: stored.revision };
  const diff = diffDefinitions(parseDefinition(stored.definition), mine);
  const context = { batch: manifest.name, ledger: ledger.path, revision: stored.revision };
  return { kind: 'differs', revision: stored.revision, diff, message: definitionDiffersWords(diff, context) };
}

/** What a run starts on: the revision it runs, and whether it wrote it. */
export interface SettledDefinition {
  revision: number;
  /** This run wrote the revision: the batch's first, or a new one (`redefine`). */
  wrote: 'first' | 'redefined' | null;
  ledger: string;
}

/**
 * Before a run sends anything: the batch's definition is this manifest's (written as revision 1
 * when there is none), or `redefine` makes it the next revision, in one transaction; otherwise the
 * run is refused with what differs (exit 2, `definition_differs`). Null for a SQLite ledger.
 */
export async function settleDefinition(
  ledger: SharedLedger & Pick<LedgerLifecycle, 'path'>,
  manifest: Manifest,
  redefine: boolean,
): Promise<SettledDefinition | null> {
  const definitions = ledger.definitions;
  if (definitions === null) return null;
  const mine = definitionOf(manifest);
  const { text, hash } = definitionText(mine);
  const stored = await definitions.current();
  if (stored?.hash === hash) return { revision: stored.revision, wrote: null, ledger: ledger.path };
  if (stored !== null && !redefine) throw refusal(ledger, manifest, stored, mine);
  const next = { hash, definition: text, budgetMicros: mine.budgetMicros, definedBy: hostname() };
  const now = await definitions.define(next, stored?.revision ?? 0);
  // Another runner wrote another revision meanwhile: this one is refused against it.
  if (now.hash !== hash) throw refusal(ledger, manifest, now, mine);
  return { revision: now.revision, wrote: stored === null ? 'first' : 'redefined', ledger: ledger.path };
}

/** What a run that made a new revision says before it spends. */
export function redefinedNotice(settled: SettledDefinition | null, batch: string): Notice | null {
  if (settled?.wrote !== 'redefined') return null;
  return {
    code: 'batch_redefined',
    message:
      `the manifest is now the definition of batch "${batch}" (revision ${settled.revision}): runners still on ` +
      `revision ${settled.revision - 1} stop submitting, and its budget binds every runner\n`,
    fields: { revision: settled.revision },
  };
}

function refusal(
  ledger: SharedLedger & Pick<LedgerLifecycle, 'path'>,
  manifest: Manifest,
  stored: StoredDefinition,
  mine: BatchDefinition,
): UserError {
  const diff = diffDefinitions(parseDefinition(stored.definition), mine);
  const context = { batch: manifest.name, ledger: ledger.path, revision: stored.revision };
  return new UserError(definitionRefusalWords(diff, context), 'definition_differs', {
    revision: stored.revision,
    settings: diff.settings.map((setting) => setting.name),
    added: diff.added,
    removed: diff.removed,
    changed: diff.changed.map((item) => item.id),
    option: 'redefine',
  });
}
