import { basename, dirname, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import {
  formatProblem,
  isS3Uri,
  loadManifest,
  type Manifest,
  parseS3Uri,
  s3Beside,
  s3Uri,
} from '../manifest/index.js';
import type { Host } from './host.js';

/**
 * Loads the manifest or fails with every problem listed, file:line:column first (exit 2); `outcome`
 * says what that means for this command (only `run` and `import` could have submitted anything).
 */
export function manifestOrExit(
  path: string | undefined,
  io: Pick<Host, 'cwd'>,
  outcome = 'nothing was submitted',
): Manifest {
  if (!path) throw new UserError('missing <manifest> argument');
  const result = loadManifest(resolve(io.cwd, path));
  if (result.ok) return result.manifest;
  const lines = result.problems.map(formatProblem).join('\n');
  const count = result.problems.length;
  throw new UserError(
    `${count} problem${count === 1 ? '' : 's'} in the manifest; ${outcome}:\n${lines}`,
    ExitCode.Usage,
    'manifest_invalid',
  );
}

/**
 * `--ledger`, else `.mediabatch/<name>.sqlite` beside the manifest. Sandbox runs keep theirs in
 * `.mediabatch/sandbox/`, so a demo's placeholder videos and spend never meet a real service's.
 */
export function ledgerPathFor(
  manifest: Manifest,
  flag: string | undefined,
  io: Pick<Host, 'cwd'>,
  options: { sandbox?: boolean } = {},
): string {
  if (flag) return resolve(io.cwd, flag);
  const folder = join(dirname(manifest.file), '.mediabatch');
  return join(options.sandbox ? join(folder, 'sandbox') : folder, `${manifest.name}.sqlite`);
}

/**
 * The manifest as a sandbox run sees it: its files go to a `sandbox` folder beside the output
 * folder (out/demo -> out/sandbox/demo), apart from real results (docs/services.md).
 */
export function forSandbox(manifest: Manifest, sandbox: boolean): Manifest {
  if (!sandbox) return manifest;
  const { outputDir } = manifest;
  const location = isS3Uri(outputDir) ? parseS3Uri(outputDir) : null;
  if (location !== null && !('problem' in location))
    return { ...manifest, outputDir: s3Uri(s3Beside(location, 'sandbox')) };
  return { ...manifest, outputDir: join(dirname(outputDir), 'sandbox', basename(outputDir)) };
}

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

/** Base URL from the flag or MEDIAGEN_BASE_URL, key from MEDIAGEN_API_KEY only (never a flag). */
export function connectionFromEnv(flag: string | undefined, io: Pick<Host, 'env'>): Connection | null {
  const baseUrl = flag ?? io.env.MEDIAGEN_BASE_URL;
  if (!baseUrl) return null;
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UserError(
      `--base-url / MEDIAGEN_BASE_URL is not an http(s) URL: ${baseUrl}`,
      ExitCode.Usage,
      'setting_invalid',
    );
  }
  const apiKey = io.env.MEDIAGEN_API_KEY;
  if (!apiKey)
    throw new UserError(
      'MEDIAGEN_API_KEY is not set: export the API key from the service console',
      ExitCode.Usage,
      'api_key_missing',
    );
  return { baseUrl, apiKey };
}

export function parsePositiveSeconds(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new UserError(`${flag} must be a positive number of seconds, got '${text}'`);
  return value;
}

/**
 * The `run` that saves a batch's outputs, as the user would type it again: the manifest as they
 * named it, and the ledger flags that pick the same ledger. Quoted only where a shell would need it.
 */
export function saveCommand(manifestArg: string, options: { ledger?: string; sandbox?: boolean }): string {
  const quote = (word: string) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
  const words = ['mediabatch', 'run', quote(manifestArg)];
  if (options.sandbox) words.push('--sandbox');
  if (options.ledger) words.push('--ledger', quote(options.ledger));
  return words.join(' ');
}
