import { randomBytes } from 'node:crypto';
import { parseUsdStrict } from '../money.js';
import type { SandboxConfig } from './config.js';
import { MarkerCounter } from './faults.js';
import { refundOf, type StoredJob, viewJob } from './lifecycle.js';
import { clipShape, jobVideo } from './mp4.js';
import { UrlSigner } from './signing.js';

export interface RequestRecord {
  method: string;
  path: string;
  status: number | 'dropped';
  idempotencyKey: string | null;
  jobId: string | null;
  at: number;
  /** The query string as sent (`?status=...&cursor=...`); absent when the request had none. */
  query?: string;
  /** The id of the API key that sent it, once known (tests tell clients apart by it). */
  keyId?: number;
}

type Key = SandboxConfig['keys'][number];
type Workspace = SandboxConfig['workspaces'][number];

export interface Wallet {
  /** Balance before any job: balance(t) = base - charges + refunds of jobs ended unsuccessfully by t. */
  baseMicros: number;
  configuredUsd: string;
}

/** One change of the store's durable state, as a state file records it (see state-file.ts). */
export type StateChange =
  | { kind: 'job'; job: StoredJob }
  | { kind: 'count'; name: string; value: number }
  | { kind: 'marker'; name: string; value: number }
  | { kind: 'wallet'; workspaceId: string; wallet: Wallet };

/** Everything a restarted sandbox needs to know its old jobs, keys, wallets and fault counts. */
export interface StoreState {
  secretHex: string;
  jobs: StoredJob[];
  counters: Array<[string, number]>;
  markers: Array<[string, number]>;
  wallets: Array<[string, Wallet]>;
}

/**
 * Running totals of one workspace's jobs, so that every POST need not scan every job ever made:
 * jobs not final as of `settledAt` stay in `open`; the final ones are folded into the sums.
 */
interface Tally {
  chargedMicros: number;
  refundedMicros: number;
  open: StoredJob[];
  settledAt: number;
}

/**
 * All state of one sandbox: it lives outside the HTTP listener so that the listener can stop and
 * resume (a simulated outage) without losing a job, a charge or an idempotency key.
 */
export class SandboxStore {
  config: SandboxConfig;
  readonly now: () => number;
  signer = new UrlSigner();
  readonly markers = new MarkerCounter((name, value) => this.#changed({ kind: 'marker', name, value }));
  readonly requests: RequestRecord[] = [];
  readonly #jobs: StoredJob[] = [];
  readonly #byId = new Map<string, StoredJob>();
  readonly #idempotency = new Map<string, StoredJob>();
  readonly #counters = new Map<string, number>();
  readonly #created = new Map<string, number>();
  readonly #wallets = new Map<string, Wallet>();
  readonly #videos = new Map<string, Buffer>();
  readonly #tallies = new Map<string, Tally>();
  #seq = 0;
  /** Whether #jobs is also in list order (created_at, then seq): false once a clock went back. */
  #ordered = true;
  /** Told of every durable change before the request that made it is answered. */
  onChange: ((change: StateChange) => void) | null = null;

  constructor(config: SandboxConfig, now: () => number) {
    this.config = config;
    this.now = () => Math.floor(now());
    this.applyConfig(config);
  }

  /** A workspace whose configured balance changed is set to that balance now (a top-up or a drain). */
  applyConfig(config: SandboxConfig): void {
    this.config = config;
    const now = this.now();
    for (const workspace of config.workspaces) {
      const wallet = this.#wallets.get(workspace.id);
      if (wallet?.configuredUsd === workspace.balance_usd) continue;
      const target = parseUsdStrict(workspace.balance_usd);
      const spent = wallet ? wallet.baseMicros - this.balanceMicros(workspace.id, now) : 0;
      const next = { baseMicros: target + spent, configuredUsd: workspace.balance_usd };
      this.#wallets.set(workspace.id, next);
      this.#changed({ kind: 'wallet', workspaceId: workspace.id, wallet: next });
    }
  }

  #changed(change: StateChange): void {
    this.onChange?.(change);
  }

  /** Called once a request's changes are complete and before it is answered (state files write here). */
  onCommit: (() => void) | null = null;

  commit(): void {
    this.onCommit?.();
  }

  /** The durable part of the store (jobs, keys, counts, wallets), for a state file. */
  exportState(): StoreState {
    return {
      secretHex: this.signer.secretHex,
      jobs: [...this.#jobs],
      counters: [...this.#counters],
      markers: this.markers.entries(),
      wallets: [...this.#wallets],
    };
  }

  /**
   * Takes over a saved state on a fresh store: the old jobs keep their ids, keys, timelines and
   * charges. Wallets are then reconciled with the current config, as any config change would be.
   */
  restoreState(state: StoreState): void {
    this.signer = new UrlSigner(Buffer.from(state.secretHex, 'hex'));
    for (const job of state.jobs) this.#add(job);
    for (const [name, value] of state.counters) this.#counters.set(name, value);
    for (const [name, value] of state.markers) this.markers.restore(name, value);
    for (const [id, wallet] of state.wallets) this.#wallets.set(id, { ...wallet });
    this.#tallies.clear();
    this.applyConfig(this.config);
  }

  authenticate(authorization: string | undefined): Key | null {
    const match = /^Bearer ([^\s]+)$/.exec(authorization ?? '');
    if (!match) return null;
    const key = this.config.keys.find((candidate) => candidate.key === match[1]);
    return key && !key.revoked ? key : null;
  }

  workspace(id: string): Workspace {
    const workspace = this.config.workspaces.find((candidate) => candidate.id === id);
    if (!workspace) throw new Error(`unknown workspace ${id}`);
    return workspace;
  }

  balanceMicros(workspaceId: string, now: number): number {
    let balance = this.#wallets.get(workspaceId)?.baseMicros ?? 0;
    const tally = this.#settle(workspaceId, now);
    if (tally) return balance - tally.chargedMicros + tally.refundedMicros;
    for (const job of this.#jobs) {
      if (job.workspaceId !== workspaceId) continue;
      balance += viewJob(job, now).refundedMicros - job.amountMicros;
    }
    return balance;
  }

  activeJobs(workspaceId: string, now: number): number {
    const tally = this.#settle(workspaceId, now);
    if (tally) return tally.open.length;
    let active = 0;
    for (const job of this.#jobs) {
      if (job.workspaceId === workspaceId && now < job.finalAt) active += 1;
    }
    return active;
  }

  /**
   * The workspace's totals as of `now`, or null when the clock went back behind the last
   * settlement (an injected clock may): the callers then scan every job, as without totals.
   */
  #settle(workspaceId: string, now: number): Tally | null {
    let tally = this.#tallies.get(workspaceId);
    if (!tally) {
      const open = this.#jobs.filter((job) => job.workspaceId === workspaceId);
      const chargedMicros = open.reduce((sum, job) => sum + job.amountMicros, 0);
      tally = { chargedMicros, refundedMicros: 0, open, settledAt: Number.NEGATIVE_INFINITY };
      this.#tallies.set(workspaceId, tally);
    }
    if (now < tally.settledAt) return null;
    if (tally.open.some((job) => job.finalAt <= now)) {
      const open: StoredJob[] = [];
      for (const job of tally.open) {
        if (now < job.finalAt) open.push(job);
        else tally.refundedMicros += refundOf(job);
      }
      tally.open = open;
    }
    tally.settledAt = now;
    return tally;
  }

  jobs(): readonly StoredJob[] {
    return this.#jobs;
  }

  /**
   * The jobs in (created_at, seq) order, so a list page can be found by bisection instead of a
   * pass over every job ever made; null once a clock went back (then only a full pass is right).
   */
  jobsInListOrder(): readonly StoredJob[] | null {
    return this.#ordered ? this.#jobs : null;
  }

  job(id: string): StoredJob | undefined {
    return this.#byId.get(id);
  }

  /** Counts one more event in `scope` (POSTs of a key, downloads of a job) and returns its number, from 1. */
  count(...scope: Array<string | number>): number {
    const name = scope.join('\u0000');
    const count = (this.#counters.get(name) ?? 0) + 1;
    this.#counters.set(name, count);
    this.#changed({ kind: 'count', name, value: count });
    return count;
  }

  /** The job an Idempotency-Key still maps to, while the service remembers the key. */
  remembered(workspaceId: string, key: string, now: number): StoredJob | null {
    const job = this.#idempotency.get(`${workspaceId}\u0000${key}`);
    if (!job) return null;
    return now - job.createdAt < this.config.idempotency_ttl_seconds * 1000 ? job : null;
  }

  /** Number of jobs created so far with this (workspace, key), so a forgotten key draws afresh. */
  creations(workspaceId: string, key: string): number {
    return this.#created.get(`${workspaceId}\u0000${key}`) ?? 0;
  }

  insert(fields: Omit<StoredJob, 'seq' | 'id'>): StoredJob {
    const job: StoredJob = { ...fields, seq: this.#seq + 1, id: `job_${randomBytes(12).toString('hex')}` };
    this.#add(job);
    this.#changed({ kind: 'job', job });
    return job;
  }

  #add(job: StoredJob): void {
    this.#seq = Math.max(this.#seq, job.seq);
    const scope = `${job.workspaceId}\u0000${job.idempotencyKey}`;
    const last = this.#jobs.at(-1);
    if (last && (job.createdAt < last.createdAt || (job.createdAt === last.createdAt && job.seq < last.seq)))
      this.#ordered = false;
    this.#jobs.push(job);
    this.#byId.set(job.id, job);
    this.#idempotency.set(scope, job);
    this.#created.set(scope, (this.#created.get(scope) ?? 0) + 1);
    const tally = this.#tallies.get(job.workspaceId);
    if (tally) {
      tally.chargedMicros += job.amountMicros;
      tally.open.push(job);
    }
  }

  video(job: StoredJob): Buffer {
    // A job of a state file from before clips had shapes keeps the small clip it was served.
    const { orientation, seconds } = clipShape(job.input, this.config.input);
    const shape = job.clip ?? { orientation, seconds };
    // Padded outputs are made again on each download: a thousand of them would not fit in memory.
    if (this.config.output_bytes !== undefined) return jobVideo(job.id, shape, this.config.output_bytes);
    let bytes = this.#videos.get(job.id);
    if (!bytes) {
      bytes = jobVideo(job.id, shape);
      this.#videos.set(job.id, bytes);
    }
    return bytes;
  }
}
