import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { manifestOrExit } from '../../lib/common.js';
import { exportedRecords } from '../../lib/export-items.js';
import { withLedgerAsync } from '../../lib/ledger-read.js';
import { type ExportFormat, type ExportState, exportChunks } from '../../report/export-records.js';
import type { Command } from '../io.js';

/**
 * `export`: one record per item, in manifest order, streamed from the ledger as it is written, to
 * stdout or to a file that appears whole or not at all (docs/results.md).
 */
export const exportCommand: Command<'export'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const format = (values.format ?? 'jsonl') as ExportFormat;
  const states = new Set(values.state as ExportState[]);
  const out = values.out === undefined ? null : resolve(io.cwd, values.out);
  await withLedgerAsync(manifest, values.ledger, io, { sandbox: values.sandbox }, async (ledger) => {
    const chunks = exportChunks(exportedRecords(manifest, ledger, states), format);
    if (out === null) await writeUntilClosed(io.stdout, chunks);
    else await writeFileWhole(out, chunks);
  });
  return ExitCode.Ok;
};

/**
 * Writes the chunks, waiting whenever the stream's buffer is full. A reader that stops early
 * (`export ... | head`) is a normal end of a pipeline, not an error: the rest is not written.
 */
async function writeUntilClosed(out: NodeJS.WritableStream, chunks: Iterable<string>): Promise<void> {
  let closed = false;
  let wake: (() => void) | null = null;
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
    wake?.();
  };
  out.on('error', onError);
  try {
    for (const chunk of chunks) {
      if (closed) break;
      if (out.write(chunk)) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        out.once('drain', resolve);
      });
      wake = null;
    }
  } finally {
    out.off('error', onError);
    // A later write error (the last chunk's) must not surface as an unhandled event either.
    if (closed) out.on('error', () => undefined);
  }
}

/** A temporary file beside the target, synced, then renamed over it: readers never see half. */
async function writeFileWhole(path: string, chunks: Iterable<string>): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temp, 'wx');
    try {
      for (const chunk of chunks) await file.write(chunk);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    // A file-system refusal (no folder, no space, no permission) is the user's to fix, not a bug.
    if (typeof (error as { code?: unknown }).code !== 'string') throw error;
    throw new UserError(`cannot write ${path}: ${(error as Error).message}`, ExitCode.ItemsNotDone);
  }
}
