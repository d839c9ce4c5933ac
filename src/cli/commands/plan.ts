import { ExitCode, NO_ANSWER_IN_TIME, plan } from '../../index.js';
import { jsonChunks } from '../../report/json-chunks.js';
import { planTextChunks } from '../../report/render-plan.js';
import { batchOptions, commandLine, manifestFor } from '../batch-options.js';
import type { Command } from '../io.js';
import { writeChunks } from '../output.js';
import { warnOn } from '../words.js';

/** `plan`: what `run` would do now, with the checks run's pre-flight makes (docs/commands.md). */
export const planCommand: Command<'plan'> = async ({ values, positionals }, io) => {
  const manifest = manifestFor(positionals[0], io, 'run would refuse it too, and submit nothing');
  const { ledger, ...doc } = await plan(manifest, {
    ...batchOptions(values, io, positionals[0]!),
    warn: warnOn(io, 'plan'),
    // run's flags that change what it pays for, previewed; --verify reads every saved file.
    ...(values['regenerate-expired'] ? { regenerateExpired: true } : {}),
    ...(values['retry-failed'] ? { retryFailed: true } : {}),
    ...(values.verify ? { verify: true } : {}),
  });
  const save = commandLine('run', positionals[0]!, values);
  await writeChunks(io.stdout, values.json ? jsonChunks(doc) : planTextChunks(doc, ledger, save));
  const error = doc.account?.error ?? null;
  // A slow service does not stop run (its requests are resent with the same keys): nor plan.
  if (error === null || error.code === NO_ANSWER_IN_TIME) return ExitCode.Ok;
  const refused = error.status === 401 || error.status === 402;
  const hint =
    error.status === 401
      ? 'check MEDIAGEN_API_KEY'
      : error.status === 402
        ? 'the wallet must be enabled and funded'
        : 'run would stop the same way, before submitting anything';
  io.stderr.write(
    `mediabatch plan: GET /account at ${doc.account!.base_url} failed: ${error.message} (${hint})\n`,
  );
  return refused ? ExitCode.Refused : ExitCode.ItemsNotDone;
};
