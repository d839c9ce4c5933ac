import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { OWNER_MARKER } from '../../../src/downloads/output-owner.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  filesBelow,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';
import { requestLog } from '../../support/services.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const items = (...ids: string[]) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: ${id} at dawn}\n`).join('')}`;

/** Every file of a folder with its SHA-256, the owner marker included. */
function snapshot(dir: string): Array<[string, string]> {
  const marker = existsSync(join(dir, OWNER_MARKER)) ? [OWNER_MARKER] : [];
  return [...marker, ...filesBelow(dir)].map((name) => [name, sha256File(join(dir, name))]);
}

/** Two manifests in one folder, both writing to out/shared: a batch copied into a new campaign. */
function twoBatches(): { dir: string; spring: E2eProject; summer: E2eProject; shared: string } {
  const output = 'output: {dir: out/shared}\n';
  const dir = tempProject({
    'spring.yaml': `${manifestYaml('spring', output)}${items('beach', 'city')}`,
    'summer.yaml': `${manifestYaml('summer', output)}${items('beach', 'forest')}`,
  });
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const shared = join(dir, 'out', 'shared');
  const of = (name: string): E2eProject => ({
    dir,
    manifest: join(dir, `${name}.yaml`),
    ledger: join(dir, '.mediabatch', `${name}.sqlite`),
    outDir: shared,
  });
  return { dir, spring: of('spring'), summer: of('summer'), shared };
}

describe('an output folder has one owner', () => {
  it("refuses a second batch in the first one's folder before any request, and plan says so", async () => {
    sandbox = await startTestSandbox();
    const { dir, spring, summer, shared } = twoBatches();
    const first = await runAgainst(sandbox, spring);
    expect(first.code, first.stderr).toBe(0);

    // The first run claimed the folder: manifest, ledger (relative to the folder) and service.
    const marker = JSON.parse(readFileSync(join(shared, OWNER_MARKER), 'utf8')) as Record<string, unknown>;
    expect(marker).toMatchObject({
      mediabatch_output_folder: 1,
      manifest: 'spring',
      ledger: join('..', '..', '.mediabatch', 'spring.sqlite'),
      service: sandbox.baseUrl,
    });
    const before = snapshot(shared);
    expect(before.map(([name]) => name)).toEqual([
      OWNER_MARKER,
      'beach.json',
      'beach.mp4',
      'city.json',
      'city.mp4',
    ]);

    // plan: not "no item owns it", but what run will do, with run's exit code.
    const plan = await runCli(['plan', summer.manifest], { cwd: dir, env: cliEnv(sandbox) });
    expect(plan.code).toBe(2);
    expect(plan.stdout).not.toContain('beach.mp4');
    expect(plan.stdout).not.toContain('did not write');
    expect(plan.stderr).toContain(
      'mediabatch plan: run would refuse this manifest (output_owned): the output folder out/shared belongs to another batch: manifest spring, ledger .mediabatch/spring.sqlite',
    );

    const requests = requestLog(sandbox).length; // the plan's GET /account included
    const second = await runAgainst(sandbox, summer);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `mediabatch run: the output folder out/shared belongs to another batch: manifest spring, ledger .mediabatch/spring.sqlite (${sandbox.baseUrl})`,
    );
    expect(second.stderr).toContain(
      'Give summer a folder of its own: set output.dir in summer.yaml (for example out/summer)',
    );
    expect(second.stderr).toContain(`delete out/shared/${OWNER_MARKER}`);
    expect(second.stderr).toContain('nothing was sent');
    expect(second.stderr).not.toMatch(/\n\s+at /); // no stack trace

    // Not one request, not one byte changed, and no second ledger left behind.
    expect(requestLog(sandbox)).toHaveLength(requests);
    expect(snapshot(shared)).toEqual(before);
    expect(existsSync(summer.ledger)).toBe(false);
    expect(jobsOfItem(sandbox, 'summer', 'beach')).toEqual([]);

    // Another ledger for the same manifest is another owner too.
    const otherLedger = await runAgainst(sandbox, spring, ['--ledger', '.mediabatch/spring-copy.sqlite']);
    expect(otherLedger.code).toBe(2);
    // The ledger that owns the folder is named first, another folder second.
    expect(otherLedger.stderr).toContain(
      '--ledger .mediabatch/spring.sqlite (or no --ledger at all: it is the default)',
    );
    expect(otherLedger.stderr).toContain('for example out/shared-2');
    expect(requestLog(sandbox)).toHaveLength(requests);
    expect(snapshot(shared)).toEqual(before);
  });

  it('a ledger from before folders had owners claims its folder on its next run, sending nothing', async () => {
    sandbox = await startTestSandbox();
    const p = project('old', `${manifestYaml('old')}${items('a', 'b')}`);
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    rmSync(join(p.outDir, OWNER_MARKER)); // as an older mediabatch left it
    const outputs = snapshot(p.outDir);
    const posts = allPosts(sandbox).length;

    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(snapshot(p.outDir)).toEqual([
      [OWNER_MARKER, sha256File(join(p.outDir, OWNER_MARKER))],
      ...outputs,
    ]);
    expect(JSON.parse(readFileSync(join(p.outDir, OWNER_MARKER), 'utf8'))).toMatchObject({
      manifest: 'old',
      ledger: join('..', '..', '.mediabatch', 'old.sqlite'),
    });
    expect(ledgerRows(p, 'SELECT item_id, state FROM items ORDER BY item_id')).toEqual([
      { item_id: 'a', state: 'done' },
      { item_id: 'b', state: 'done' },
    ]);
  });

  it('never overwrites a file it did not write: that item is not submitted until the file is moved', async () => {
    sandbox = await startTestSandbox();
    const p = project('mine', `${manifestYaml('mine')}${items('a', 'b')}`, {
      'out/mine/a.mp4': 'a video the user made by hand\n',
    });
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    const theirs = sha256File(join(p.outDir, 'a.mp4'));

    const plan = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      'a: run will not submit it: out/mine/a.mp4 is in the way, a file this ledger did not write (run never overwrites one); move it elsewhere first',
    );
    // Not counted among the items to submit either: plan's are what run sends (b alone).
    const planned = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    const doc = JSON.parse(planned.stdout) as {
      items: Array<{ id: string; plan: string }>;
      totals: { to_submit: number; held_back: number };
    };
    expect(doc.items.map((entry) => [entry.id, entry.plan])).toEqual([
      ['a', 'held_back'],
      ['b', 'new'],
    ]);
    expect(doc.totals).toMatchObject({ to_submit: 1, held_back: 1 });

    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toContain(
      'a: not submitted: out/mine/a.mp4 is in the way, a file this ledger did not write, and run never overwrites one',
    );
    expect(jobsOfItem(sandbox, 'mine', 'a')).toEqual([]);
    expect(jobsOfItem(sandbox, 'mine', 'b')).toHaveLength(1);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(theirs);
    expect(ledgerRows(p, 'SELECT item_id, state FROM items ORDER BY item_id')).toEqual([
      { item_id: 'a', state: 'pending' },
      { item_id: 'b', state: 'done' },
    ]);
    expect(ledgerRows(p, "SELECT id FROM attempts WHERE item_id = 'a'")).toEqual([]);

    // Moved away: the next run submits it, and the user's file is where they put it.
    renameSync(join(p.outDir, 'a.mp4'), join(p.dir, 'hand-made.mp4'));
    const after = await runAgainst(sandbox, p);
    expect(after.code, after.stderr).toBe(0);
    const [job] = jobsOfItem(sandbox, 'mine', 'a');
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(job!.files[0]!.sha256);
    expect(sha256File(join(p.dir, 'hand-made.mp4'))).toBe(theirs);
  });
});
