import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import type { CliResult } from '../../support/cli.js';
import {
  allPosts,
  type E2eProject,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';
import { type Receiver, signatureValid, startReceiver } from '../../support/receiver.js';

const SECRET = 'whsec_night_test_secret_0123456789';

let sandbox: SandboxHandle | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = undefined;
  receiver = undefined;
});

const items = (ids: string[]) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "shot ${id}"}`).join('\n')}\n`;

/** Three 2-second 480p items at $0.04 each under a $0.09 budget: two run, one is kept back. */
function budgetProject(name: string): E2eProject {
  return project(
    name,
    `${manifestYaml(name, 'budget_usd: "0.09"\nconcurrency: 1\n')}${items(['a', 'b', 'c'])}`,
  );
}

const notifyEnv = (extra: Record<string, string> = {}) => ({ MEDIABATCH_NOTIFY_SECRET: SECRET, ...extra });

/** What a notification must never carry: the API key, a signed URL's query, the secret. */
function expectNothingSecret(body: string, s: SandboxHandle): void {
  expect(body).not.toContain(s.apiKey);
  expect(body).not.toContain(SECRET);
  expect(body).not.toMatch(/https?:\/\/[^"]*\?/);
}

describe('run --notify', () => {
  it('posts a signed summary when the budget stops the run and when it ends, equal to --json', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const r = await startReceiver();
    receiver = r;
    const p = budgetProject('notify-budget');
    const result = await runAgainst(s, p, ['--json', '--notify', r.url], notifyEnv());
    expect(result.code, result.stderr).toBe(1);
    const json = JSON.parse(result.stdout) as { totals: Record<string, unknown> };

    const bodies = r.delivered();
    expect(bodies.map((body) => body.event)).toEqual(['run.stopped', 'run.finished']);
    for (const request of r.received) {
      expect(signatureValid(request, SECRET), request.headers['x-mediabatch-signature'] as string).toBe(true);
      expect(signatureValid(request, 'another secret')).toBe(false);
      expect(request.headers['content-type']).toBe('application/json');
      expectNothingSecret(request.body, s);
    }
    const [stopped, finished] = bodies;
    expect(stopped).toMatchObject({
      outcome: null,
      exit_code: null,
      stop: { kind: 'budget', code: 'budget_exceeded' },
      totals: { budget_exceeded: 1 },
    });
    expect(finished).toMatchObject({
      manifest: 'notify-budget',
      outcome: 'not_done',
      exit_code: 1,
      stop: { kind: 'budget', code: 'budget_exceeded' },
      ledger: p.ledger,
      output_dir: p.outDir,
      value_at_risk: { outputs: 0, cost_usd: '0.000000' },
    });
    // The same counts and money as the run's own --json document.
    expect(finished!.totals).toEqual(json.totals);
    expect(json.totals).toMatchObject({
      done: 2,
      budget_exceeded: 1,
      spent_usd: '0.080000',
      budget_left_usd: '0.010000',
    });
    // A tampered body no longer verifies.
    const tampered = { ...r.received.at(-1)!, body: r.received.at(-1)!.body.replace('"done":2', '"done":3') };
    expect(signatureValid(tampered, SECRET)).toBe(false);
  }, 60_000);

  it('still delivers to a receiver that answers 500 three times', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const r = await startReceiver([500, 500, 500]);
    receiver = r;
    const p = project('notify-500', `${manifestYaml('notify-500')}${items(['a'])}`);
    const result = await runAgainst(s, p, ['--notify', r.url], notifyEnv());
    expect(result.code, result.stderr).toBe(0);
    expect(r.received.map((request) => request.status)).toEqual([500, 500, 500, 204]);
    // The same document each time, each try signed afresh and valid.
    expect(new Set(r.received.map((request) => request.body)).size).toBe(1);
    expect(r.received.every((request) => signatureValid(request, SECRET))).toBe(true);
    expect(r.delivered()).toMatchObject([
      { event: 'run.finished', outcome: 'done', exit_code: 0, stop: null, totals: { done: 1 } },
    ]);
    expect(result.stderr).toContain(`notified ${new URL(r.url).origin} (run.finished)`);
  }, 60_000);

  it('a dead receiver changes nothing: same exit code and items, a logged line without the secret', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const dead = await startReceiver();
    await dead.close();
    const withDead = budgetProject('notify-dead');
    const without = budgetProject('notify-alive');
    const started = Date.now();
    const a = await runAgainst(
      s,
      withDead,
      ['--json', '--notify', dead.url],
      notifyEnv({ MEDIABATCH_NOTIFY_SECONDS: '1.5' }),
    );
    const tookMs = Date.now() - started;
    const b = await runAgainst(s, without, ['--json']);
    expect(a.code).toBe(b.code);
    expect(a.code).toBe(1);
    const states = (result: CliResult) =>
      (JSON.parse(result.stdout) as { items: Array<{ id: string; state: string }> }).items.map((item) => [
        item.id,
        item.state,
      ]);
    expect(states(a)).toEqual(states(b));
    expect(a.stderr).toMatch(
      /could not deliver the run\.finished notification to http:\/\/127\.0\.0\.1:\d+ after \d+ tries \(ECONNREFUSED\); the run's outcome is unchanged/,
    );
    expect(a.stderr).not.toContain(SECRET);
    expect(a.stderr).not.toContain('/hooks/mediabatch');
    // Bounded: the tries end with MEDIABATCH_NOTIFY_SECONDS, not with the receiver.
    expect(tookMs).toBeLessThan(15_000);
  }, 60_000);

  it('refuses a --notify that is not an http(s) URL before anything is sent', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project('notify-bad', `${manifestYaml('notify-bad')}${items(['a'])}`);
    const result = await runAgainst(s, p, ['--notify', 'ftp://example.invalid/x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--notify / MEDIABATCH_NOTIFY_URL must be an http(s) URL');
    expect(allPosts(s)).toHaveLength(0);
  });

  it('takes notify.url from the manifest', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const r = await startReceiver();
    receiver = r;
    const p = project(
      'notify-manifest',
      `${manifestYaml('notify-manifest', `notify: {url: "${r.url}"}\n`)}${items(['a'])}`,
    );
    const result = await runAgainst(s, p, [], notifyEnv());
    expect(result.code, result.stderr).toBe(0);
    expect(r.delivered().map((body) => body.event)).toEqual(['run.finished']);
  }, 60_000);
});

describe('run --on-complete', () => {
  const HOOK = `import { readFileSync, writeFileSync } from 'node:fs';
const stdin = readFileSync(0, 'utf8');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MEDIA')));
writeFileSync(process.argv[2], JSON.stringify({ argv: process.argv.slice(2), stdin, env }));
process.exit(Number(process.env.HOOK_EXIT ?? 0));
`;

  it('runs the command once, without a shell, with the summary on stdin and in the environment', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project('hook', `${manifestYaml('hook')}${items(['a', 'b'])}`, { 'hook.mjs': HOOK });
    const command = `${process.execPath} hook.mjs 'seen it.json' "two words" $HOME`;
    const result = await runAgainst(s, p, ['--on-complete', command], notifyEnv());
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(readFileSync(join(p.dir, 'seen it.json'), 'utf8')) as {
      argv: string[];
      stdin: string;
      env: Record<string, string>;
    };
    // Quotes group words; $HOME is passed as written, because no shell expands it.
    expect(seen.argv).toEqual(['seen it.json', 'two words', '$HOME']);
    const summary = JSON.parse(seen.stdin) as { event: string; exit_code: number; totals: { done: number } };
    expect(summary).toMatchObject({ event: 'run.finished', exit_code: 0, totals: { done: 2 } });
    expect(JSON.parse(seen.env.MEDIABATCH_SUMMARY!)).toEqual(summary);
    expect(seen.env).toMatchObject({
      MEDIABATCH_EVENT: 'run.finished',
      MEDIABATCH_EXIT_CODE: '0',
      MEDIABATCH_MANIFEST: 'hook',
      MEDIABATCH_STOP: '',
      MEDIABATCH_ITEMS: '2',
      MEDIABATCH_DONE: '2',
      MEDIABATCH_FAILED: '0',
      MEDIABATCH_SPENT_USD: '0.080000',
      MEDIABATCH_LEDGER: p.ledger,
      MEDIABATCH_OUTPUT_DIR: p.outDir,
    });
    // The key and the notification secret never reach the command.
    expect(seen.env.MEDIAGEN_API_KEY).toBeUndefined();
    expect(seen.env.MEDIABATCH_NOTIFY_SECRET).toBeUndefined();
  }, 60_000);

  it('reports a failing command without changing the exit code', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project('hook-fails', `${manifestYaml('hook-fails')}${items(['a'])}`, { 'hook.mjs': HOOK });
    const result = await runAgainst(s, p, ['--on-complete', `${process.execPath} hook.mjs out.json`], {
      HOOK_EXIT: '7',
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `--on-complete ${process.execPath} exited with code 7; the run's outcome is unchanged`,
    );
    const missing = await runAgainst(s, p, ['--on-complete', 'no-such-program-here --x']);
    expect(missing.code).toBe(0);
    expect(missing.stderr).toContain('--on-complete no-such-program-here could not be started (ENOENT)');
  }, 60_000);

  it('refuses shell syntax before anything is sent, and says how to ask for a shell', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project('hook-shell', `${manifestYaml('hook-shell')}${items(['a'])}`);
    writeFileSync(join(p.dir, 'x'), '');
    const result = await runAgainst(s, p, ['--on-complete', 'echo done | mail me']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `--on-complete "|" is shell syntax, and no shell runs the command; to use a shell, write sh -c '...'`,
    );
    expect(allPosts(s)).toHaveLength(0);
  });
});
