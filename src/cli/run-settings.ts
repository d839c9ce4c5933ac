import { UserError } from '../errors.js';
import type { Manifest } from '../manifest/index.js';
import type { RunOptions } from '../runner/run-context.js';
import type { Connection } from './common.js';
import type { CliIo } from './io.js';
import { selectItems } from './item-selection.js';
import type { CommandArgs } from './parse-args.js';
import { readRedoIds } from './redo-list.js';
import { millis, type ServiceTimings, serviceTarget, serviceTimings } from './service-check.js';

/** Everything `run` reads from its flags and the environment, checked before anything is opened. */
export interface RunSettings extends ServiceTimings {
  /** Null for --sandbox: the embedded sandbox's address is known only once it listens. */
  connection: Connection | null;
  /** The service the ledger is bound to (docs/services.md). */
  identity: string;
  runner: RunOptions;
}

export function readRunSettings(args: CommandArgs<'run'>, manifest: Manifest, io: CliIo): RunSettings {
  const { values } = args;
  // Checked in the order a person reads the command line: flags first, then where to connect.
  const redo = readRedoIds(values.redo, io.cwd);
  const pollIntervalMs = millis(values['poll-interval'], '--poll-interval');
  const timings = serviceTimings(io);
  const { httpTimeoutMs } = timings;
  const modelBusyDelayMs = millis(io.env.MEDIABATCH_MODEL_BUSY_SECONDS, 'MEDIABATCH_MODEL_BUSY_SECONDS');
  const only = selectItems(manifest, values.only);
  const outside = only ? redo.filter((id) => !only.has(id)) : [];
  if (outside.length > 0)
    throw new UserError(
      `--redo ${outside.join(' ')}: not among the items --only selects, so the redo would not happen; ` +
        'add it to --only or drop --only. Nothing was submitted',
    );
  const target = serviceTarget(values.sandbox, values['base-url'], io, {
    what: 'no service to run against',
    sandbox: 'try the manifest offline',
  });
  return {
    ...target,
    ...timings,
    runner: {
      pollIntervalMs,
      regenerateExpired: values['regenerate-expired'],
      downloadConcurrency: 4,
      defaultSlotLimit: 3,
      redo,
      ...(httpTimeoutMs === null ? {} : { downloadTimeoutMs: httpTimeoutMs }),
      ...(modelBusyDelayMs === null ? {} : { modelBusyDelayMs }),
      only,
      retryFailed: values['retry-failed'],
    },
  };
}
