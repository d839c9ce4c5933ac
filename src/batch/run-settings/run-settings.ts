import { UserError } from '../../errors.js';
import { type CheckFunction, ownChecksOf } from '../../runner/own-checks.js';
import type { RunOptions } from '../../runner/run-context.js';
import type { Batch } from '../resolve/resolve-batch.js';
import { type Connection, type ServiceTimings, serviceTarget } from '../service/service-check.js';
import { selectItems } from './item-selection.js';
import { redoIds } from './redo-list.js';

/** How many jobs a run keeps at the service at once when the manifest sets no `concurrency`. */
export const DEFAULT_SLOT_LIMIT = 3;

/** Everything a run reads from its choices and the batch's settings, checked before anything is opened. */
export interface RunSettings extends ServiceTimings {
  /** Null for the embedded sandbox: its address is known only once it listens. */
  connection: Connection | null;
  /** The service the ledger is bound to (docs/services.md). */
  identity: string;
  runner: RunOptions;
}

/**
 * What a caller chose for one run: an API caller's options (the CLI's flags), already checked. The
 * runner's options it gives as they are (`maxUnsaved`, `retryFailed`, ...) are handed over
 * untouched; `redo`, `only` and `check` are worked out here.
 */
export type RunChoices = Partial<Omit<RunOptions, 'redo' | 'only' | 'ownChecks'>> & {
  redo: string[];
  /** Item ids or glob patterns; empty for every item. */
  only: readonly string[];
  pollIntervalMs: number | null;
  /** A check of your own, as a function, after the manifest's `checks:` (docs/checks.md). */
  check?: CheckFunction | undefined;
};

export function runSettings(choices: RunChoices, batch: Batch): RunSettings {
  const { redo: asked, only: patterns, check, ...passed } = choices;
  const redo = redoIds(batch.manifest, asked);
  const { httpTimeoutMs, preflightWindowMs, modelBusyDelayMs } = batch.settings;
  const only = selectItems(batch.manifest, patterns);
  const outside = only ? redo.filter((id) => !only.has(id)) : [];
  if (outside.length > 0)
    throw new UserError(
      `\`redo\` ${outside.join(' ')}: not among the items \`only\` selects, so the redo would not happen; ` +
        'add it to `only` or drop `only`. Nothing was submitted',
      'selection_empty',
      { option: 'redo', ids: outside, only: patterns },
    );
  const target = serviceTarget(batch, {
    what: 'no service to run against',
    sandbox: 'try the manifest offline',
  });
  return {
    ...target,
    httpTimeoutMs,
    preflightWindowMs,
    runner: {
      ...passed,
      regenerateExpired: passed.regenerateExpired ?? false,
      downloadConcurrency: 4,
      maxUnsaved: passed.maxUnsaved ?? null,
      defaultSlotLimit: DEFAULT_SLOT_LIMIT,
      redo,
      ...(httpTimeoutMs === null ? {} : { downloadTimeoutMs: httpTimeoutMs }),
      ...(modelBusyDelayMs === null ? {} : { modelBusyDelayMs }),
      only,
      retryFailed: passed.retryFailed ?? false,
      ownChecks: ownChecksOf(batch.manifest, batch.settings.hookEnv, check),
    },
  };
}
