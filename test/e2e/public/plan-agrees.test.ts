import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWords } from '../../../src/cli/words.js';
import {
  type ErrorCode,
  ExitCode,
  exitCodeOfError,
  loadManifest,
  type PlanDocument,
  plan,
  run,
  type SandboxHandle,
  UserError,
} from '../../../src/index.js';
import { runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, startTestSandbox } from '../../support/e2e.js';
import { ownProject, takeItems } from '../../support/services.js';

/**
 * `plan()` and `mediabatch plan --json` (the built CLI, a child process) on the same batches: the
 * same document, or the same refusal (the library's code and message, the CLI's exit code and
 * stderr, the message as the CLI words it, nothing on stdout). Both read the same environment, from the same folder.
 */

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** A batch as both sides see it: a manifest file in a folder, and the environment to read. */
interface Situation {
  dir: string;
  /** The manifest file, relative to `dir`. */
  file: string;
  env: Record<string, string>;
}

type Expected =
  | { agree: 'document'; check?: (doc: PlanDocument) => void }
  | { agree: 'refusal'; code: ErrorCode };

const env = () => ({ PATH: process.env.PATH ?? '', ...cliEnv(sandbox) });

/** A batch run to the end through the library, as a CLI user's earlier run would leave it. */
async function ranBatch(name: string, ids: readonly string[]) {
  const p = ownProject(name, `${manifestYaml(name)}${takeItems(ids)}`);
  const result = await run(loadManifest(p.manifest), { env: env(), cwd: p.dir }).result;
  expect(result.outcome, JSON.stringify(result.status.totals)).toBe('done');
  return p;
}

const cases: Array<[string, () => Promise<Situation>, Expected]> = [
  [
    'a new batch: no ledger yet',
    async () => {
      const p = ownProject('fresh', `${manifestYaml('fresh')}${takeItems(['a', 'b', 'c'])}`);
      return { dir: p.dir, file: 'batch.yaml', env: env() };
    },
    {
      agree: 'document',
      check: (doc) => {
        expect(doc.items.map((item) => item.plan)).toEqual(['new', 'new', 'new']);
        // The account was checked: both documents carry the sandbox's answer.
        expect(doc.account).toMatchObject({ base_url: sandbox.baseUrl, error: null, wallet_enabled: true });
      },
    },
  ],
  [
    'an item edited after a run',
    async () => {
      const p = await ranBatch('edited', ['a', 'b']);
      const items = 'items:\n  - {id: a, prompt: "take a, rewritten"}\n  - {id: b, prompt: "take b"}\n';
      writeFileSync(p.manifest, `${manifestYaml('edited')}${items}`);
      return { dir: p.dir, file: 'batch.yaml', env: env() };
    },
    {
      agree: 'document',
      check: (doc) => {
        expect(doc.items.map((item) => [item.id, item.plan])).toEqual([
          ['a', 'changed'],
          ['b', 'done'],
        ]);
      },
    },
  ],
  [
    'the output folder owned by another batch',
    async () => {
      const p = await ranBatch('owner', ['a']);
      // A second manifest in the same folder, writing into the first one's output folder.
      const yaml = `${manifestYaml('intruder', 'output: {dir: out/owner}\n')}${takeItems(['a'])}`;
      writeFileSync(join(p.dir, 'intruder.yaml'), yaml);
      return { dir: p.dir, file: 'intruder.yaml', env: env() };
    },
    { agree: 'refusal', code: 'output_owned' },
  ],
  [
    'a base URL without /v1',
    async () => {
      const p = ownProject('noroute', `${manifestYaml('noroute')}${takeItems(['a'])}`);
      const baseUrl = sandbox.baseUrl.replace(/\/v1\/?$/, '');
      return { dir: p.dir, file: 'batch.yaml', env: { ...env(), MEDIAGEN_BASE_URL: baseUrl } };
    },
    { agree: 'refusal', code: 'service_wrong_route' },
  ],
  [
    'a lost ledger: deleted while the service holds the jobs',
    async () => {
      const p = await ranBatch('lost', ['a', 'b']);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${p.ledger}${suffix}`, { force: true });
      return { dir: p.dir, file: 'batch.yaml', env: env() };
    },
    { agree: 'refusal', code: 'ledger_lost' },
  ],
];

describe('plan() and `mediabatch plan --json` agree', () => {
  it.each(cases)('%s', async (_, situation, expected) => {
    const { dir, file, env: environment } = await situation();
    const manifest = loadManifest(join(dir, file));
    const library = await plan(manifest, { env: environment, cwd: dir }).then(
      (doc) => ({ doc, error: null }),
      (error: unknown) => ({ doc: null, error }),
    );
    const cli = await runCli(['plan', file, '--json'], { cwd: dir, env: environment });

    if (expected.agree === 'document') {
      expect(library.error).toBeNull();
      expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: ExitCode.Ok, stderr: '' });
      // The CLI prints the document without `ledger`, which the library adds for its text views.
      const { ledger, ...doc } = library.doc!;
      expect(ledger.path).toBe(join(dir, '.mediabatch', `${manifest.name}.sqlite`));
      expect(JSON.parse(cli.stdout)).toEqual(JSON.parse(JSON.stringify(doc)));
      expected.check?.(library.doc!);
      return;
    }
    const error = library.error as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect({ code: error.code, exitCode: exitCodeOfError(error.code) }).toEqual({
      code: expected.code,
      exitCode: ExitCode.Usage,
    });
    expect({ code: cli.code, stdout: cli.stdout }).toEqual({ code: exitCodeOfError(error.code), stdout: '' });
    // The same refusal: the library's words in API terms, the CLI's with its flags.
    expect(cli.stderr).toBe(`mediabatch plan: ${cliWords(error)}\n`);
  });
});
