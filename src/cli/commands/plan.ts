import { ExitCode, plan } from '../../index.js';
import { jsonChunks } from '../../report/json-chunks.js';
import { accountFailure } from '../../report/plan-account.js';
import { planTextChunks } from '../../report/render-plan.js';
import { writeChunks } from '../../ui/write-chunks.js';
import { commandLine, openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { cliWords, warnOn } from '../words.js';

/** `plan`: what `run` would do now, with the checks run's pre-flight makes (docs/commands.md). */
export const planCommand: Command<'plan'> = async ({ values, positionals }, io) => {
  const outcome = 'run would refuse it too, and submit nothing';
  const { manifestArg, manifest, options } = openBatch({ values, positionals }, io, outcome);
  const { ledger, ...doc } = await plan(manifest, {
    ...options,
    warn: warnOn(io, 'plan'),
    // run's flags that change what it pays for, previewed; --verify reads every saved file.
    regenerateExpired: values['regenerate-expired'],
    retryFailed: values['retry-failed'],
    redefine: values.redefine,
    verify: values.verify,
  });
  const save = commandLine('run', manifestArg, values);
  await writeChunks(io.stdout, values.json ? jsonChunks(doc) : planTextChunks(doc, ledger, save), cliWords);
  const failure = accountFailure(doc.account);
  if (failure === null) return ExitCode.Ok;
  io.stderr.write(`mediabatch plan: ${failure.line}\n`);
  return failure.refused ? ExitCode.Refused : ExitCode.ItemsNotDone;
};
