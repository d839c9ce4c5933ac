import { ExitCode, UserError } from '../../errors.js';
import { stopOnJobsUnknownToLedger } from '../../import/known-jobs-check.js';
import {
  type Connection,
  connectionFromEnv,
  forSandbox,
  ledgerPathFor,
  manifestOrExit,
  saveCommand,
} from '../../lib/common.js';
import { planSource, withLedger } from '../../lib/ledger-read.js';
import { filesUnder } from '../../lib/output-files.js';
import { outputFolderRefusal } from '../../lib/output-folder.js';
import { ensureSameService, SANDBOX_IDENTITY, serviceIdentity } from '../../lib/service.js';
import { checkAccount, clientFor, serviceTimings } from '../../lib/service-check.js';
import type { Manifest } from '../../manifest/index.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { type AccountCheck, buildPlan } from '../../report/plan-report.js';
import { planTextChunks } from '../../report/render-plan.js';
import { cleanText } from '../../report/render-text.js';
import type { CliIo, Command } from '../io.js';
import type { CommandArgs } from '../parse-args.js';

/** The code plan gives an account check that got no answer in time (not the service's). */
const SLOW = 'no_answer_in_time';

export const planCommand: Command<'plan'> = async (args, io) => {
  const { values, positionals } = args;
  const manifest = forSandbox(
    manifestOrExit(positionals[0], io, 'run would refuse it too, and submit nothing'),
    values.sandbox,
  );
  const account = await checkLikeRun(manifest, args, io);
  // Another batch's folder: run refuses it before any request, so its files are not this plan's.
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const folderRefusal = outputFolderRefusal({ manifest, ledgerPath, cwd: io.cwd });
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

/**
 * What `run`'s pre-flight would refuse, refused here with the same words and exit code, before
 * anything is priced: a ledger bound to another service, an address that is not the service
 * (missing /v1), and a new ledger while the service holds this manifest's jobs (a lost ledger).
 * Returns what GET /account said, or null when no service was given.
 */
async function checkLikeRun(
  manifest: Manifest,
  { values, positionals }: CommandArgs<'plan'>,
  io: CliIo,
): Promise<AccountCheck | null> {
  const connection = values.sandbox ? null : accountConnection(values['base-url'], io);
  if (!values.sandbox && connection === null) return null;
  const identity = connection ? serviceIdentity(connection.baseUrl) : SANDBOX_IDENTITY;
  const ledger = withLedger(manifest, values.ledger, io, { sandbox: values.sandbox }, (opened, note) => ({
    ...note,
    attempts: opened?.hasAttempts() ?? false,
  }));
  try {
    ensureSameService(ledger.service, identity, ledger.path, io.cwd);
    if (connection === null) return null;
    const account = await accountOf(connection, io);
    if (account.ok)
      await stopOnJobsUnknownToLedger(
        connection,
        { hasAttempts: () => ledger.attempts },
        {
          manifestName: manifest.name,
          manifestArg: positionals[0]!,
          ledgerPath: ledger.path,
          ledgerFlag: values.ledger,
          baseUrlFlag: values['base-url'],
        },
      );
    return account;
  } catch (error) {
    if (error instanceof UserError && error.exitCode === ExitCode.Usage)
      throw new UserError(`run would stop here: ${error.message}`, error.exitCode);
    throw error;
  }
}

/**
 * A --base-url flag is an explicit request to check the account, so a missing key is an error
 * there; a base URL merely exported in the environment without a key just skips the check.
 */
function accountConnection(flag: string | undefined, io: CliIo): Connection | null {
  if (flag === undefined && io.env.MEDIAGEN_BASE_URL && !io.env.MEDIAGEN_API_KEY) {
    io.stderr.write(
      'mediabatch plan: MEDIAGEN_BASE_URL is set but MEDIAGEN_API_KEY is not; the account is not checked\n',
    );
    return null;
  }
  return connectionFromEnv(flag, io);
}

/**
 * run's own pre-flight, GET /account only: plan never sends a POST. A wrong address throws (exit
 * 2, with run's hint); a service that cannot be reached within the window is reported as run
 * would (exit 1), after the plan. Messages never carry the key or a URL's query.
 */
async function accountOf(connection: Connection, io: CliIo): Promise<AccountCheck> {
  const baseUrl = displayUrl(connection.baseUrl);
  const safe = (message: string) => cleanText(message.split(connection.apiKey).join('[redacted]'));
  const timings = serviceTimings(io);
  const client = clientFor(connection, timings);
  const failed = (status: number | null, code: string | null, message: string): AccountCheck => ({
    baseUrl,
    ok: false,
    status,
    code,
    message: safe(message),
  });
  try {
    const checked = await checkAccount(client, connection, timings, (line) =>
      io.stderr.write(`mediabatch plan: ${line}\n`),
    );
    if (checked.kind === 'answered') return { baseUrl, ok: true, account: checked.account };
    if (checked.kind === 'refused')
      return failed(checked.error.status, checked.error.code, checked.error.message);
    return failed(null, SLOW, 'no answer in time; run would go on, resending what goes unanswered');
  } catch (error) {
    if (error instanceof UserError && error.exitCode === ExitCode.ItemsNotDone)
      return failed(null, null, error.message);
    throw error;
  }
}

/** The base URL without credentials, query or fragment, fit to print. */
function displayUrl(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname}`;
}
