import { z } from 'zod';
import { type Batch, resolveBatch } from '../batch/resolve-batch.js';
import type { Warning } from '../batch/warnings.js';
import { ExitCode, UserError } from '../errors.js';
import type { Manifest } from '../manifest/index.js';
import type { ExportState } from '../report/export-records.js';
import type { PlanDocument as PlanReport } from '../report/plan-report.js';

/** An API call was given an option it does not know, or a value of the wrong kind (exit code 2). */
export class OptionError extends UserError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message, ExitCode.Usage, 'invalid_option');
    this.name = 'OptionError';
  }
}

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
});

const warnSchema = z.custom<(warning: Warning) => void>((value) => typeof value === 'function');

/** Read each saved file's SHA-256 too, not only its size and modification time (`--verify`). */
const verifySchema = z.boolean().optional();

export const statusOptionsSchema = ledgerOptionsSchema.extend({ verify: verifySchema });

export const planOptionsSchema = serviceOptionsSchema.extend({
  /** Told each warning (a pre-flight retry, an account not checked), as `{ code, message }`. */
  warn: warnSchema.optional(),
  verify: verifySchema,
  /** Preview `run --regenerate-expired`: expired items are priced as submitted again. */
  regenerateExpired: z.boolean().optional(),
  /** Preview `run --retry-failed`: finally failed items are priced as submitted again. */
  retryFailed: z.boolean().optional(),
  /** Preview `run --redefine`: a manifest that is not its shared batch's definition would become its next revision. */
  redefine: z.boolean().optional(),
});

/** The item states, and `removed`: the items paid for that the manifest no longer names. */
export const EXPORT_STATES = [
  'pending',
  'in_flight',
  'done',
  'failed',
  'budget_exceeded',
  'expired',
  'removed',
] as const satisfies readonly ExportState[];

export const exportOptionsSchema = ledgerOptionsSchema.extend({
  /** Only items in these states (`--state`), `removed` for those the manifest no longer names; default every item. */
  states: z.array(z.enum(EXPORT_STATES)).optional(),
});

export type LedgerOptions = z.infer<typeof ledgerOptionsSchema>;
export type StatusOptions = z.infer<typeof statusOptionsSchema>;
export type ServiceOptions = z.infer<typeof serviceOptionsSchema>;
export type PlanOptions = z.input<typeof planOptionsSchema>;
export type ExportOptions = z.input<typeof exportOptionsSchema>;

/** The plan document (`plan --json`), with where its ledger is. */
export type PlanDocument = PlanReport & { ledger: { path: string; exists: boolean; service: string | null } };

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
export function batchOf(manifest: Manifest, options: ServiceOptions | LedgerOptions): Batch {
  return resolveBatch(manifest, options);
}
