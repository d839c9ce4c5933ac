import { ExitCode } from '../../errors.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { type AccountCheck, buildPlan } from '../../report/plan-report.js';
import { planTextChunks } from '../../report/render-plan.js';
import { cleanText } from '../../report/render-text.js';
import { type Connection, connectionFromEnv, ledgerPathFor, manifestOrExit } from '../common.js';
import type { CliIo, Command } from '../io.js';
import { planSource, withLedger } from '../ledger-read.js';
import { filesUnder } from '../output-files.js';
import { outputFolderRefusal } from '../output-folder.js';

export const planCommand: Command<'plan'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const connection = accountConnection(values['base-url'], io);
  const account = connection ? await checkAccount(connection) : null;
  // Another batch's folder: run refuses it before any request, so its files are not this plan's.
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io);
  const folderRefusal = outputFolderRefusal({ manifest, ledgerPath, cwd: io.cwd });
  const outputFiles = folderRefusal === null ? filesUnder(manifest.outputDir, manifest.file) : null;
  const { doc, note } = withLedger(manifest, values.ledger, io, {}, (ledger, note) => ({
    note,
    doc: buildPlan(manifest, planSource(ledger), account, Date.now(), {
      outputFiles,
      // An edited item's last whole body is read on its own, to name the fields that changed.
      previousBody: (attempt) => ledger?.getAttempt(attempt.id).requestBody,
    }),
  }));
  await writeChunks(io.stdout, values.json ? jsonChunks(doc) : planTextChunks(doc, note));
  if (folderRefusal !== null) {
    io.stderr.write(`mediabatch plan: run would refuse this manifest (exit 2): ${folderRefusal}\n`);
    return ExitCode.Usage;
  }

  if (account === null || account.ok) return ExitCode.Ok;
  const refused = account.status === 401 || account.status === 402;
  const hint =
    account.status === 401
      ? 'check MEDIAGEN_API_KEY'
      : account.status === 402
        ? 'the wallet must be enabled and funded'
        : account.status === null
          ? 'is the service reachable at that address?'
          : 'the service could not answer';
  io.stderr.write(
    `mediabatch plan: GET /account at ${account.baseUrl} failed: ${account.message} (${hint})\n`,
  );
  return refused ? ExitCode.Refused : ExitCode.ItemsNotDone;
};

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

/** GET /account only: plan never sends a POST. Messages never carry the key or a URL's query. */
async function checkAccount(connection: Connection): Promise<AccountCheck> {
  // Loaded here, not with the command: the HTTP client, undici and the wire schemas take about
  // 100 ms to load, and most plans check no account.
  const [{ MediaGenClient }, { ApiConnectionError, ApiError }] = await Promise.all([
    import('../../api/client.js'),
    import('../../api/errors.js'),
  ]);
  const baseUrl = displayUrl(connection.baseUrl);
  const client = new MediaGenClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    timeoutMs: 15_000,
  });
  const safe = (message: string) =>
    cleanText(connection.apiKey ? message.split(connection.apiKey).join('[redacted]') : message);
  try {
    const answer = await client.getAccount();
    return { baseUrl, ok: true, account: answer.data };
  } catch (error) {
    if (error instanceof ApiError) {
      return { baseUrl, ok: false, status: error.status, code: error.code, message: safe(error.message) };
    }
    if (error instanceof ApiConnectionError) {
      return { baseUrl, ok: false, status: null, code: null, message: safe(error.message) };
    }
    throw error;
  }
}

/** The base URL without credentials, query or fragment, fit to print. */
function displayUrl(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname}`;
}
