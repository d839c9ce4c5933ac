import { ExitCode } from '../../errors.js';
import { forSandbox, ledgerPathFor, manifestOrExit, saveCommand } from '../../batch/placement.js';
import { planSource, withLedger } from '../../batch/ledger-read.js';
import { filesUnder } from '../../batch/output-files.js';
import { outputLocationRefusal } from '../../batch/output-owner-check.js';
import { checkLikeRun, SLOW } from '../../batch/plan-check.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { buildPlan } from '../../report/plan-report.js';
import { planTextChunks } from '../../report/render-plan.js';
import type { Command } from '../io.js';

export const planCommand: Command<'plan'> = async (args, io) => {
  const { values, positionals } = args;
  const manifest = forSandbox(
    manifestOrExit(positionals[0], io, 'run would refuse it too, and submit nothing'),
    values.sandbox,
  );
  const account = await checkLikeRun(
    manifest,
    {
      sandbox: values.sandbox,
      ledger: values.ledger,
      baseUrl: values['base-url'],
      manifestArg: positionals[0]!,
    },
    io,
  );
  // Another batch's folder: run refuses it before any request, so its files are not this plan's.
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const folderRefusal = await outputLocationRefusal({ manifest, ledgerPath, cwd: io.cwd });
  const outputFiles = folderRefusal === null ? filesUnder(manifest.outputDir, manifest.file) : null;
  const { doc, note } = withLedger(
    manifest,
    values.ledger,
    io,
    { sandbox: values.sandbox },
    (ledger, note) => ({
      note,
      doc: buildPlan(manifest, planSource(ledger), account, Date.now(), {
        outputFiles,
        // An edited item's last whole body is read on its own, to name the fields that changed.
        previousBody: (attempt) => ledger?.getAttempt(attempt.id).requestBody,
        previousVars: (attempt) => ledger?.getAttempt(attempt.id).vars,
      }),
    }),
  );
  const save = saveCommand(positionals[0]!, { ledger: values.ledger, sandbox: values.sandbox });
  await writeChunks(io.stdout, values.json ? jsonChunks(doc) : planTextChunks(doc, note, save));
  if (folderRefusal !== null) {
    io.stderr.write(`mediabatch plan: run would refuse this manifest (exit 2): ${folderRefusal}\n`);
    return ExitCode.Usage;
  }

  // A slow service does not stop run (its requests are resent with the same keys): nor plan.
  if (account === null || account.ok || account.code === SLOW) return ExitCode.Ok;
  const refused = account.status === 401 || account.status === 402;
  const hint =
    account.status === 401
      ? 'check MEDIAGEN_API_KEY'
      : account.status === 402
        ? 'the wallet must be enabled and funded'
        : 'run would stop the same way, before submitting anything';
  io.stderr.write(
    `mediabatch plan: GET /account at ${account.baseUrl} failed: ${account.message} (${hint})\n`,
  );
  return refused ? ExitCode.Refused : ExitCode.ItemsNotDone;
};
