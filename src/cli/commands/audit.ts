import { audit } from '../../index.js';
import { renderAuditText } from '../../render.js';
import { openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { warnOn } from '../words.js';

/**
 * `mediabatch audit <manifest> [--base-url URL | --sandbox] [--ledger PATH] [--json] [--out DIR]`:
 * the service's charges and refunds against the ledger (docs/audit.md). Exit 0 when they agree,
 * 4 (`Unreconciled`) when something is owed or unexplained.
 */
export const auditCommand: Command<'audit'> = async ({ values, positionals }, io) => {
  const { manifest, options } = await openBatch({ values, positionals }, io, 'audit');
  const doc = await audit(manifest, {
    ...options,
    ...(values.out === undefined ? {} : { out: values.out, force: values.force }),
    warn: warnOn(io, 'audit'),
  });
  io.stdout.write(values.json ? `${JSON.stringify(doc, null, 2)}\n` : renderAuditText(doc));
  return doc.outcome;
};
