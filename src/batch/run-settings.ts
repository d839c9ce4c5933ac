import { ExitCode, UserError } from '../errors.js';
import type { Manifest } from '../manifest/index.js';
import type { RunOptions } from '../runner/run-context.js';
import type { Connection } from './placement.js';
import type { Host } from './host.js';
import { selectItems } from './item-selection.js';
import { millis, type ServiceTimings, serviceTarget, serviceTimings } from './service-check.js';

/** Everything a run reads from its choices and the environment, checked before anything is opened. */
export interface RunSettings extends ServiceTimings {
  /** Null for the embedded sandbox: its address is known only once it listens. */
  connection: Connection | null;
  /** The service the ledger is bound to (docs/services.md). */
  identity: string;
  runner: RunOptions;
}

/** What a caller chose for one run: the CLI's flags, or an API caller's options, already parsed. */
export interface RunChoices {
  sandbox: boolean;
  baseUrl: string | undefined;
  redo: string[];
  /** Item ids or glob patterns; empty for every item. */
  only: readonly string[];
  pollIntervalMs: number | null;
  regenerateExpired: boolean;
  retryFailed: boolean;
}

export function runSettings(choices: RunChoices, manifest: Manifest, host: Pick<Host, 'env'>): RunSettings {
  const { redo } = choices;
  const timings = serviceTimings(host);
  const { httpTimeoutMs } = timings;
  const modelBusyDelayMs = millis(host.env.MEDIABATCH_MODEL_BUSY_SECONDS, 'MEDIABATCH_MODEL_BUSY_SECONDS');
  const only = selectItems(manifest, choices.only);
  const outside = only ? redo.filter((id) => !only.has(id)) : [];
  if (outside.length > 0)
    throw new UserError(
      `--redo ${outside.join(' ')}: not among the items --only selects, so the redo would not happen; ` +
        'add it to --only or drop --only. Nothing was submitted',
      ExitCode.Usage,
      'selection_empty',
    );
  const target = serviceTarget(choices.sandbox, choices.baseUrl, host, {
    what: 'no service to run against',
    sandbox: 'try the manifest offline',
  });
  return {
    ...target,
    ...timings,
    runner: {
      pollIntervalMs: choices.pollIntervalMs,
      regenerateExpired: choices.regenerateExpired,
      downloadConcurrency: 4,
      defaultSlotLimit: 3,
      redo,
      ...(httpTimeoutMs === null ? {} : { downloadTimeoutMs: httpTimeoutMs }),
      ...(modelBusyDelayMs === null ? {} : { modelBusyDelayMs }),
      only,
      retryFailed: choices.retryFailed,
    },
  };
}
