import { ExitCode, type ForgottenJob, forgetJobs } from '../../index.js';
import { formatUsdHuman } from '../../money.js';
import { batchOptions, commandLine, manifestFor } from '../batch-options.js';
import type { Command } from '../io.js';
import { warnOn } from '../words.js';

/**
 * `mediabatch forget <manifest> [id...]`: the way out when the service lost jobs the ledger holds
 * (a `run` stops on `job_not_found`); the library decides, this says what it did.
 */
export const forgetCommand: Command<'forget'> = async ({ values, positionals }, io) => {
  const [manifestArg, ...ids] = positionals;
  const manifest = manifestFor(manifestArg, io, 'nothing was forgotten');
  const jobs = await forgetJobs(manifest, {
    ...batchOptions(values, io, positionals[0]!),
    ids,
    warn: warnOn(io, 'forget'),
  });
  if (jobs.length === 0) {
    io.stdout.write(
      `${manifest.name}: no job in flight${ids.length > 0 ? ` for ${ids.join(', ')}` : ''}; nothing to forget\n`,
    );
    return ExitCode.Ok;
  }
  const plan = commandLine('plan', manifestArg!, { sandbox: values.sandbox });
  io.stdout.write(renderJobs(manifest.name, jobs, plan));
  return jobs.every((job) => job.lost) ? ExitCode.Ok : ExitCode.ItemsNotDone;
};

function renderJobs(name: string, jobs: readonly ForgottenJob[], planCommand: string): string {
  const lines = jobs.map(({ itemId, jobId, lost, paidMicros, why }) =>
    lost
      ? `  forgot ${itemId}: job ${jobId} is unknown to the service; it cost ${formatUsdHuman(paidMicros)}, and the item is pending again`
      : `  kept ${itemId}: job ${jobId}: ${why}`,
  );
  const lost = jobs.filter((job) => job.lost);
  const paid = lost.reduce((sum, job) => sum + job.paidMicros, 0);
  const tail =
    lost.length === 0
      ? 'nothing was forgotten'
      : `${lost.length} job(s) forgotten, ${formatUsdHuman(paid)} paid for them is kept in the spend. ` +
        `The next run submits their items again and pays again: ${planCommand} says how much at most`;
  return `${name}:\n${lines.join('\n')}\n${tail}\n`;
}
