import type { DefinitionDiff } from '../manifest/definition.js';
import { formatUsdHuman } from '../money.js';

/**
 * The words of a manifest that is not its shared batch's definition (docs/shared-ledger.md): the
 * refusal before a run sends anything, plan's word about it, and the stop of a runner whose batch
 * was redefined under it. Pure, so all three say the same thing.
 */

/** How many ids each list names before "and N more". */
const FIRST_FEW = 5;

function ids(list: readonly string[]): string {
  const shown = list.slice(0, FIRST_FEW).join(', ');
  return list.length > FIRST_FEW ? `${shown} and ${list.length - FIRST_FEW} more` : shown;
}

function settingValue(name: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (name === 'budget_usd') return formatUsdHuman(value as number);
  return String(value);
}

/** What differs, one clause per kind: settings by name, items by id (the first few). */
export function differenceWords(diff: DefinitionDiff): string[] {
  const clauses = diff.settings.map(
    (setting) =>
      `${setting.name} is ${settingValue(setting.name, setting.batch)} in the batch, ${settingValue(setting.name, setting.here)} here`,
  );
  if (diff.changed.length > 0) {
    const changed = diff.changed.map((item) => `${item.id} (${item.fields.join(', ')})`);
    clauses.push(`items changed: ${ids(changed)}`);
  }
  if (diff.added.length > 0) clauses.push(`items only here: ${ids(diff.added)}`);
  if (diff.removed.length > 0) clauses.push(`items only in the batch: ${ids(diff.removed)}`);
  return clauses;
}

export interface DefinitionContext {
  batch: string;
  /** The ledger as people see it: never a password. */
  ledger: string;
  /** The batch's current revision. */
  revision: number;
}

/** Why this manifest is not the batch's, and the two ways on. */
export function definitionDiffersWords(diff: DefinitionDiff, context: DefinitionContext): string {
  return (
    `the manifest is not the definition of batch "${context.batch}" in ${context.ledger} (revision ${context.revision}): ` +
    `${differenceWords(diff).join('; ')}. Run the batch as it is defined (with the copy of the manifest that defines it), ` +
    'or make this manifest its next revision with `redefine`: runners still on ' +
    `revision ${context.revision} then stop submitting`
  );
}

/** The refusal before a run sends anything. */
export function definitionRefusalWords(diff: DefinitionDiff, context: DefinitionContext): string {
  return `${definitionDiffersWords(diff, context)}; nothing was submitted`;
}

/** The stop of a runner whose batch got a new revision while it ran. */
export function redefinedStopWords(
  diff: DefinitionDiff,
  context: DefinitionContext,
  started: number,
): string {
  return (
    `stopping: the batch was redefined while this run worked on revision ${started}; ${definitionDiffersWords(diff, context)}. ` +
    'No new submissions; jobs in flight are still watched and saved'
  );
}
