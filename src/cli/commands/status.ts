import { ExitCode, status } from '../../index.js';
import { jsonChunks, statusTextChunks } from '../../render.js';
import { commandLine, openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { writeChunks } from '../ui/write-chunks.js';
import { cliWords } from '../words.js';

/** `status`: where each item stands, from the ledger alone (docs/commands.md). */
export const statusCommand: Command<'status'> = async ({ values, positionals }, io) => {
  const { manifestArg, manifest, options } = await openBatch({ values, positionals }, io, 'status');
  const { ledger, ...document } = await status(manifest, { ...options, verify: values.verify });
  // A ledger that lost its output folder to a copy is read all the same: said first (on stderr
  // beside a JSON document, which stays the document alone).
  if (ledger.notOwner)
    (values.json ? io.stderr : io.stdout).write(
      `${values.json ? 'mediabatch status: ' : ''}note: ${cliWords(ledger.notOwner)}\n`,
    );
  // In chunks: at 100,000 items the document is 25 MB of JSON, never one string.
  const chunks = values.json
    ? jsonChunks(document)
    : statusTextChunks(
        document,
        { ...ledger, service: document.service },
        commandLine('run', manifestArg, values),
        commandLine('status', manifestArg, { ...values, sandbox: true }),
      );
  await writeChunks(io.stdout, chunks, cliWords);
  return ExitCode.Ok;
};
