/**
 * A nightly job: run a manifest against the embedded sandbox, stream progress to a log file, stop
 * after N minutes (the run drains as after Ctrl-C: nothing new is paid, what is paid is saved, and
 * tomorrow's run resumes) and print the cost. Against a real service, replace `sandbox: true` with
 * `baseUrl` (the key comes from MEDIAGEN_API_KEY, or pass `apiKey`).
 *
 *   node nightly.js <manifest.yaml> [minutes=30] [log=nightly.log]
 */
import { appendFileSync } from 'node:fs';
import { exitCodeOfError, exitCodeOfOutcome, loadManifest, run, UserError } from 'mediabatch';

const [manifestPath, minutesText = '30', logPath = 'nightly.log'] = process.argv.slice(2);
if (!manifestPath) {
  console.error('usage: nightly <manifest.yaml> [minutes] [log]');
  process.exit(2);
}
const log = (line: string) => appendFileSync(logPath, `${new Date().toISOString()} ${line}\n`);

try {
  // Throws ManifestError listing every problem, each with file:line:column.
  const manifest = loadManifest(manifestPath);
  const handle = run(manifest, {
    sandbox: true,
    signal: AbortSignal.timeout(Number(minutesText) * 60_000),
  });
  handle.on('item', ({ itemId, state, detail }) => log(`${itemId}: ${state}${detail ? ` (${detail})` : ''}`));
  handle.on('progress', (p) =>
    log(`progress: ${p.byState.done}/${p.total} done, ${p.unfinished} unfinished`),
  );
  handle.on('log', ({ level, message }) => log(`${level}: ${message}`));
  handle.on('stop', ({ reason, message }) => log(`stop (${reason.kind}): ${message}`));

  // Resolves also when the time is up: the drained state, outcome `interrupted`.
  const result = await handle.result;
  const { totals } = result.status;
  console.log(
    `${manifest.name}: ${totals.done}/${totals.items} done, spent $${totals.spent_usd}, ` +
      `outcome ${result.outcome}`,
  );
  // The exit code `mediabatch run` would end with for the same outcome.
  process.exitCode = exitCodeOfOutcome(result.outcome);
} catch (error) {
  // A mistake to fix (manifest, options, a ledger held by another run): its message, no stack.
  if (!(error instanceof UserError)) throw error;
  console.error(`${error.code}: ${error.message}`);
  process.exitCode = exitCodeOfError(error.code);
}
