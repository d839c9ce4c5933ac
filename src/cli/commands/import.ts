import { dirname } from 'node:path';
import { importJobs } from '../../index.js';
import { renderImportText } from '../../render.js';
import { commandLine, openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { warnOn } from '../words.js';

/**
 * `mediabatch import <manifest> [--base-url URL | --sandbox] [--ledger PATH] [--since DURATION] [--files-from DIR]... [--json]`:
 * rebuilds a lost ledger from the service's own job list (docs/import.md).
 */
export const importCommand: Command<'import'> = async ({ values, positionals }, io) => {
  const { manifestArg, manifest, options } = await openBatch({ values, positionals }, io, 'import');
  const summary = await importJobs(manifest, {
    ...options,
    ...(values.since === undefined ? {} : { sinceHours: values.since / 3_600_000 }),
    filesFrom: values['files-from'],
    warn: warnOn(io, 'import'),
  });
  const rerun = commandLine('run', manifestArg, { ledger: values.ledger, sandbox: values.sandbox });
  io.stdout.write(
    values.json
      ? `${JSON.stringify(summary, null, 2)}\n`
      : renderImportText(summary, dirname(manifest.file), rerun),
  );
  return 'done';
};
