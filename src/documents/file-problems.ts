/**
 * Saved outputs that are no longer as saved (missing, altered, touched: see
 * downloads/saved-file-check.ts), in the words `status` and `plan` share. Pure: the batch layer
 * stats (and with --verify reads) the files, and passes what it found in.
 */

export type FileProblemKind = 'missing' | 'altered' | 'touched';

/** One file of an item's output that is not as saved; `path` absolute (shown relative later). */
export interface FileProblem {
  path: string;
  problem: FileProblemKind;
  detail: string;
}

/** An item whose output has such files, and what the ledger says of that output. */
export interface ItemFiles {
  problems: FileProblem[];
  /** When the files were saved, the job they came from, and when the service deletes its outputs. */
  savedAt: string;
  jobId: string | null;
  expiresAt: string | null;
}

export type FileProblems = ReadonlyMap<string, ItemFiles>;

/** Whether a run will fetch the item's output again: a file is gone or holds other bytes. */
export function needsFetching(files: ItemFiles | undefined): files is ItemFiles {
  return files?.problems.some((file) => file.problem !== 'touched') ?? false;
}

/** Whether the service still holds the output by its own word (expires_at); unknown counts as held. */
export function stillHeld(files: ItemFiles, nowMs: number): boolean {
  return files.expiresAt === null || Date.parse(files.expiresAt) > nowMs;
}

/**
 * What became of an output fetched too late, as the run records it (job-outcome.ts says the same):
 * it was saved; it is not "deleted before it was saved".
 */
export function deletedAfterSaving(files: ItemFiles): string {
  const what = files.problems.some((file) => file.problem === 'missing')
    ? 'deleted from the disk'
    : 'altered on the disk';
  const expired = files.expiresAt === null ? '' : ` (its outputs expired on ${files.expiresAt})`;
  return `saved on ${files.savedAt}, then ${what}; the service no longer holds it${expired}`;
}

/** What a run does about an item's files, for the end of each file's line. */
export function remedy(files: ItemFiles, nowMs: number): string {
  if (!needsFetching(files)) return 'run compares its SHA-256 and fetches it again if it differs';
  if (stillHeld(files, nowMs)) {
    const until = files.expiresAt === null ? '' : `, the service keeps it until ${files.expiresAt}`;
    return `run fetches it again from job ${files.jobId ?? '?'} for free (no new generation${until})`;
  }
  return `${deletedAfterSaving(files)}: only run \`regenerateExpired\` pays for it again`;
}

/** A file's problem as JSON shows it: the path as the command shows paths, and every word. */
export interface ShownFileProblem {
  path: string;
  problem: FileProblemKind;
  detail: string;
}

export function shownProblems(
  files: ItemFiles,
  nowMs: number,
  shown: (path: string) => string,
): ShownFileProblem[] {
  const then = remedy(files, nowMs);
  return files.problems.map((file) => ({
    path: shown(file.path),
    problem: file.problem,
    detail: `${file.detail}; ${then}`,
  }));
}

/** Counts by kind, over the items shown. */
export interface FileProblemCounts {
  files_missing: number;
  files_altered: number;
  files_touched: number;
}

/** Two counts added up (a streamed document counts its items a chunk at a time). */
export function addProblemCounts(a: FileProblemCounts, b: FileProblemCounts): FileProblemCounts {
  return {
    files_missing: a.files_missing + b.files_missing,
    files_altered: a.files_altered + b.files_altered,
    files_touched: a.files_touched + b.files_touched,
  };
}

export function countProblems(items: Iterable<{ file_problems?: ShownFileProblem[] }>): FileProblemCounts {
  const counts = { files_missing: 0, files_altered: 0, files_touched: 0 };
  for (const item of items) for (const file of item.file_problems ?? []) counts[`files_${file.problem}`] += 1;
  return counts;
}

/**
 * The lines `status` and `plan` print under their table: one per file, then nothing more (the
 * count is in the heading). Empty when every saved file is as saved.
 */
export function fileProblemLines(
  items: Iterable<{ id: string; file_problems?: ShownFileProblem[] }>,
  counts: FileProblemCounts,
  verified: boolean,
  /** At most this many files listed, then how many more (a summary's few examples). */
  listed = Number.POSITIVE_INFINITY,
): string[] {
  const total = counts.files_missing + counts.files_altered + counts.files_touched;
  if (total === 0) return [];
  const parts = [
    counts.files_missing ? `${counts.files_missing} missing` : '',
    counts.files_altered ? `${counts.files_altered} altered` : '',
    counts.files_touched ? `${counts.files_touched} modified since saved` : '',
  ].filter(Boolean);
  const how = verified ? 'checked by size and SHA-256' : 'checked by size and modification time';
  const lines = [`saved files not as saved: ${total} (${parts.join(', ')}; ${how}):`];
  for (const item of items)
    for (const file of item.file_problems ?? []) {
      if (lines.length > listed) {
        lines.push(`  ... and ${total - listed} more (--full or --json lists every one)`);
        return lines;
      }
      lines.push(
        `  ${item.id}: ${file.path} ${file.problem === 'touched' ? 'modified' : file.problem}: ${file.detail}`,
      );
    }
  return lines;
}
