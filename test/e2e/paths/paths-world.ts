import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import type { KillAfter } from './path-steps.js';

/**
 * The real side of the model: one project folder (manifest, ledger, output folder), a sandbox on
 * loopback whose clock the test moves (and the CLI's with it, test/support/shifted-clock.mjs), the
 * built CLI as a child process, and what the test knows: the manifest it wrote, the jobs the
 * sandbox made and the payments each request is allowed.
 */
export const NAME = 'paths';
export const PROMPTS = [
  'a red boat',
  'a blue car',
  'a green tree',
  'a grey cat',
  'a white kite',
  'a black dog',
];
export const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];
const INPUT = { seconds: 2, definition: '480p' };
const CLI = resolve(import.meta.dirname, '../../../dist/cli/main.js');
const CLOCK = resolve(import.meta.dirname, '../../support/shifted-clock.mjs');
const COMMAND_TIMEOUT_MS = 60_000;
export const RETENTION_SECONDS = 24 * 3600;

export interface Item {
  id: string;
  prompt: number;
}

export interface CliRun {
  args: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  killed: boolean;
}

export interface JobFacts {
  id: string;
  item: string;
  request: string;
  sha: string | null;
}

/** A broken promise: which invariant, and what shows it. */
export class PathViolation extends Error {
  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}

/** The request a job answers: its input (prompt included; no model is ever set) and its variant. */
export function requestKey(input: Record<string, unknown>, ledgerItem: string): string {
  const variant = /\.v([0-9]+)$/.exec(ledgerItem)?.[1] ?? '1';
  const sorted = Object.fromEntries(Object.entries(input).sort(([a], [b]) => a.localeCompare(b)));
  return `${JSON.stringify(sorted)}#v${variant}`;
}

export class PathsWorld {
  items: Item[] = [
    { id: 'a', prompt: 0 },
    { id: 'b', prompt: 1 },
  ];
  variants = 1;
  /** Prompt edits not undone yet, the latest last. */
  edits: Array<{ id: string; before: number }> = [];
  /** Items removed and not restored yet, the latest last. */
  removed: Item[] = [];
  offsetMs = 0;
  /** What status and export were last checked against (path-checks.ts, checkNames). */
  checkedState: string | null = null;
  /** The step's run exited 0 (its re-run follows). */
  cleanRun = false;
  /** Contents the test itself wrote (altered files): no promise covers them. */
  readonly testMade = new Set<string>();
  readonly jobs = new Map<string, JobFacts>();
  readonly jobBySha = new Map<string, JobFacts>();
  /** Payments a request may have beyond its first (redo, a result lost past retention). */
  readonly extraPays = new Map<string, number>();
  readonly transcript: string[] = [];
  /**
   * Invariants (by number) this world only logs: for exploring what else breaks past a known
   * failure. The bounded set and the regression tests leave it empty.
   */
  readonly ignored = new Set<string>();
  /** Broken promises that were only logged because their invariant is ignored. */
  readonly ignoredSeen: string[] = [];

  private constructor(
    readonly sandbox: SandboxHandle,
    readonly dir: string,
  ) {}

  static async start(
    dir: string,
    { ignored = new Set() }: { ignored?: ReadonlySet<string> } = {},
  ): Promise<PathsWorld> {
    let world: PathsWorld | null = null;
    const sandbox = await startSandbox(
      {
        seed: 7,
        keys: [{ key: 'mg_test_key_000000000000', id: 1, workspace: 'ws_test' }],
        workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 3 }],
        queued_seconds: 0.05,
        running_seconds: { min: 0.1, max: 0.3 },
        retry_after_seconds: 0.1,
        // A day: one step of time (path-apply.ts) passes it, and import's 48 hours still see the
        // jobs; two steps pass both.
        retention_seconds: RETENTION_SECONDS,
      },
      { port: 0, now: () => Date.now() + (world?.offsetMs ?? 0) },
    );
    world = new PathsWorld(sandbox, dir);
    for (const invariant of ignored) world.ignored.add(invariant);
    world.writeManifest();
    return world;
  }

  get manifest(): string {
    return join(this.dir, 'batch.yaml');
  }
  get ledger(): string {
    return join(this.dir, '.mediabatch', `${NAME}.sqlite`);
  }
  get outDir(): string {
    return join(this.dir, 'out', NAME);
  }

  writeManifest(): void {
    const items = this.items.map((item) => `  - {id: ${item.id}, prompt: "${PROMPTS[item.prompt]}"}\n`);
    writeFileSync(
      this.manifest,
      `version: 1\nname: ${NAME}\ninput: {seconds: ${INPUT.seconds}, definition: ${INPUT.definition}}\n` +
        `max_cost_usd: "0.50"\nvariants: ${this.variants}\nitems:\n${items.join('')}`,
    );
  }

  /** The ledger items the manifest asks for now (variants included), each with its request. */
  ledgerItems(): Array<{ id: string; of: string; request: string }> {
    return this.items.flatMap((item) =>
      Array.from({ length: this.variants }, (_, n) => {
        const id = n === 0 ? item.id : `${item.id}.v${n + 1}`;
        return { id, of: item.id, request: requestKey({ ...INPUT, prompt: PROMPTS[item.prompt] }, id) };
      }),
    );
  }

  /** The video files of the output folder, by name, sorted. */
  videos(): string[] {
    if (!existsSync(this.outDir)) return [];
    return readdirSync(this.outDir)
      .filter((name) => name.endsWith('.mp4'))
      .sort();
  }

  /** Learns the sandbox's jobs (request, item, output SHA-256) as they appear. */
  refreshJobs(): void {
    for (const job of this.sandbox.records().jobs) {
      const known = this.jobs.get(job.id);
      const sha = job.files[0]?.sha256 ?? null;
      if (known && known.sha !== null) continue;
      const item = String(job.metadata['mediabatch.item']);
      const facts: JobFacts = { id: job.id, item, request: requestKey(job.input, item), sha };
      this.jobs.set(job.id, facts);
      if (sha !== null) this.jobBySha.set(sha, facts);
    }
  }

  /** A broken promise: thrown, unless its invariant is ignored (then logged). */
  violated(invariant: string, detail: string): void {
    if (!this.ignored.has(invariant.split(' ')[0]!)) throw new PathViolation(invariant, detail);
    this.ignoredSeen.push(invariant);
    this.log(`  (ignored) ${invariant}: ${detail}`);
  }

  log(line: string): void {
    this.transcript.push(line);
  }

  /** Runs the CLI to its end, or kills it with SIGKILL once `kill` is seen (then `killed`). */
  async cli(args: string[], kill?: { after: KillAfter; count: number }): Promise<CliRun> {
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      MEDIAGEN_API_KEY: this.sandbox.apiKey,
      MEDIAGEN_BASE_URL: this.sandbox.baseUrl,
    };
    if (this.offsetMs !== 0) {
      env.NODE_OPTIONS = `--import=${CLOCK}`;
      env.MEDIABATCH_TEST_CLOCK_OFFSET_MS = String(this.offsetMs);
    }
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: this.dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    let killed = false;
    if (kill) {
      const seen = this.killWatch(kill);
      let finished = false;
      void done.then(() => {
        finished = true;
      });
      while (!finished) {
        if (seen()) {
          killed = child.kill('SIGKILL');
          break;
        }
        await new Promise((resolveTick) => setTimeout(resolveTick, 5));
      }
    }
    const result = await done;
    const run: CliRun = { args, ...result, killed: killed && result.signal === 'SIGKILL' };
    const shown = args.map((arg) => arg.replace(`${this.dir}/`, '')).join(' ');
    const end = run.killed ? 'killed' : `exit ${run.code ?? run.signal}`;
    this.log(
      `  $ mediabatch ${shown} -> ${end}${run.code && run.code !== 0 ? `: ${lastLines(run.stderr)}` : ''}`,
    );
    return run;
  }

  /** Whether the moment to kill has come: N more POSTs, file downloads, or new videos on disk. */
  private killWatch(kill: { after: KillAfter; count: number }): () => boolean {
    const posts = () => this.sandbox.records().requests.filter((r) => r.method === 'POST').length;
    const downloads = () =>
      this.sandbox.records().requests.filter((r) => r.path.startsWith('/v1/files/') && r.status === 200)
        .length;
    const videoStamps = () =>
      this.videos().map((name) => {
        const stat = statSync(join(this.outDir, name), { throwIfNoEntry: false });
        return `${name}:${stat?.ino}:${stat?.mtimeMs}`;
      });
    if (kill.after === 'file') {
      const before = new Set(videoStamps());
      return () => videoStamps().filter((stamp) => !before.has(stamp)).length >= kill.count;
    }
    const count = kill.after === 'post' ? posts : downloads;
    const base = count();
    return () => count() - base >= kill.count;
  }

  async close(): Promise<void> {
    await this.sandbox.close();
  }
}

function collect(child: ChildProcess): Promise<Omit<CliRun, 'args' | 'killed'>> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
  return new Promise((resolveDone) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveDone({ code, signal, stdout, stderr });
    });
  });
}

const lastLines = (text: string) => text.trim().split('\n').slice(-3).join(' | ');
