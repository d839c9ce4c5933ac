import { type SpooledItems, type StatusDocument, type StatusItem, streamStatus } from '../../index.js';
import { jsonChunks, statusSummaryChunks, statusTextChunks, wantsSummary } from '../../render.js';
import { commandLine, openStreamedBatch, withManifestWords } from '../batch-options.js';
import { libraryOptions } from '../flag-row.js';
import type { Command } from '../io.js';
import { writeChunks } from '../ui/write-chunks.js';
import { cliWords } from '../words.js';
import { STATUS_FLAGS } from './status-flags.js';

/** `status`: where each item stands, from the ledger alone (docs/commands.md). */
export const statusCommand: Command<'status'> = async ({ values, positionals }, io) => {
  const { manifestArg, manifest, options } = await openStreamedBatch({ values, positionals }, io, 'status');
  const { ledger, ...document } = await withManifestWords('status', () =>
    streamStatus(manifest, { ...options, ...libraryOptions(STATUS_FLAGS, values) }),
  );
  try {
    await writeStatus(io, values, manifestArg, ledger, document);
  } finally {
    // The items wait in a temporary file until written.
    document.items.close();
  }
  return 'done';
};

async function writeStatus(
  io: Parameters<Command<'status'>>[1],
  values: Parameters<Command<'status'>>[0]['values'],
  manifestArg: string | undefined,
  ledger: StatusDocument['ledger'],
  document: Omit<StatusDocument<SpooledItems<StatusItem>>, 'ledger'>,
): Promise<void> {
  // A ledger that lost its output folder to a copy is read all the same: said first (on stderr
  // beside a JSON document, which stays the document alone).
  if (ledger.notOwner)
    (values.json ? io.stderr : io.stdout).write(
      `${values.json ? 'mediabatch status: ' : ''}note: ${cliWords(ledger.notOwner)}\n`,
    );
  // In chunks: at 100,000 items the document is 25 MB of JSON, never one string.
  const chunks = values.json
    ? jsonChunks(document)
    : (wantsSummary(document.totals.items, values) ? statusSummaryChunks : statusTextChunks)(
        document,
        { ...ledger, service: document.service },
        commandLine('run', manifestArg, values),
        commandLine('status', manifestArg, { ...values, sandbox: true }),
      );
  await writeChunks(io.stdout, chunks, cliWords);
}
