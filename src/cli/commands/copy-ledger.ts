import { copyLedger, ExitCode, UserError } from '../../index.js';
import { batchOptions, manifestFor } from '../batch-options.js';
import type { Command } from '../io.js';

/**
 * `mediabatch copy-ledger <manifest> --to PATH|URL [--ledger PATH|URL]`: a batch's whole record
 * from one ledger into another, SQLite to PostgreSQL or back (docs/shared-ledger.md). The library
 * copies and refuses; this says what was copied, with both ledgers as the library shows them
 * (a URL without its password).
 */
export const copyLedgerCommand: Command<'copy-ledger'> = async ({ values, positionals }, io) => {
  const manifest = manifestFor(positionals[0], io, 'nothing was copied');
  if (!values.to)
    throw new UserError('missing --to PATH|URL: the ledger to copy into; nothing was copied', ExitCode.Usage);
  const copied = await copyLedger(manifest, { ...batchOptions(values, io, positionals[0]!), to: values.to });
  io.stdout.write(
    `${manifest.name}: copied ${copied.items} item(s), ${copied.attempts} attempt(s), ${copied.files} file(s), ` +
      `${copied.events} event(s) and ${copied.runs} run(s)\n  from ${copied.from}\n  to   ${copied.to}\n` +
      (copied.outputPassed ? `  the output folder ${manifest.outputDir} now belongs to the copy\n` : ''),
  );
  return ExitCode.Ok;
};
