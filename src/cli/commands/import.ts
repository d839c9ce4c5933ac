import { dirname } from 'node:path';
import { ExitCode } from '../../errors.js';
import { renderImportText } from '../../import/render.js';
import { forSandbox, ledgerPathFor, manifestOrExit } from '../../batch/placement.js';
import { importLedger } from '../../batch/import-ledger.js';
import { parseSince } from '../values/since.js';
import { serviceTarget, serviceTimings } from '../../batch/service-check.js';
import type { Command } from '../io.js';

/**
 * `mediabatch import <manifest> [--base-url URL | --sandbox] [--ledger PATH] [--since DURATION] [--json]`:
 * rebuilds a lost ledger from the service's own job list (docs/import.md).
 */
export const importCommand: Command<'import'> = async ({ values, positionals }, io) => {
  const manifest = forSandbox(manifestOrExit(positionals[0], io, 'nothing was imported'), values.sandbox);
  const sinceMs = parseSince(values.since);
  const timings = serviceTimings(io);
  const target = serviceTarget(values.sandbox, values['base-url'], io, {
    what: 'no service to import from',
    sandbox: 'rebuild the sandbox ledger from the embedded sandbox',
  });
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const summary = await importLedger({ manifest, ledgerPath, target, timings, sinceMs }, io);
  const rerun = [
    'mediabatch run',
    positionals[0],
    ...(values.ledger ? ['--ledger', values.ledger] : []),
    ...(values.sandbox ? ['--sandbox'] : []),
  ];
  io.stdout.write(
    values.json
      ? `${JSON.stringify(summary, null, 2)}\n`
      : renderImportText(summary, dirname(manifest.file), rerun.join(' ')),
  );
  return ExitCode.Ok;
};
