import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { type E2eProject, project, runAgainst, sha256File, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, startPostgresServer } from '../../support/postgres-server.js';
import { requestLog } from '../../support/services.js';

/** The morning review on 4 items x 3 variants: keep from a keep.txt, status and plan counts, export --kept, copy-ledger. */

let sandbox: SandboxHandle;
let p: E2eProject;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const items = ['a', 'b', 'c', 'd'].map((id) => `  - {id: ${id}, prompt: "Shot ${id}, take {variant}"}`);
  const yaml = `version: 1\nname: picks\ninput: {seconds: 2, definition: 480p, seed: "{variant}"}\nvariants: 3\nmax_cost_usd: "0.05"\nconcurrency: 3\nitems:\n${items.join('\n')}\n`;
  p = project('picks', yaml);
  const run = await runAgainst(sandbox, p);
  expect(run.code, run.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  rmSync(p.dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli([args[0]!, p.manifest, ...args.slice(1)], { cwd: p.dir });

describe('keepers of variants', () => {
  it('keeps from keep.txt, counts the items still without a keeper, and exports the picks', async () => {
    const before = await cli('status', '--json');
    expect(JSON.parse(before.stdout).without_keeper).toEqual(['a', 'b', 'c', 'd']);
    expect((await cli('status')).stdout).toContain('4 items with variants have no keeper yet');
    // An id of a variant names the item and the variant instead.
    const variantId = await cli('keep', 'a.v2:1');
    expect(variantId.code).toBe(2);
    expect(variantId.stderr).toContain('a:2');

    const page = () => readFileSync(join(p.outDir, 'index.html'), 'utf8');
    expect(page()).not.toContain('"keeper":"');
    const requests = requestLog(sandbox).length;
    writeFileSync(join(p.dir, 'keep.txt'), '# morning picks\na:2\nb:3\n\nc:1 # the first is best\n');
    const kept = await cli('keep', '@keep.txt');
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toContain('kept 3 items; 1 item with variants still has no keeper');
    expect(requestLog(sandbox)).toHaveLength(requests);
    // The run's gallery is refreshed: its picks start from the keepers just recorded.
    expect(kept.stdout).toMatch(/\ngallery: .*index\.html\n$/);
    expect(page().match(/"keeper":"[0-9.]+"/g)).toEqual(['"keeper":"2"', '"keeper":"3"', '"keeper":"1"']);

    expect(JSON.parse((await cli('status', '--json')).stdout).without_keeper).toEqual(['d']);
    const plan = await cli('plan', '--json');
    expect(JSON.parse(plan.stdout).without_keeper).toEqual(['d']);

    const exported = await cli('export', '--kept');
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(
      records.map((r: { id: string; item: string; variant: number }) => [r.id, r.item, r.variant]),
    ).toEqual([
      ['a', 'a.v2', 2],
      ['b', 'b.v3', 3],
      ['c', 'c', 1],
    ]);
    for (const record of records as Array<{ files: Array<{ path: string; sha256: string }> }>)
      expect(record.files[0]!.sha256).toBe(sha256File(join(p.dir, record.files[0]!.path)));
    expect(exported.stderr).toContain('1 item(s) without a kept take left out');
    const csv = await cli('export', '--kept', '--format', 'csv');
    expect(csv.stdout.split('\n')[0]).toBe(
      'id,item,variant,take,job_id,net_cost_usd,completed_at,files,in_manifest',
    );
  });

  const copy = () => join(p.dir, 'copy.sqlite');

  it('copy-ledger carries the keepers', async () => {
    const fromSource = await cli('export', '--kept');
    expect(fromSource.code, fromSource.stderr).toBe(0);
    const copied = await cli('copy-ledger', '--to', copy());
    expect(copied.code, copied.stderr).toBe(0);
    // The folder's claim moved with the copy: the copy is the ledger runs go on from now on.
    const fromCopy = await cli('export', '--kept', '--ledger', copy());
    expect(fromCopy.stdout).toBe(fromSource.stdout);
    // The old ledger is still read (a read-only command), saying first that it lost the folder;
    // a run on it is refused (copy-ledger.test.ts).
    const fromOld = await cli('export', '--kept');
    expect(fromOld.code, fromOld.stderr).toBe(0);
    expect(fromOld.stdout).toBe(fromSource.stdout);
    expect(fromOld.stderr).toContain('this ledger no longer owns the output folder');
  });

  it.skipIf(skipPostgresTests)(
    'keeps on a shared PostgreSQL ledger too, never printing its password',
    async () => {
      const server = await startPostgresServer();
      try {
        const url = await server.createDatabase('keep');
        // From the ledger that owns the folder now (the copy above), so the claim moves on to PostgreSQL.
        expect((await cli('copy-ledger', '--ledger', copy(), '--to', url)).code).toBe(0);
        const kept = await cli('keep', 'd:3', '--ledger', url);
        expect(kept.code, kept.stderr).toBe(0);
        expect(kept.stdout).toContain('every item with variants has a keeper');
        const bad = await cli('keep', 'dd:1', '--ledger', url);
        expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("did you mean 'd'")]);
        for (const text of [kept.stdout, bad.stderr]) expect(text).not.toContain(server.password);
        const picks = await cli('export', '--kept', '--ledger', url);
        expect(
          picks.stdout
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line).item),
        ).toEqual(['a.v2', 'b.v3', 'c', 'd.v3']);
      } finally {
        await server.stop();
      }
    },
    60_000,
  );
});
