import { execFileSync } from 'node:child_process';
import { mkdirSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { allPosts, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';
import { expectAllDoneOnce, expectNoStackTrace, itemsYaml, itWithMount } from './support.js';

/**
 * Before a batch has saved a file, the size of an output is a 16 MiB guess. On a real small disk
 * (a tmpfs, as in disk-refuses.test.ts) a guess that does not fit must not block the run: it goes
 * one job at a time until a saved file tells the real size. A learnt size that does not fit still
 * refuses before anything is spent.
 */
let sandbox: SandboxHandle | undefined;
const mounts: string[] = [];
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
// Before tempDir's own afterAll removes the folders (hooks run last-registered first).
afterAll(() => {
  for (const dir of mounts.splice(0).reverse()) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
});

const itMounts = itWithMount();

function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  mounts.push(dir);
}

/** The log events of `--progress ndjson` on stderr, as level and message. */
const ndjsonLogs = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { event: string; level?: string; message?: string })
    .filter((line) => line.event === 'log')
    .map(({ level, message }) => ({ level, message }));

const freeBytes = (dir: string) => {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
};

describe('a guessed output size never blocks', () => {
  itMounts(
    '8 MiB free, five outputs of 20 KB: warns, one job in flight until a file is saved, then all slots; exit 0',
    async () => {
      const s = await startTestSandbox({ output_bytes: 20_000, running_seconds: { min: 0.3, max: 0.3 } });
      sandbox = s;
      const name = 'small-outputs';
      const ids = ['a', 'b', 'c', 'd', 'e'];
      const p = project(name, `${manifestYaml(name, 'concurrency: 3\n')}${itemsYaml(ids)}`);
      mountTmpfs(p.outDir, '8m');
      const result = await runAgainst(s, p, ['--json', '--progress', 'ndjson']);
      expectNoStackTrace(result);
      const logs = ndjsonLogs(result.stderr);
      expect(logs[0]).toEqual({
        level: 'warn',
        message: `the output folder ${p.outDir} has 8.0 MiB free, and the next 3 output(s) are expected to take about 48.0 MiB (16.0 MiB each, a guess until a file is saved); submitting one job at a time until this batch has saved a file, then going on with the size it learnt`,
      });
      expect(logs).toContainEqual({
        level: 'info',
        message: `the files saved so far take 20 KiB per output, and the next 3 fit in ${p.outDir}: submitting up to 3 at a time`,
      });
      expectAllDoneOnce(s, p, name, result, ids);

      // The requests: one POST, its file saved, and only then the others, several at once.
      const requests = s.records().requests;
      const isPost = (request: (typeof requests)[number]) => request.method === 'POST';
      const fileGets = requests
        .map((request, index) => ({ request, index }))
        .filter(({ request }) => request.method === 'GET' && request.path.startsWith('/v1/files/'));
      const firstFile = fileGets[0]!.index;
      expect(requests.slice(0, firstFile).filter(isPost)).toHaveLength(1);
      // The second submission came after the first file was written in its place.
      const secondPost = requests.slice(firstFile).find(isPost)!;
      const written = ids.map((id) => statSync(join(p.outDir, `${id}.mp4`)).mtimeMs);
      expect(Math.min(...written)).toBeLessThanOrEqual(secondPost.at);
      const secondFile = fileGets.find(({ request }) => request.path !== fileGets[0]!.request.path)!.index;
      expect(requests.slice(firstFile, secondFile).filter(isPost).length).toBeGreaterThan(1);
      expect(allPosts(s)).toHaveLength(ids.length);
    },
    60_000,
  );

  itMounts(
    'a learnt size that does not fit the next wave stops submissions as a full disk does: exit 3',
    async () => {
      const s = await startTestSandbox({ output_bytes: 3 * 1024 * 1024 });
      sandbox = s;
      const name = 'learnt-mid-run';
      const ids = ['a', 'b', 'c', 'd', 'e'];
      const p = project(name, `${manifestYaml(name, 'concurrency: 3\n')}${itemsYaml(ids)}`);
      mountTmpfs(p.outDir, '8m');
      const result = await runAgainst(s, p, ['--json', '--progress', 'ndjson']);
      expectNoStackTrace(result);
      expect(result.code, result.stderr).toBe(3);
      // The first file (3 MiB) leaves 5 MiB: three more would take 9 MiB.
      expect(ndjsonLogs(result.stderr)).toContainEqual({
        level: 'error',
        message: `stopping: the output folder ${p.outDir} has 5.0 MiB free, and the next 3 output(s) are expected to take about 9.0 MiB (3.0 MiB each, this batch's mean so far). No new submissions; jobs in flight are still watched and saved while there is room. Free some space, then re-run (nothing is paid again)`,
      });
      expect(allPosts(s)).toHaveLength(1);
      const report = JSON.parse(result.stdout) as { items: Array<{ id: string; state: string }> };
      expect(report.items.map((item) => item.state)).toEqual([
        'done',
        'pending',
        'pending',
        'pending',
        'pending',
      ]);
    },
    60_000,
  );

  itMounts(
    'a learnt size that does not fit refuses before any POST: exit 2',
    async () => {
      const s = await startTestSandbox({ output_bytes: 1024 * 1024 });
      sandbox = s;
      const name = 'learnt-large';
      const head = manifestYaml(name, 'concurrency: 2\n');
      const p = project(name, `${head}${itemsYaml(['a'])}`);
      mountTmpfs(p.outDir, '8m');
      // The first run learns the size: one output of 1 MiB, saved one job at a time.
      expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a']);
      const posts = allPosts(s).length;

      // Five more items, two slots: 2 MiB expected, with 1.5 MiB left free.
      writeFileSync(p.manifest, `${head}${itemsYaml(['a', 'b', 'c', 'd', 'e', 'f'])}`);
      writeFileSync(join(p.outDir, 'filler.bin'), Buffer.alloc(freeBytes(p.outDir) - 1536 * 1024));
      const second = await runAgainst(s, p);
      expectNoStackTrace(second);
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toContain(
        `the output folder ${p.outDir} has 1.5 MiB free, and the next 2 output(s) are expected to take about 2.0 MiB (1.0 MiB each, this batch's mean so far); nothing was submitted`,
      );
      expect(allPosts(s)).toHaveLength(posts);
    },
    60_000,
  );
});
