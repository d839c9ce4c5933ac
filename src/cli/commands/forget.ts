import { forgetJobs, forgetOutcome } from '../../index.js';
import { renderForgotten } from '../../render.js';
import { commandLine, openBatch } from '../batch-options.js';
import type { Command } from '../io.js';
import { warnOn } from '../words.js';

/**
 * `mediabatch forget <manifest> [id...]`: the way out when the service lost jobs the ledger holds
 * (a `run` stops on `job_not_found`); the library decides, this says what it did.
 */
export const forgetCommand: Command<'forget'> = async ({ values, positionals }, io) => {
  const { manifestArg, manifest, options } = await openBatch({ values, positionals }, io, 'forget');
  const ids = positionals.slice(1);
  const jobs = await forgetJobs(manifest, { ...options, ids, warn: warnOn(io, 'forget') });
  const plan = commandLine('plan', manifestArg, { sandbox: values.sandbox });
  io.stdout.write(renderForgotten(manifest.name, ids, jobs, plan));
  return forgetOutcome(jobs);
};
