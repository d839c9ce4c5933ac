import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';
import { requestLog } from '../../support/services.js';

/**
 * `mediabatch keep` and `export --kept` (docs/gallery.md, "Keepers"): the CLI as a child process
 * against a ledger a real run wrote through the sandbox; keep itself never talks to it.
 */

let sandbox: SandboxHandle;
let p: E2eProject;
const YAML = `${manifestYaml('keepers', 'budget_usd: "20.00"\n')}items:\n  - {id: beach, prompt: first}\n  - {id: city, prompt: second}\n  - {id: forest, prompt: third}\n`;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  p = project('keepers', YAML);
  const first = await runAgainst(sandbox, p);
  expect(first.code, first.stderr).toBe(0);
  // A second take of beach: beach.take1.mp4 and beach.mp4.
  const redo = await runAgainst(sandbox, p, ['--redo', 'beach']);
  expect(redo.code, redo.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  rmSync(p.dir, { recursive: true, force: true });
});

const keep = (...args: string[]) => runCli(['keep', p.manifest, ...args], { cwd: p.dir });
const keepers = () =>
  ledgerRows<{ item_id: string; take: number }>(p, 'SELECT item_id, take FROM keepers ORDER BY item_id');
const sidecar = (name: string) =>
  JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as { kept?: boolean };
const jsonl = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe('mediabatch keep', () => {
  it('keeps an earlier take, sends nothing, and export --kept gives the chosen files by SHA-256', async () => {
    const before = requestLog(sandbox).length;
    const result = await keep('beach:1.1');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('beach: keeps beach, take 1');
    expect(requestLog(sandbox)).toHaveLength(before);
    expect(keepers()).toEqual([{ item_id: 'beach', take: 1 }]);
    expect(sidecar('beach.take1.json').kept).toBe(true);
    expect(sidecar('beach.json').kept).toBe(false);
    expect(sidecar('city.json').kept).toBeUndefined();

    const exported = await runCli(['export', p.manifest, '--kept'], { cwd: p.dir });
    expect(exported.code, exported.stderr).toBe(0);
    const records = jsonl(exported.stdout) as Array<{
      id: string;
      take: number;
      files: Array<{ path: string; sha256: string }>;
    }>;
    // city and forest have one take each: kept by themselves.
    expect(records.map((record) => [record.id, record.take])).toEqual([
      ['beach', 1],
      ['city', 1],
      ['forest', 1],
    ]);
    for (const record of records)
      for (const file of record.files) expect(file.sha256).toBe(sha256File(join(p.dir, file.path)));
    expect(records[0]!.files[0]!.path).toBe('out/keepers/beach.take1.mp4');

    // Every record says whether its files are kept, and lists the earlier takes.
    const all = jsonl((await runCli(['export', p.manifest], { cwd: p.dir })).stdout);
    expect(all[0]).toMatchObject({
      id: 'beach',
      take: 2,
      kept: false,
      earlier_takes: [{ take: 1, kept: true }],
    });
    expect(all[1]).toMatchObject({ id: 'city', take: 1, kept: true, earlier_takes: [] });
  });

  it('changes a keeper by keeping again, and clears it with none', async () => {
    expect((await keep('beach:1')).code).toBe(0);
    expect(keepers()).toEqual([{ item_id: 'beach', take: 2 }]);
    expect(sidecar('beach.json').kept).toBe(true);
    expect(sidecar('beach.take1.json').kept).toBe(false);
    expect((await keep('beach:none')).code).toBe(0);
    expect(keepers()).toEqual([]);
    expect(sidecar('beach.json').kept).toBeUndefined();
    const exported = await runCli(['export', p.manifest, '--kept'], { cwd: p.dir });
    expect(jsonl(exported.stdout).map((record: { id: string }) => record.id)).toEqual(['city', 'forest']);
    expect(exported.stderr).toContain('1 item(s) without a kept take left out');
  });

  it('refuses a bad entry of a list file by file and line, with a suggestion, and writes nothing', async () => {
    expect((await keep('city:1')).code).toBe(0);
    const before = keepers();
    writeFileSync(join(p.dir, 'keep.txt'), '# picks\nbeach:1.1\n\ncty:1  # typo\n');
    const typo = await keep('@keep.txt');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('keep.txt:4: cty:1');
    expect(typo.stderr).toContain("did you mean 'city'");
    expect(typo.stderr).toContain('nothing was kept');
    for (const [entry, words] of [
      ['beach:1.7', 'no saved take 7'],
      ['beach:x', 'not ID:VARIANT[.TAKE]'],
      ['beach:2', 'has no variants'],
      // An empty word is an entry like any other, refused in keep's words, not the option schema's.
      ['', "'': not ID:VARIANT[.TAKE]"],
    ] as const) {
      const bad = await keep('forest:1', entry);
      expect(bad.code, entry).toBe(2);
      expect(bad.stderr).toContain(words);
      expect(bad.stderr).not.toContain('keepTakes()');
    }
    rmSync(join(p.outDir, 'forest.mp4'));
    const missing = await keep('forest:1');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/forest\.mp4 is missing/);
    expect(keepers()).toEqual(before);
  });
});
