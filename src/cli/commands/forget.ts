import { ExitCode } from '../../errors.js';
import { forSandbox, ledgerPathFor, manifestOrExit } from '../../batch/placement.js';
import { forgetLostJobs, type Outcome } from '../../batch/forget-jobs.js';
import { serviceTarget, serviceTimings } from '../../batch/service-check.js';
import { formatUsdHuman } from '../../money.js';
import type { Command } from '../io.js';

/**
 * `mediabatch forget <manifest> [id...]`: the way out when the service lost jobs the ledger holds
 * (a `run` stops on `job_not_found`); the library decides, this says what it did.
 */
export const forgetCommand: Command<'forget'> = async ({ values, positionals }, io) => {
  const [manifestArg, ...ids] = positionals;
  const manifest = forSandbox(manifestOrExit(manifestArg, io, 'nothing was forgotten'), values.sandbox);
  const timings = serviceTimings(io);
  const target = serviceTarget(values.sandbox, values['base-url'], io, {
    what: 'no service to ask which jobs it knows',
    sandbox: 'ask the sandbox that `run --sandbox` uses',
  });
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const outcomes = await forgetLostJobs({ manifest, ledgerPath, ids, target, timings }, io);
  if (outcomes.length === 0) {
    io.stdout.write(
      `${manifest.name}: no job in flight${ids.length > 0 ? ` for ${ids.join(', ')}` : ''}; nothing to forget\n`,
    );
    return ExitCode.Ok;
  }
  const planCommand = ['mediabatch plan', manifestArg, ...(values.sandbox ? ['--sandbox'] : [])].join(' ');
  io.stdout.write(renderOutcomes(manifest.name, outcomes, planCommand));
  return outcomes.every((outcome) => outcome.lost) ? ExitCode.Ok : ExitCode.ItemsNotDone;
};

function renderOutcomes(name: string, outcomes: readonly Outcome[], planCommand: string): string {
  const lines = outcomes.map(({ attempt, lost, why }) => {
    const paid = formatUsdHuman(attempt.amountMicros - attempt.refundedMicros);
    return lost
      ? `  forgot ${attempt.itemId}: job ${attempt.jobId} is unknown to the service; it cost ${paid}, and the item is pending again`
      : `  kept ${attempt.itemId}: job ${attempt.jobId}: ${why}`;
  });
  const lost = outcomes.filter((outcome) => outcome.lost);
  const paid = lost.reduce((sum, { attempt }) => sum + attempt.amountMicros - attempt.refundedMicros, 0);
  const tail =
    lost.length === 0
      ? 'nothing was forgotten'
      : `${lost.length} job(s) forgotten, ${formatUsdHuman(paid)} paid for them is kept in the spend. ` +
        `The next run submits their items again and pays again: ${planCommand} says how much at most`;
  return `${name}:\n${lines.join('\n')}\n${tail}\n`;
}
