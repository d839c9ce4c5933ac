import { z } from 'zod';
import { OptionError } from '../../errors.js';
import type { Manifest, ManifestHead } from '../../manifest/index.js';
import { type Batch, resolveBatch } from './resolve-batch.js';
import type { Warn, Warning } from './warnings.js';

/** Where the ledger is: the options every call that reads a ledger shares. */
export const ledgerOptionsSchema = z.strictObject({
  /** The ledger file; default `.mediabatch/<name>.sqlite` beside the manifest (`sandbox/` below it for a sandbox). */
  ledger: z.string().min(1).optional(),
  /** Use the embedded sandbox's ledger and folders, like `--sandbox`. */
  sandbox: z.boolean().optional(),
  /** Where relative paths start; default the process's working folder. */
  cwd: z.string().min(1).optional(),
  /** The environment the library's settings are read from, once (docs/api.md); default: the process's environment. */
  env: z.record(z.string(), z.string().optional()).optional(),
  /** How to name the manifest in the commands a refusal suggests (`mediabatch import X`); default its path from `cwd`. */
  manifestArg: z.string().min(1).optional(),
});

/** The options of every call that may talk to the service. */
export const serviceOptionsSchema = ledgerOptionsSchema.extend({
  /** The service's base URL; default `env.MEDIAGEN_BASE_URL`. */
  baseUrl: z.string().min(1).optional(),
  /** The API key; default `env.MEDIAGEN_API_KEY`. Never written to an error, event or result. */
  apiKey: z.string().min(1).optional(),
  /**
   * With `sandbox`: a sandbox configuration file (YAML or JSON, docs/sandbox.md), from `cwd`, for
   * the embedded sandbox the call starts; default the demo settings.
   */
  sandboxConfig: z.string().min(1).optional(),
});

export const warnSchema = z.custom<(warning: Warning) => void>((value) => typeof value === 'function');

/** Read each saved file's SHA-256 too, not only its size and modification time (`--verify`). */
export const verifySchema = z.boolean().optional();

export type LedgerOptions = z.infer<typeof ledgerOptionsSchema>;
export type ServiceOptions = z.infer<typeof serviceOptionsSchema>;

/** Checks an API call's options; the first problem names the option, never its value. */
export function checkOptions<S extends z.ZodType>(call: string, schema: S, options: unknown): z.infer<S> {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const option = [...issue.path, ...keys.slice(0, 1)].join('.') || '(options)';
  const what = issue.code === 'unrecognized_keys' ? 'is not an option' : issue.message;
  throw new OptionError(option, `${call}(): option '${option}' ${what}`);
}

/** The manifest an API call was given, refused unless it is what loadManifest() returned. */
export function checkedManifest(call: string, manifest: Manifest): Manifest {
  if (!manifest || typeof manifest !== 'object' || !Array.isArray(manifest.items))
    throw new OptionError('manifest', `${call}(): the manifest must be what loadManifest() returned`);
  return manifest;
}

/** The batch a call works on, resolved once from its options. */
export function batchOf<M extends ManifestHead>(
  manifest: M,
  options: ServiceOptions | LedgerOptions,
): Batch<M> {
  return resolveBatch(manifest, options);
}

/** The options of a call that tells its pre-flight words and warnings as it goes. */
export const tellSchema = {
  /** Told each pre-flight word and warning as `{ code, message }`. */
  warn: z.custom<(warning: Warning) => void>((value) => typeof value === 'function').optional(),
  /** Told each pre-flight word and warning as one line (the message of `warn`). */
  log: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
};

/** One Warn telling both `warn` and `log`. */
export function tellOf(warn: Warn | undefined, log: ((line: string) => void) | undefined): Warn {
  return (warning) => {
    warn?.(warning);
    log?.(warning.message);
  };
}
