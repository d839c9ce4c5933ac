import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { candidateFiles, findOutputs } from '../downloads/files-on-disk.js';
import type { SavedFile } from '../downloads/save-job-files.js';
import { isS3Uri, outputChild } from '../manifest/index.js';
import type { DownloadTask } from './download-queue.js';
import type { RunContext } from './run-context.js';

/**
 * The files of a job this ledger follows that a run saved, with their sidecars, and was stopped
 * before it committed them (docs/results.md, "The record of a result"): each lies under the item's
 * name, its sidecar names this job and item and take, and its bytes match that sidecar. They are
 * the job's output, recorded as saved without a download (the service may have deleted its copy
 * by now), never a stranger to refuse or a file to fetch again. Null when there are none.
 */
export async function savedBeforeCommit(run: RunContext, task: DownloadTask): Promise<SavedFile[] | null> {
  const { manifest } = run.deps;
  const { attempt, job } = task;
  if (task.superseded || isS3Uri(manifest.outputDir) || attempt.jobId === null) return null;
  const target = outputChild(manifest.outputDir, run.state.item(attempt.itemId)?.item.name ?? attempt.itemId);
  // One read of the item's own sidecar first: only a save cut short leaves one naming this job.
  if (!sidecarNames(`${target}.json`, attempt.jobId) && !sidecarNames(`${target}.0.json`, attempt.jobId))
    return null;
  const stem = `${basename(target)}.`;
  const files = candidateFiles(dirname(target), false).filter((path) => basename(path).startsWith(stem));
  const found = (await findOutputs(files, manifest.name, new Map([[attempt.jobId, attempt.itemId]]))).get(
    attempt.jobId,
  );
  const mine = (found ?? []).filter((output) => output.take === (attempt.take ?? 1));
  if (mine.length === 0 || mine.length !== job.output.files.length) return null;
  return mine
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((output, idx) => ({
      idx,
      path: output.path,
      bytes: output.bytes,
      sha256: output.sha256,
      mtimeMs: statSync(output.path).mtimeMs,
    }));
}

function sidecarNames(path: string, jobId: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { job_id?: unknown }).job_id === jobId;
  } catch {
    return false;
  }
}
