import { spawn } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { BIG_ITEMS, type BigLedger, type BigSample, bigCommand, buildBigLedger } from './big-ledger-bench.js';
import { removeDir } from './fixtures.js';
import { ROOT } from './spawn-cli.js';
import { type Row, summarize } from './stats.js';

/**
 * Scenario 14: the gallery page a run refreshes as it ends, for the all-done 100,000-item batch of
 * scenario 4 (`npm run bench -- refresh`). Each refresh runs in a child of its own
 * (gallery-refresh-child.mjs), timed from after the manifest is loaded to the page written, as
 * a run makes it: wall and CPU time, and the child's peak RSS before the refresh (Node, modules,
 * the 100,000-item manifest) and after it. The page reads the ledger's itemHistories, a page
 * of items at a time without the requests' bodies (src/batch/gallery/gallery-source.ts).
 *
 * The goal (issue): under 5 s, and no more memory than the run itself. A run ends by reading its
 * status (run-outcome.ts: the per-item read of `mediabatch status`, whose peak RSS is measured
 * here on the same ledger, its outputs on disk), so a refresh whose peak stays under status's adds
 * nothing to the run's.
 */

export interface RefreshSample {
  refreshMs: number;
  refreshCpuMs: number;
  rssBeforeMb: number;
  peakRssMb: number;
  items: number;
  pageBytes: number;
}

export interface RefreshRuns {
  refresh: RefreshSample[];
  status: BigSample[];
  ledgerBytes: number;
}

const CHILD = join(import.meta.dirname, 'gallery-refresh-child.mjs');

/** One refresh in a child of its own, over the built code (dist/). */
function refreshOnce(big: BigLedger) {
  return new Promise<RefreshSample>((resolve, reject) => {
    const args = ['--expose-gc', CHILD, join(ROOT, 'dist'), big.manifestFile, big.ledgerPath];
    const child = spawn(process.execPath, args, { cwd: big.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`gallery refresh: exit ${code}\n${err.slice(0, 4000)}`));
      const sample = JSON.parse(out) as RefreshSample;
      if (sample.items !== BIG_ITEMS) return reject(new Error(`a page of ${sample.items} items`));
      resolve(sample);
    });
  });
}

export async function refreshRuns(runs: number, log: (line: string) => void): Promise<RefreshRuns> {
  log('refresh: building the 100,000-item all-done ledger of scenario 4');
  const big = await buildBigLedger();
  writeOutputs(big.ledgerPath);
  const result: RefreshRuns = { refresh: [], status: [], ledgerBytes: big.ledgerBytes };
  try {
    for (let i = 1; i <= runs; i += 1) {
      log(`refresh: run ${i}/${runs}: the page, and status`);
      result.refresh.push(await refreshOnce(big));
      result.status.push(await bigCommand(big, 'status'));
    }
    return result;
  } finally {
    removeDir(big.dir);
  }
}

/**
 * Every output the ledger records, as a file of its recorded size, sparse (no byte written): the
 * fixture writes none, and `status` would then report 100,000 missing files, which is not what
 * a run's closing status holds.
 */
function writeOutputs(ledgerPath: string): void {
  const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
  try {
    const files = db.prepare('SELECT path, bytes FROM files').all() as Array<{ path: string; bytes: number }>;
    mkdirSync(dirname(files[0]!.path), { recursive: true });
    for (const { path, bytes } of files) {
      const fd = openSync(path, 'w');
      ftruncateSync(fd, bytes);
      closeSync(fd);
    }
  } finally {
    db.close();
  }
}

const SCENARIO = '14 gallery refresh 100k';

export function refreshRows({ refresh, status }: RefreshRuns): Row[] {
  const row = (figure: string, unit: string, digits: number, values: number[], target?: Row['target']) => ({
    scenario: SCENARIO,
    figure,
    unit,
    digits,
    summary: summarize(values),
    ...(target ? { target } : {}),
  });
  const statusPeak = summarize(status.map((x) => x.peakRssMb)).median;
  const figures = (label: string, samples: RefreshSample[]): Row[] => [
    row(
      `${label}: wall time`,
      's',
      2,
      samples.map((x) => x.refreshMs / 1000),
      { op: '<', value: 5 },
    ),
    row(
      `${label}: CPU time, user + system`,
      's',
      2,
      samples.map((x) => x.refreshCpuMs / 1000),
    ),
    row(
      `${label}: peak RSS before it (Node, manifest)`,
      'MB',
      1,
      samples.map((x) => x.rssBeforeMb),
    ),
    row(
      `${label}: peak RSS after it`,
      'MB',
      1,
      samples.map((x) => x.peakRssMb),
      { op: '<=', value: Math.round(statusPeak * 10) / 10 },
    ),
  ];
  return [
    ...figures('refresh', refresh),
    row(
      "reference: the run's closing status (mediabatch status): peak RSS",
      'MB',
      1,
      status.map((x) => x.peakRssMb),
    ),
    row(
      'the page',
      'MB',
      1,
      refresh.map((x) => x.pageBytes / 1024 / 1024),
    ),
  ];
}
