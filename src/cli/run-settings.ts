import { UserError } from '../errors.js';
import type { Manifest } from '../manifest/index.js';
import type { RunOptions } from '../runner/run-context.js';
import { type Connection, connectionFromEnv, parsePositiveSeconds } from './common.js';
import type { CliIo } from './io.js';
import { selectItems } from './item-selection.js';
import type { CommandArgs } from './parse-args.js';
import { DEFAULT_PREFLIGHT_SECONDS } from './preflight.js';
import { readRedoIds } from './redo-list.js';
import { SANDBOX_IDENTITY, serviceIdentity } from './service.js';

/** Everything `run` reads from its flags and the environment, checked before anything is opened. */
export interface RunSettings {
  /** Null for --sandbox: the embedded sandbox's address is known only once it listens. */
  connection: Connection | null;
  /** The service the ledger is bound to (docs/services.md). */
  identity: string;
  preflightWindowMs: number;
  httpTimeoutMs: number | null;
  runner: RunOptions;
}

const seconds = (text: string | undefined, name: string): number | null => {
  const value = parsePositiveSeconds(text, name);
  return value === null ? null : value * 1000;
};

export function readRunSettings(args: CommandArgs<'run'>, manifest: Manifest, io: CliIo): RunSettings {
  const { values } = args;
  // Checked in the order a person reads the command line: flags first, then where to connect.
  const redo = readRedoIds(values.redo, io.cwd);
  const pollIntervalMs = seconds(values['poll-interval'], '--poll-interval');
  const httpTimeoutMs = seconds(io.env.MEDIABATCH_HTTP_TIMEOUT, 'MEDIABATCH_HTTP_TIMEOUT');
  const modelBusyDelayMs = seconds(io.env.MEDIABATCH_MODEL_BUSY_SECONDS, 'MEDIABATCH_MODEL_BUSY_SECONDS');
  const only = selectItems(manifest, values.only);
  const preflightWindowMs =
    seconds(io.env.MEDIABATCH_PREFLIGHT_SECONDS, 'MEDIABATCH_PREFLIGHT_SECONDS') ??
    DEFAULT_PREFLIGHT_SECONDS * 1000;
  const connection = values.sandbox ? null : connectionFromEnv(values['base-url'], io);
  if (!values.sandbox && !connection) {
    throw new UserError(
      'no service to run against: pass --base-url URL (or set MEDIAGEN_BASE_URL), or try the manifest offline with --sandbox',
    );
  }
  return {
    connection,
    identity: connection ? serviceIdentity(connection.baseUrl) : SANDBOX_IDENTITY,
    preflightWindowMs,
    httpTimeoutMs,
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
