import { dirname, join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { formatProblem, loadManifest, type Manifest } from '../manifest/index.js';
import type { CliIo } from './io.js';

/** Loads the manifest or fails with every problem listed, file:line:column first (exit 2). */
export function manifestOrExit(path: string | undefined, io: CliIo): Manifest {
  if (!path) throw new UserError('missing <manifest> argument');
  const result = loadManifest(resolve(io.cwd, path));
  if (result.ok) return result.manifest;
  const lines = result.problems.map(formatProblem).join('\n');
  const count = result.problems.length;
  throw new UserError(
    `${count} problem${count === 1 ? '' : 's'} in the manifest; nothing was submitted:\n${lines}`,
  );
}

export function ledgerPathFor(manifest: Manifest, flag: string | undefined, io: CliIo): string {
  return flag
    ? resolve(io.cwd, flag)
    : join(dirname(manifest.file), '.mediabatch', `${manifest.name}.sqlite`);
}

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

/** Base URL from the flag or MEDIAGEN_BASE_URL, key from MEDIAGEN_API_KEY only (never a flag). */
export function connectionFromEnv(flag: string | undefined, io: CliIo): Connection | null {
  const baseUrl = flag ?? io.env.MEDIAGEN_BASE_URL;
  if (!baseUrl) return null;
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UserError(`--base-url / MEDIAGEN_BASE_URL is not an http(s) URL: ${baseUrl}`);
  }
  const apiKey = io.env.MEDIAGEN_API_KEY;
  if (!apiKey)
    throw new UserError('MEDIAGEN_API_KEY is not set: export the API key from the service console');
  return { baseUrl, apiKey };
}

export function parsePositiveSeconds(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new UserError(`${flag} must be a positive number of seconds, got '${text}'`);
  return value;
}
