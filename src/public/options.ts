import { resolve } from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.js';
import type { Manifest } from '../manifest/index.js';
import { forSandbox, ledgerPathFor } from '../batch/placement.js';
import type { Host } from '../batch/host.js';

/** An API call was given an option it does not know, or a value of the wrong kind (exit code 2). */
export class OptionError extends UserError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
    this.name = 'OptionError';
  }
}

/** Where the ledger is and which service: the options every call that reads a ledger shares. */
export const ledgerOptionsSchema = z.strictObject({
  /** The ledger file; default `.mediabatch/<name>.sqlite` beside the manifest (`sandbox/` below it for a sandbox). */
  ledger: z.string().min(1).optional(),
  /** Use the embedded sandbox and its ledger and folders, like `--sandbox`. */
  sandbox: z.boolean().optional(),
  /** Where relative paths start; default the process's working folder. */
  cwd: z.string().min(1).optional(),
});

export const serviceOptionsSchema = ledgerOptionsSchema.extend({
  /** The service's base URL; default `env.MEDIAGEN_BASE_URL`. */
  baseUrl: z.string().min(1).optional(),
  /** The API key; default `env.MEDIAGEN_API_KEY`. Never written to an error, event or result. */
  apiKey: z.string().min(1).optional(),
  /** The environment read for MEDIAGEN_* and MEDIABATCH_* settings; default `process.env`. */
  env: z.record(z.string(), z.string().optional()).optional(),
});

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

/** The environment an API call sees: its own, with the key and base URL it was given on top. */
export function hostOf(options: ServiceOptions, stderr: NodeJS.WritableStream): Host {
  const env = { ...(options.env ?? process.env) };
  if (options.apiKey !== undefined) env.MEDIAGEN_API_KEY = options.apiKey;
  if (options.baseUrl !== undefined) env.MEDIAGEN_BASE_URL = options.baseUrl;
  return { env, cwd: resolve(options.cwd ?? process.cwd()), stderr };
}

/** The manifest and ledger path a call works on: the sandbox's own folders when it runs there. */
export function placeOf(
  manifest: Manifest,
  options: LedgerOptions,
  host: Pick<Host, 'cwd'>,
): { manifest: Manifest; ledgerPath: string } {
  const sandbox = options.sandbox ?? false;
  const placed = forSandbox(manifest, sandbox);
  return { manifest: placed, ledgerPath: ledgerPathFor(placed, options.ledger, host, { sandbox }) };
}
