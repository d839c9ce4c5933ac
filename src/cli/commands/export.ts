import {
  type ExportState,
  exportKept,
  exportRecords,
  exportRejected,
  type Manifest,
  writeExport,
} from '../../index.js';
import { type ExportFormat, exportChunks, keptChunks, keptExportNotes, rejectedYaml } from '../../render.js';
import { commandLine, openBatch, openStreamedBatch, withManifestWords } from '../batch-options.js';
import type { Command } from '../io.js';
import { writeChunks } from '../ui/write-chunks.js';
import { warnOn } from '../words.js';

/**
 * `export`: one record per item, in manifest order, streamed from the ledger as it is written, to
 * stdout or to a file that appears whole or not at all (docs/results.md).
 */
export const exportCommand: Command<'export'> = async ({ values, positionals }, io) => {
  // The records are written as the manifest is read; --kept and --rejected hold it whole.
  const opened =
    values.kept || values.rejected
      ? await openBatch({ values, positionals }, io, 'export')
      : await openStreamedBatch({ values, positionals }, io, 'export');
  const { manifestArg } = opened;
  const manifest = opened.manifest as Manifest;
  const batch = { ...opened.options, warn: warnOn(io, 'export') };
  const format = (values.format ?? 'jsonl') as ExportFormat;
  const options = { ...batch, states: values.state as ExportState[] };
  if (values.rejected) {
    const target = values.out === undefined ? {} : { to: values.out, force: values.force };
    const rejected = await exportRejected(manifest, { ...batch, ...target });
    if (values.out === undefined) io.stdout.write(rejectedYaml(rejected.records));
    return 'done';
  }
  if (values.kept) {
    const target = values.out === undefined ? {} : { to: values.out, force: values.force };
    const kept = await exportKept(manifest, { ...batch, format, ...target });
    if (values.out === undefined) await writeChunks(io.stdout, keptChunks(kept.records, format));
    const sandboxCommand = `${commandLine('export', manifestArg, { ...values, sandbox: true })} --kept`;
    const notes = keptExportNotes('mediabatch export', kept, sandboxCommand);
    if (notes !== '') io.stderr.write(notes);
    // Every record is written; a kept file not as saved still makes the export fail.
    return kept.outcome;
  }
  if (values.out !== undefined) {
    await withManifestWords('export', () =>
      writeExport(opened.manifest, { ...options, to: values.out!, format, force: values.force }),
    );
    return 'done';
  }
  const records = exportRecords(opened.manifest, options);
  try {
    await withManifestWords('export', () => writeChunks(io.stdout, exportChunks(records, format)));
  } finally {
    // Ends the ledger's read when the reader went away early.
    await records.return(undefined);
  }
  return 'done';
};
