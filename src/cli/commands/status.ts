import { ExitCode } from '../../errors.js';
import { manifestOrExit, saveCommand } from '../../batch/placement.js';
import { statusSource, withLedger } from '../../batch/ledger-read.js';
import { statusDocument } from '../../public/status-document.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { statusTextChunks } from '../../report/render-text.js';
import { buildStatus, type StatusReport } from '../../report/status-report.js';
import type { Command } from '../io.js';

export const statusCommand: Command<'status'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io, 'no status can be shown');
  const { report, note } = withLedger(
    manifest,
    values.ledger,
    io,
    { sandbox: values.sandbox },
    (ledger, note) => ({
      note,
      report: buildStatus(manifest, statusSource(ledger), Date.now()),
    }),
  );
  // In chunks: at 100,000 items the document is 25 MB of JSON, never one string.
  const chunks = values.json
    ? jsonChunks(statusDocument(report, note.service))
    : statusTextChunks(
        report,
        note,
        saveCommand(positionals[0]!, { ledger: values.ledger, sandbox: values.sandbox }),
      );
  await writeChunks(io.stdout, chunks);
  return ExitCode.Ok;
};

export function statusJson(report: StatusReport, service: string | null): string {
  return `${JSON.stringify(statusDocument(report, service), null, 2)}\n`;
}
