import { existsSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
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

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string }
).version;

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

function tempProject(name: string, yaml: string): E2eProject {
  const p = project(name, yaml);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

interface Sidecar {
  request: Record<string, unknown>;
  file: { sha256: string };
}
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Sidecar;

describe('provenance sidecars', () => {
  it('writes <name>.json beside each output with the exact request, job, cost, times and hash; restores a deleted one', async () => {
    sandbox = await startTestSandbox();
    const p = tempProject(
      'prov',
      `${manifestYaml('prov', 'model: acme-video-2\nmetadata: {campaign: spring}\n')}items:\n  - {id: a, prompt: "Waves, at night"}\n  - {id: b, prompt: Dunes}\n`,
    );
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(0);
    expect(filesBelow(p.outDir)).toEqual(['a.json', 'a.mp4', 'b.json', 'b.mp4']);

    for (const id of ['a', 'b']) {
      const sidecar = readJson(join(p.outDir, `${id}.json`));
      const [job] = jobsOfItem(sandbox, 'prov', id);
      const [attempt] = ledgerRows<{ request_body: string; created_at: string }>(
        p,
        'SELECT request_body, created_at FROM attempts WHERE item_id = ?',
        id,
      );
      expect(sidecar).toEqual({
        mediabatch_version: VERSION,
        manifest: 'prov',
        item: id,
        take: 1,
        prompt: id === 'a' ? 'Waves, at night' : 'Dunes',
        request: JSON.parse(attempt!.request_body),
        job_id: job!.id,
        cost_usd: (job!.amountMicros / 1e6).toFixed(6),
        refunded_usd: '0.000000',
        created_at: attempt!.created_at,
        completed_at: job!.completedAt,
        // The take's check, written with the sidecar once (docs/checks.md).
        check: { outcome: 'passed', reason: null },
        file: { bytes: job!.files[0]!.bytes, sha256: sha256File(join(p.outDir, `${id}.mp4`)) },
      });
      // The request is what the service received.
      expect(sidecar.request).toMatchObject({
        model: 'acme-video-2',
        input: job!.input,
        metadata: job!.metadata,
      });
      expect(sidecar.file.sha256).toBe(job!.files[0]!.sha256);
    }

    const before = readFileSync(join(p.outDir, 'a.json'), 'utf8');
    unlinkSync(join(p.outDir, 'a.json'));
    const posts = allPosts(sandbox).length;
    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(p.outDir, 'a.json'), 'utf8')).toBe(before);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(again.stdout).toContain('a: restored 1 provenance sidecar(s)');
  });

  it('output.sidecars: false writes none', async () => {
    sandbox = await startTestSandbox();
    const p = tempProject(
      'quiet',
      `${manifestYaml('quiet', 'output: {sidecars: false}\n')}items:\n  - {id: a, prompt: x}\n`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(filesBelow(p.outDir)).toEqual(['a.mp4']);
  });
});

describe('output.name', () => {
  it('places files and sidecars in folders by the template', async () => {
    sandbox = await startTestSandbox();
    const p = tempProject(
      'named',
      `${manifestYaml('named', 'output: {name: "{orientation}/{matrix.style}-{id}"}\nmatrix:\n  style: [noir]\n')}items:\n  - {id: a, prompt: x, input: {orientation: "16:9"}}\n  - {id: b, prompt: y, input: {orientation: "9:16"}}\n`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(filesBelow(p.outDir)).toEqual([
      '16-9/noir-a.noir.json',
      '16-9/noir-a.noir.mp4',
      '9-16/noir-b.noir.json',
      '9-16/noir-b.noir.mp4',
    ]);
  });

  it('rejects two items mapping to one path with file:line:column, submitting nothing', async () => {
    sandbox = await startTestSandbox();
    const p = tempProject(
      'clash',
      `${manifestYaml('clash', 'output: {name: "{definition}"}\n')}items:\n  - {id: a, prompt: x}\n  - {id: b, prompt: y}\n`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${p.manifest}:7:5: items[1]: output.name gives this item the file name '480p', already given to items[0] at batch.yaml:6`,
    );
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(existsSync(p.outDir)).toBe(false);
  });
});
