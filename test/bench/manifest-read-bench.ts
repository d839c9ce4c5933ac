/**
 * `manifest-read`: a manifest of 100,000 and of 1,000,000 JSON Lines items read whole
 * (`loadManifest`, today's every command) beside streamed (`manifestItems`, issue 53 part 1), each
 * in a child process of its own, one after the other in one run: wall time, CPU and peak RSS.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { single } from './bench-rows.js';
import { type ChildStats, cpuMs, rssMb } from './spawn-cli.js';
import type { Row } from './stats.js';

const WRAPPER = join(import.meta.dirname, 'child-stats.mjs');
const CHILD = join(import.meta.dirname, 'manifest-read-child.mjs');

export interface ManifestReadSample {
  items: number;
  mode: 'whole' | 'streamed';
  wallMs: number;
  stats: ChildStats;
}

function writeBatch(dir: string, items: number): string {
  const lines: string[] = [];
  for (let n = 0; n < items; n++)
    lines.push(
      JSON.stringify({ id: `clip-${n}`, prompt: `a short clip number ${n}`, input: { seconds: 6 } }),
    );
  writeFileSync(join(dir, `items-${items}.jsonl`), `${lines.join('\n')}\n`);
  const manifest = join(dir, `batch-${items}.yaml`);
  writeFileSync(
    manifest,
    `version: 1\nname: big\ninput: {definition: 720p}\nitems_from: items-${items}.jsonl\n`,
  );
  return manifest;
}

async function readOnce(
  manifest: string,
  items: number,
  mode: 'whole' | 'streamed',
): Promise<ManifestReadSample> {
  const statsDir = mkdtempSync(join(tmpdir(), 'mb-bench-stats-'));
  const statsFile = join(statsDir, 'stats.json');
  const started = performance.now();
  const child = spawn(process.execPath, [WRAPPER, CHILD, mode, manifest], {
    env: { PATH: process.env.PATH ?? '', MEDIABATCH_BENCH_STATS: statsFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((done) => child.on('close', done));
  const wallMs = performance.now() - started;
  const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as ChildStats;
  rmSync(statsDir, { recursive: true, force: true });
  if (out.trim() !== String(items))
    throw new Error(`manifest-read ${mode} ${items}: read ${out.trim()} items`);
  return { items, mode, wallMs, stats };
}

export async function manifestReadRuns(log: (line: string) => void): Promise<ManifestReadSample[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mb-bench-manifest-'));
  const samples: ManifestReadSample[] = [];
  try {
    for (const items of [100_000, 1_000_000]) {
      const manifest = writeBatch(dir, items);
      for (const mode of ['whole', 'streamed'] as const) {
        log(`manifest-read: ${items} items, ${mode}`);
        samples.push(await readOnce(manifest, items, mode));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return samples;
}

export function manifestReadRows(samples: readonly ManifestReadSample[]): Row[] {
  return samples.flatMap(({ items, mode, wallMs, stats }) => {
    const scenario = `manifest ${items / 1000}k ${mode}`;
    return [
      single(scenario, 'wall time (child start to exit)', 's', 2, wallMs / 1000),
      single(scenario, 'CPU time, user + system', 's', 2, cpuMs(stats) / 1000),
      single(scenario, 'peak RSS', 'MB', 1, rssMb(stats)),
      single(scenario, 'time per item', 'µs', 2, (wallMs * 1000) / items),
    ];
  });
}
