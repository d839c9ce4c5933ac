import { copyLedger } from '../../index.js';
import { renderCopied } from '../../render.js';
import { openBatch } from '../batch-options.js';
import type { Command } from '../io.js';

/** `copy-ledger`: a batch's whole record into another ledger (docs/shared-ledger.md); the library copies. */
export const copyLedgerCommand: Command<'copy-ledger'> = async ({ values, positionals }, io) => {
  const { manifest, options } = await openBatch({ values, positionals }, io, 'copy-ledger');
  // --to is a required flag: the parser refused its absence, with the usage line.
  const copied = await copyLedger(manifest, { ...options, to: values.to });
  io.stdout.write(renderCopied(manifest, copied));
  return 'done';
};
