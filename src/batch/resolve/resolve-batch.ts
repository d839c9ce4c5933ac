import { dirname, relative, resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { isSharedLocation, type LedgerLocation } from '../../ledger/index.js';
import type { Manifest, ManifestHead } from '../../manifest/index.js';
import { loadSandboxConfig, type SandboxConfig } from '../../sandbox/index.js';
import { placeBatch } from './placement.js';
import { type BatchSettings, readSettings } from './settings.js';

/** What a caller asks of a batch: the public options every call shares, already checked. */
export interface BatchOptions {
  ledger?: string | undefined;
  sandbox?: boolean | undefined;
  /** With `sandbox`: the embedded sandbox's configuration file, from `cwd`; default the demo settings. */
  sandboxConfig?: string | undefined;
  cwd?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  env?: NodeJS.ProcessEnv | Record<string, string | undefined> | undefined;
  /** How to name the manifest in the commands a refusal suggests; default its path from `cwd`. */
  manifestArg?: string | undefined;
}

/**
 * One batch, worked out once: every command and every public function starts from it, and
 * nothing below derives a ledger path or a sandbox placement, or reads the environment.
 */
export interface Batch<M extends ManifestHead = Manifest> {
  /** The manifest as this batch runs it (the sandbox's output location applied). */
  manifest: M;
  /** The manifest's folder: the ledger records saved files relative to it. */
  root: string;
  /** Where the ledger is: a SQLite file, or a shared PostgreSQL database (its password inside). */
  ledger: LedgerLocation;
  /** The ledger as shown to people: the file's path, or the database's URL without its password. */
  ledgerShown: string;
  /** The ledger this manifest uses when none is named (a refusal may suggest leaving one out). */
  defaultLedger: string;
  /** The ledger a sandbox run of this manifest keeps (null for a sandbox batch: it is `ledgerShown`). */
  sandboxLedger: string | null;
  sandbox: boolean;
  /** The embedded sandbox's configuration, read from `sandboxConfig`; null: the demo settings. */
  sandboxConfig: SandboxConfig | null;
  /** Where relative paths given by the caller start, and are shown from. */
  cwd: string;
  settings: BatchSettings;
  /** The service asked for: the call's base URL, else MEDIAGEN_BASE_URL; null for none. */
  baseUrl: string | null;
  /** The call's API key, else MEDIAGEN_API_KEY. */
  apiKey: string | null;
  /** How the caller named the manifest and the ledger, for the next step a refusal suggests. */
  named: { manifest: string; ledger: string | undefined; baseUrl: string | undefined };
}

/** Why a batch of the embedded sandbox has no place in a shared (PostgreSQL) ledger. */
export const SANDBOX_NOT_SHARED =
  'the embedded sandbox lives inside one process, so no other runner could reach its jobs: a shared ledger ' +
  'needs a service every runner reaches (a sandbox server started on its own, say, with its base URL)';

/**
 * The environment a batch's settings are read from: the one the call was given, else the
 * process's. The library's one read of `process.env` (the CLI's main.ts has its own).
 */
export function environmentOf(given: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  return given ?? process.env;
}

/** Where a call's relative paths start: its `cwd` option, else the process's working folder. */
export function callerCwd(options: { cwd?: string | undefined }): string {
  return resolve(options.cwd ?? process.cwd());
}

export function resolveBatch<M extends ManifestHead>(manifest: M, options: BatchOptions): Batch<M> {
  const cwd = callerCwd(options);
  const settings = readSettings(environmentOf(options.env));
  const sandbox = options.sandbox ?? false;
  const placed = placeBatch(manifest, {
    ledger: options.ledger,
    sandbox,
    cwd,
    postgresEnv: settings.postgresEnv,
  });
  if (sandbox && isSharedLocation(placed.ledger)) throw new UserError(SANDBOX_NOT_SHARED, 'invalid_option');
  if (options.sandboxConfig !== undefined && !sandbox)
    throw new UserError(
      '`sandboxConfig` configures the embedded sandbox: it goes with `sandbox`; without it the run is against the service',
      'invalid_option',
      { option: 'sandboxConfig' },
    );
  return {
    manifest: placed.manifest,
    root: dirname(manifest.file),
    ledger: placed.ledger,
    ledgerShown: placed.ledgerShown,
    defaultLedger: placeBatch(manifest, { ledger: undefined, sandbox, cwd }).ledgerShown,
    sandboxLedger: sandbox
      ? null
      : placeBatch(manifest, { ledger: undefined, sandbox: true, cwd }).ledgerShown,
    sandbox,
    sandboxConfig:
      options.sandboxConfig === undefined ? null : loadSandboxConfig(resolve(cwd, options.sandboxConfig)),
    cwd,
    settings,
    baseUrl: options.baseUrl ?? settings.baseUrl,
    apiKey: options.apiKey ?? settings.apiKey,
    named: {
      manifest: options.manifestArg ?? (relative(cwd, manifest.file) || manifest.file),
      ledger:
        options.ledger === undefined
          ? undefined
          : isSharedLocation(placed.ledger)
            ? placed.ledgerShown
            : options.ledger,
      baseUrl: options.baseUrl,
    },
  };
}
