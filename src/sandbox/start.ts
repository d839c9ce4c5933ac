import { UserError } from '../errors.js';
import { isPlainObject } from '../plain-object.js';
import type { JobStatus } from '../service-client/schemas.js';
import { parseSandboxConfig, type SandboxConfigInput } from './config.js';
import { type StoredJob, viewJob } from './lifecycle.js';
import { sha256Hex } from './mp4.js';
import { type OnSandboxProblem, SandboxServer } from './server.js';
import { attachStateFile } from './state-file.js';
import { type RequestRecord, SandboxStore } from './store.js';

export interface SandboxRecords {
  jobs: Array<{
    id: string;
    workspaceId: string;
    apiKeyId: number;
    idempotencyKey: string;
    status: JobStatus;
    amountMicros: number;
    refundedMicros: number;
    errorCode: string | null;
    input: Record<string, unknown>;
    metadata: Record<string, unknown>;
    createdAt: string;
    completedAt: string | null;
    expiresAt: string | null;
    files: Array<{ sha256: string; bytes: number; contentType: string }>;
  }>;
  /** Every HTTP request including file downloads; `path` has no query string. */
  requests: RequestRecord[];
}

export interface SandboxHandle {
  /** 'http://127.0.0.1:<port>/v1' */
  baseUrl: string;
  /** The first configured key. */
  apiKey: string;
  port: number;
  /** Snapshot with every job's lifecycle evaluated at "now". */
  records(): SandboxRecords;
  account(workspaceId?: string): { balanceMicros: number; enabled: boolean; active: number; limit: number };
  /** Deep-merges the patch into the configuration (arrays replaced); applies to new jobs and requests. */
  update(patch: Partial<SandboxConfigInput>): void;
  /** Closes the listener and severs open connections, keeping all state. */
  stopListening(): Promise<void>;
  /** Listens again on the same port with the same state. */
  resumeListening(): Promise<void>;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Injected clock in epoch milliseconds; job lifecycles are computed from it. */
  now?: () => number;
  /**
   * File that keeps jobs, idempotency keys, wallets and fault counts across restarts (created when
   * missing). Without it the sandbox forgets everything when it stops.
   */
  statePath?: string;
  /**
   * Told what goes wrong inside the sandbox (a bug answered as a 500, a state file it cannot
   * write); the sandbox writes nothing to the console. Default: nothing is told.
   */
  onProblem?: OnSandboxProblem;
}

function deepMerge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

/** A port in use, or not ours to take, is the caller's to change (a UserError); anything else is a bug. */
function listenRefused(error: unknown, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return error;
  const message = `cannot listen on port ${port} (${code}); choose another with \`port\``;
  return new UserError(message, 'invalid_usage', { option: 'port', port, code });
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function startSandbox(
  config: SandboxConfigInput = {},
  options: SandboxOptions = {},
): Promise<SandboxHandle> {
  let input: Record<string, unknown> = { ...config };
  const store = new SandboxStore(parseSandboxConfig(input), options.now ?? Date.now);
  const stateFile = options.statePath === undefined ? null : attachStateFile(store, options.statePath);
  const server = new SandboxServer(
    store,
    options.host ?? '127.0.0.1',
    options.onProblem ?? (() => undefined),
  );
  try {
    await server.listen(options.port ?? 0);
  } catch (error) {
    stateFile?.close();
    throw listenRefused(error, options.port ?? 0);
  }
  const port = server.port;
  const firstKey = store.config.keys[0];
  if (!firstKey) throw new Error('sandbox config has no key');

  return {
    baseUrl: `${server.origin}/v1`,
    apiKey: firstKey.key,
    port,
    records: () => snapshotRecords(store),
    account: (workspaceId = firstKey.workspace) => accountOf(store, workspaceId),
    update(patch) {
      const next = deepMerge(input, patch as Record<string, unknown>);
      store.applyConfig(parseSandboxConfig(next));
      store.commit();
      input = next;
    },
    stopListening: () => server.stop(),
    resumeListening: () => server.listen(port),
    close: async () => {
      await server.stop();
      stateFile?.close();
    },
  };
}

function snapshotRecords(store: SandboxStore): SandboxRecords {
  const now = store.now();
  return {
    jobs: store.jobs().map((job) => jobRecord(store, job, now)),
    requests: store.requests.map((request) => ({ ...request })),
  };
}

/** A job as it stands at `now`, copied so that a test cannot change the sandbox through it. */
function jobRecord(store: SandboxStore, job: StoredJob, now: number): SandboxRecords['jobs'][number] {
  const view = viewJob(job, now);
  const bytes = job.outcome.status === 'succeeded' && view.final ? store.video(job) : null;
  return {
    id: job.id,
    workspaceId: job.workspaceId,
    apiKeyId: job.apiKeyId,
    idempotencyKey: job.idempotencyKey,
    status: view.status,
    amountMicros: job.amountMicros,
    refundedMicros: view.refundedMicros,
    errorCode: view.errorCode,
    input: structuredClone(job.input),
    metadata: structuredClone(job.metadata),
    createdAt: new Date(job.createdAt).toISOString(),
    completedAt: iso(view.completedAt),
    expiresAt: iso(view.expiresAt),
    files: bytes ? [{ sha256: sha256Hex(bytes), bytes: bytes.length, contentType: 'video/mp4' }] : [],
  };
}

function accountOf(store: SandboxStore, workspaceId: string): ReturnType<SandboxHandle['account']> {
  const now = store.now();
  const workspace = store.workspace(workspaceId);
  return {
    balanceMicros: store.balanceMicros(workspaceId, now),
    enabled: workspace.wallet_enabled,
    active: store.activeJobs(workspaceId, now),
    limit: workspace.concurrency_limit,
  };
}
