import { ExitCode } from '../../errors.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { statusTextChunks } from '../../report/render-text.js';
import { buildStatus, type StatusReport } from '../../report/status-report.js';
import { manifestOrExit, saveCommand } from '../common.js';
import type { Command } from '../io.js';
import { statusSource, withLedger } from '../ledger-read.js';

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

/** The status document (run --json prints it too), with the ledger's service after the manifest's name. */
function statusDocument(report: StatusReport, service: string | null): object {
  const { manifest, ...rest } = report;
  return { manifest, service, ...rest };
}

export function statusJson(report: StatusReport, service: string | null): string {
  return `${JSON.stringify(statusDocument(report, service), null, 2)}\n`;
}
