import { type Manifest, streamPlan, writePlan } from '../../index.js';
import { humanUsd } from '../../money.js';
import { accountFailure, jsonChunks, planSummaryChunks, planTextChunks, wantsSummary } from '../../render.js';
import { commandLine, openBatch, openStreamedBatch, withManifestWords } from '../batch-options.js';
import { libraryOptions } from '../flag-row.js';
import type { Command } from '../io.js';
import { writeChunks } from '../ui/write-chunks.js';
import { cliWords, warnOn } from '../words.js';
import { PLAN_FLAGS } from './plan-flags.js';

/** `plan`: what `run` would do now, with the checks run's pre-flight makes (docs/commands.md). */
export const planCommand: Command<'plan'> = async ({ values, positionals }, io) => {
  // An approved plan (--out) lists every item's request: it is made of the manifest held whole.
  const opened =
    values.out === undefined
      ? await openStreamedBatch({ values, positionals }, io, 'plan')
      : await openBatch({ values, positionals }, io, 'plan');
  const { manifestArg, manifest, options } = opened;
  const asked = {
    ...options,
    warn: warnOn(io, 'plan'),
    // run's flags that change what it pays for, previewed; --verify reads every saved file.
    ...libraryOptions(PLAN_FLAGS, values),
  };
  const written =
    values.out === undefined
      ? null
      : await writePlan(manifest as Manifest, { ...asked, to: values.out, force: values.force });
  const { ledger, ...doc } =
    written?.document ?? (await withManifestWords('plan', () => streamPlan(manifest, asked)));
  const save = commandLine('run', manifestArg, values);
  try {
    const text = wantsSummary(doc.totals.items, values) ? planSummaryChunks : planTextChunks;
    await writeChunks(io.stdout, values.json ? jsonChunks(doc) : text(doc, ledger, save), cliWords);
  } finally {
    // A streamed plan's items wait in a temporary file until written.
    if (!Array.isArray(doc.items)) doc.items.close();
  }
  if (written !== null) {
    const same = [
      ...(values['retry-failed'] ? ['--retry-failed'] : []),
      ...(values['regenerate-expired'] ? ['--regenerate-expired'] : []),
    ];
    const runIt = [save, ...same, '--plan', values.out ?? ''].join(' ');
    (values.json ? io.stderr : io.stdout).write(
      `approved plan written to ${values.out}: plan_sha256 ${written.approved.plan_sha256}, ` +
        `at most ${humanUsd(written.approved.total_at_most_usd)}\nrun it with: ${runIt}\n`,
    );
  }
  const failure = accountFailure(doc.account);
  if (failure === null) return 'done';
  io.stderr.write(`mediabatch plan: ${cliWords(failure.line)}\n`);
  return failure.outcome;
};
