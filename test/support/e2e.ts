import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type SandboxConfigInput, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type CliResult, runCli, spawnCli, tempProject } from './cli.js';

/** Sandbox settings that make a whole batch finish in about a second. */
export function fastConfig(overrides: Partial<SandboxConfigInput> = {}): SandboxConfigInput {
  return {
    seed: 7,
    keys: [{ key: 'mg_test_key_000000000000', id: 1, workspace: 'ws_test' }],
    workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 3 }],
    queued_seconds: 0.05,
    running_seconds: { min: 0.1, max: 0.3 },
    retry_after_seconds: 0.1,
    ...overrides,
  };
}

export async function startTestSandbox(overrides: Partial<SandboxConfigInput> = {}): Promise<SandboxHandle> {
  return startSandbox(fastConfig(overrides), { port: 0 });
}

/** A manifest head with the usual fields; append `items:` yourself. */
export function manifestYaml(name: string, extra = ''): string {
  return `version: 1\nname: ${name}\ninput: {seconds: 2, definition: 480p}\n${extra}`;
}

export interface E2eProject {
  dir: string;
  manifest: string;
  ledger: string;
  outDir: string;
}

export function project(name: string, yaml: string, files: Record<string, string> = {}): E2eProject {
  const dir = tempProject({ 'batch.yaml': yaml, ...files });
  return {
    dir,
    manifest: join(dir, 'batch.yaml'),
    ledger: join(dir, '.mediabatch', `${name}.sqlite`),
    outDir: join(dir, 'out', name),
  };
}

export function cliEnv(sandbox: SandboxHandle, key = sandbox.apiKey): Record<string, string> {
  return { MEDIAGEN_API_KEY: key, MEDIAGEN_BASE_URL: sandbox.baseUrl };
}

/** `mediabatch run` against the sandbox with a fast poll interval. */
export function runAgainst(
  sandbox: SandboxHandle,
  p: E2eProject,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCli(['run', p.manifest, '--poll-interval', '0.1', ...extraArgs], {
    cwd: p.dir,
    env: { ...cliEnv(sandbox), ...env },
  });
}

export function spawnRun(sandbox: SandboxHandle, p: E2eProject, extraArgs: string[] = []) {
  return spawnCli(['run', p.manifest, '--poll-interval', '0.1', ...extraArgs], {
    cwd: p.dir,
    env: cliEnv(sandbox),
  });
}

/** Reads the ledger with plain SQL, independent of the Ledger class under test. */
export function ledgerRows<T>(p: E2eProject, sql: string, ...params: unknown[]): T[] {
  const db = new Database(p.ledger, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Net charge per item from the sandbox's own records (amount - refunded), by mediabatch.item. */
export function sandboxNetByItem(sandbox: SandboxHandle, manifestName: string): Map<string, number> {
  const net = new Map<string, number>();
  for (const job of sandbox.records().jobs) {
    if (job.metadata['mediabatch.manifest'] !== manifestName) continue;
    const item = String(job.metadata['mediabatch.item']);
    net.set(item, (net.get(item) ?? 0) + job.amountMicros - job.refundedMicros);
  }
  return net;
}
