import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { SandboxConfigInput, SandboxHandle } from '../../src/sandbox/index.js';

export const BENCH_KEY = 'mg_bench_key_000000000000';
const WORKSPACE = 'ws_bench';

/** One workspace, one key, money enough for everything; the rest comes from `overrides`. */
export function benchSandboxConfig(
  concurrencyLimit: number,
  overrides: Partial<SandboxConfigInput>,
): SandboxConfigInput {
  return {
    seed: 'mediabatch-bench',
    keys: [{ key: BENCH_KEY, id: 1, workspace: WORKSPACE }],
    workspaces: [
      {
        id: WORKSPACE,
        balance_usd: '10000000.00',
        wallet_enabled: true,
        concurrency_limit: concurrencyLimit,
      },
    ],
    ...overrides,
  };
}

export function cliEnv(sandbox: SandboxHandle): Record<string, string> {
  return { MEDIAGEN_API_KEY: sandbox.apiKey };
}

/** A fresh folder under `root` (default: the OS temp dir) holding the given files. */
export function benchDir(label: string, files: Record<string, string> = {}, root = tmpdir()): string {
  const dir = mkdtempSync(join(root, `mb-bench-${label}-`));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Bytes of a file or, for a folder, of every file below it. */
export function sizeOnDisk(path: string): number {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOnDisk(join(path, name)), 0);
}

/** The moment (epoch ms) the last file of the batch was committed as saved in the ledger. */
export function lastSavedAt(ledgerPath: string): number {
  const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT MAX(saved_at) AS at, COUNT(*) AS n FROM files').get() as {
      at: string | null;
      n: number;
    };
    if (row.at === null) throw new Error(`${ledgerPath}: no saved files`);
    return Date.parse(row.at);
  } finally {
    db.close();
  }
}

/** API requests in the sandbox's records, file downloads excluded (they are not API calls). */
export function apiRequests(sandbox: SandboxHandle): Array<{ method: string; path: string; at: number }> {
  return sandbox.records().requests.filter((request) => !request.path.startsWith('/v1/files/'));
}

export function firstPostAt(sandbox: SandboxHandle): number {
  const posts = sandbox.records().requests.filter((request) => request.method === 'POST');
  if (posts.length === 0) throw new Error('no POST reached the sandbox');
  return Math.min(...posts.map((request) => request.at));
}
