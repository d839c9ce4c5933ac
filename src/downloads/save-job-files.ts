import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Dispatcher } from 'undici';
import { extensionFor, namedOutputPath } from '../manifest/index.js';
import type { Job } from '../service-client/schemas.js';
import { takePath } from './preserve-take.js';
import { downloadToFile, errorCode } from './save-file.js';

export interface SavedFile {
  idx: number;
  path: string;
  bytes: number;
  sha256: string;
  /**
   * Its modification time once placed, by which `status` tells a file edited since
   * (saved-file-check.ts); absent for an object in a bucket.
   */
  mtimeMs?: number;
}

export type SaveOutcome =
  | { kind: 'saved'; files: SavedFile[] }
  | { kind: 'expired' }
  /** `local`: our own disk failed, not the transfer; `code` its errno code. */
  | { kind: 'error'; message: string; local?: boolean; code?: string };

export interface SaveJobFilesOptions {
  outputDir: string;
  itemId: string;
  /** Where the files go relative to outputDir, from output.name; default the item id. */
  name?: string;
  /**
   * Runs before a new file takes its name, with the new file's size and hash, so that an earlier
   * take there can be kept and a file this ledger did not write refused (see docs/gallery.md).
   */
  beforePlace?: (target: string, written: { bytes: number; sha256: string }) => Promise<void>;
  /** Save under this take's name (`<name>.take2.mp4`) instead of the item's own name. */
  take?: number;
  /** Fetches the job again, for fresh signed URLs. */
  refreshJob: () => Promise<Job>;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
  /** false: the caller fsyncs the files' folders before it counts on them (see downloadToFile). */
  syncFolder?: boolean;
  /**
   * Folders made by earlier calls, shared by the caller: each is made once instead of before every
   * job (a thread-pool round trip each). One is forgotten when a save fails, so a folder removed
   * meanwhile is made again by the next try.
   */
  madeFolders?: Set<string>;
}

const MAX_URL_REFRESHES = 3;

/**
 * Saves every file of a succeeded job. An expired or refused signed URL is refreshed with one
 * GET /jobs/{id}; outputs past expires_at (files gone) make the item `expired`.
 */
export async function saveJobFiles(job: Job, options: SaveJobFilesOptions): Promise<SaveOutcome> {
  // The service, not our clock, says when outputs are gone: an empty file list after success.
  if (job.output.files.length === 0) return { kind: 'expired' };
  const name = options.name ?? options.itemId;
  const target = (idx: number, count: number, ext: string) => {
    const path = namedOutputPath(options.outputDir, name, idx, count, ext);
    return options.take === undefined ? path : takePath(path, options.take);
  };
  const folder = dirname(target(0, 1, 'bin'));
  try {
    if (!options.madeFolders?.has(folder)) await mkdir(folder, { recursive: true });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const code = errorCode(error);
    return {
      kind: 'error',
      message: `cannot create the output folder ${options.outputDir}: ${reason}`,
      local: true,
      ...(code ? { code } : {}),
    };
  }
  options.madeFolders?.add(folder);
  const outcome = await saveEveryFile(job, target, options).catch((error: unknown) => {
    options.madeFolders?.delete(folder);
    throw error;
  });
  if (outcome.kind === 'error') options.madeFolders?.delete(folder);
  return outcome;
}

async function saveEveryFile(
  job: Job,
  target: (idx: number, count: number, ext: string) => string,
  options: SaveJobFilesOptions,
): Promise<SaveOutcome> {
  let current = job;
  const saved: SavedFile[] = [];
  let refreshes = 0;
  for (let idx = 0; idx < current.output.files.length; ) {
    const file = current.output.files[idx]!;
    const count = current.output.files.length;
    const outcome = await downloadToFile(
      file.url,
      (contentType) => target(idx, count, extensionFor(contentType, file.url)),
      {
        ...(options.beforePlace ? { beforeRename: options.beforePlace } : {}),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.syncFolder === false ? { syncFolder: false } : {}),
      },
    );
    if (outcome.kind === 'saved') {
      const path = outcome.path!;
      // A rename keeps the time the data was written, so this is the time the file keeps.
      const { mtimeMs } = await stat(path);
      saved.push({ idx, path, bytes: outcome.bytes, sha256: outcome.sha256, mtimeMs });
      idx += 1;
      continue;
    }
    if (outcome.kind === 'error') return outcome;
    const next = await refreshAfterRefusal(refreshes, outcome.status, count, options.refreshJob);
    if (!('job' in next)) return next;
    refreshes += 1;
    current = next.job;
  }
  return { kind: 'saved', files: saved };
}

/**
 * After the service refused a download URL with `status`: the job fetched again for fresh URLs,
 * or what the refusal comes to. A save refreshes at most MAX_URL_REFRESHES times; a job whose
 * outputs are gone is expired; one whose number of files changed is an error. Every store saves
 * by this rule (disk here, S3 in src/storage/s3-store.ts).
 */
export async function refreshAfterRefusal(
  refreshes: number,
  status: number,
  count: number,
  refreshJob: () => Promise<Job>,
): Promise<{ job: Job } | SaveOutcome> {
  if (refreshes >= MAX_URL_REFRESHES)
    return { kind: 'error', message: `the service kept refusing the download URL (HTTP ${status})` };
  const job = await refreshJob();
  if (job.output.files.length === 0) return { kind: 'expired' };
  if (job.output.files.length !== count)
    return { kind: 'error', message: 'the job changed its number of files between fetches' };
  return { job };
}
