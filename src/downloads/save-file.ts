import { createHash, randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Dispatcher, request } from 'undici';
import { NewFile } from './new-file.js';
import { syncFolder } from './sync-folder.js';

export const TEMP_SUFFIX = '.mbtmp';

export type FetchOutcome =
  | { kind: 'saved'; bytes: number; sha256: string; contentType: string | null }
  | { kind: 'url_expired'; status: number }
  /** `code`: the errno code (ENOSPC, EROFS, ...) when our own disk failed. */
  | { kind: 'error'; message: string; local?: boolean; code?: string };

/** Errors of our own disk, not of the transfer: retrying soon rarely helps, the user must act. */
const LOCAL_FS_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EACCES',
  'EPERM',
  'EISDIR',
  'ENOTDIR',
  'EEXIST',
  'ENOTEMPTY',
  'ENOENT',
  'EMFILE',
  'ENFILE',
  'EIO',
  'EFBIG',
  'ENAMETOOLONG',
]);

export function isLocalFsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LOCAL_FS_CODES.has(code);
}

/** The errno code of a file-system error (ENOSPC, EROFS, ...), if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Signed URLs carry credentials in their query: only origin and path may appear in messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * Streams one file to a temporary name beside its target, checks the length the server promised,
 * fsyncs it, renames it into place and fsyncs the folder, so a crash leaves either the old state
 * or the whole new file, never a short one under the real name. The target is chosen only once the
 * content type is known.
 */
export async function downloadToFile(
  url: string,
  chooseTarget: (contentType: string | null) => string,
  options: {
    dispatcher?: Dispatcher;
    timeoutMs?: number;
    /** Runs once the whole file is on disk, just before it takes the target's name. */
    beforeRename?: (target: string, written: { bytes: number; sha256: string }) => Promise<void>;
    /**
     * false: the caller fsyncs the folder (syncFolder) before it counts on the file, so that one
     * fsync covers every file it places there.
     */
    syncFolder?: boolean;
  } = {},
): Promise<FetchOutcome & { path?: string }> {
  const response = await openDownload(url, options);
  if (!('statusCode' in response)) return response;
  const contentType = headerText(response.headers['content-type']);
  const lengthHeader = headerText(response.headers['content-length']);
  const target = chooseTarget(contentType);
  const temp = join(dirname(target), `.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const stage = { storing: false };
  try {
    const written = await writeTemp(
      response,
      temp,
      lengthHeader === null ? null : Number(lengthHeader),
      stage,
    );
    await options.beforeRename?.(target, written);
    await rename(temp, target);
    if (options.syncFolder !== false) await syncFolder(dirname(target));
    return { kind: 'saved', ...written, contentType, path: target };
  } catch (error) {
    // A body left unread (the temporary file could not be opened) would hold its connection.
    // Destroying it unread makes undici emit an abort error, which nobody else listens for: a
    // read-only disk must not turn into an unhandled 'error' event that ends the process.
    response.body.on('error', () => undefined);
    response.body.destroy();
    await rm(temp, { force: true }).catch(() => undefined);
    const local = stage.storing || isLocalFsError(error);
    const what = local ? `saving ${target} from ${redactUrl(url)}` : `download of ${redactUrl(url)}`;
    const code = errorCode(error);
    return {
      kind: 'error',
      message: `${what} failed: ${errorText(error)}`,
      local,
      ...(local && code ? { code } : {}),
    };
  }
}

/** The GET of a file: its response when it is 200, else what the answer means. */
export async function openDownload(
  url: string,
  options: { dispatcher?: Dispatcher; timeoutMs?: number },
): Promise<Dispatcher.ResponseData | FetchOutcome> {
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'GET',
      headersTimeout: options.timeoutMs ?? 60_000,
      bodyTimeout: options.timeoutMs ?? 60_000,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (error) {
    return { kind: 'error', message: `download of ${redactUrl(url)} failed: ${errorText(error)}` };
  }
  if (response.statusCode === 200) return response;
  await response.body.dump().catch(() => undefined);
  if ([401, 403, 404, 410].includes(response.statusCode))
    return { kind: 'url_expired', status: response.statusCode };
  return { kind: 'error', message: `download of ${redactUrl(url)} answered HTTP ${response.statusCode}` };
}

/**
 * Streams the body into `temp`, checks the length the server promised and syncs the file.
 * `stage.storing` turns true once every byte arrived: a failure after that is our own disk's.
 */
async function writeTemp(
  response: Dispatcher.ResponseData,
  temp: string,
  expected: number | null,
  stage: { storing: boolean },
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  // One descriptor writes, syncs and closes the file: a write stream and a second open to
  // fsync cost two more file operations per download, each a round trip through the thread pool.
  const file = await NewFile.create(temp);
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
      await file.write(chunk);
    }
    if (expected !== null && bytes !== expected) throw new Error(`received ${bytes} bytes of ${expected}`);
    stage.storing = true;
    await file.sync();
  } finally {
    file.close();
  }
  return { bytes, sha256: hash.digest('hex') };
}

export function headerText(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

export function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // undici may quote the URL it was fetching; never let a signature through.
  return text.replace(/https?:\/\/\S+/g, (match) => redactUrl(match));
}
