import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { changedFiles, contentCounts, fileHashes, ledgerDump, sha256Of } from './disk-state.js';
import type { KillAfter } from './path-steps.js';
import { type CliRun, NAME, type PathsWorld } from './paths-world.js';

/**
 * The promises checked around every command and after every step (issue 50, item 4):
 * 0. no command ends in an internal error (exit 70) or hangs;
 * 1. each distinct request is paid once, unless a redo asked for it or its result was lost
 *    past retention (checkPayments);
 * 2. every video mediabatch wrote keeps its bytes: no content has fewer files after a command
 *    than before, unless the test made it; a read-only command changes no file but its target;
 * 3. no command changes the manifest; no read-only command changes the ledger's rows;
 * 4. status, export and the sidecars name the job whose bytes each file holds (checkNames).
 * 5 and 6 (a re-run after exit 0 sends nothing; plan's priced items are the run's POSTs) are
 * checked by the run steps (path-run.ts).
 */
interface Snapshot {
  files: Map<string, string>;
  ledger: string | null;
}

const snapshot = (world: PathsWorld): Snapshot => ({
  files: fileHashes(world.dir, ['.mediabatch']),
  ledger: ledgerDump(world.ledger),
});

const isVideo = (path: string) => path.startsWith(`out/${NAME}/`) && path.endsWith('.mp4');

export interface CommandOptions {
  readOnly?: boolean;
  /** A path (relative to the project) the command may write; only read-only commands name one. */
  target?: string | null;
  kill?: { after: KillAfter; count: number };
}

/** Runs one CLI command and checks invariants 0, 2 and 3 across it. */
export async function command(
  world: PathsWorld,
  args: string[],
  options: CommandOptions = {},
): Promise<CliRun> {
  const [run] = await commands(world, [args], options);
  return run!;
}

/** Runs read-only commands side by side between one pair of snapshots. */
export async function commands(
  world: PathsWorld,
  argLists: string[][],
  options: CommandOptions = {},
): Promise<CliRun[]> {
  const before = snapshot(world);
  const runs = await Promise.all(argLists.map((args) => world.cli(args, options.kill)));
  world.refreshJobs();
  const after = snapshot(world);
  for (const run of runs) {
    const shown = `mediabatch ${run.args.join(' ')}`;
    if (run.code === 70) world.violated('0 internal error', `${shown} exited 70:\n${run.stderr}`);
    if (run.signal !== null && !run.killed) world.violated('0 hung', `${shown} did not end within its time`);
  }
  const what = argLists.map((args) => args[0]).join(' + ');
  if (before.files.get('batch.yaml') !== after.files.get('batch.yaml'))
    world.violated('3 manifest changed', `${what} changed batch.yaml`);
  const was = contentCounts(before.files, isVideo);
  const now = contentCounts(after.files, isVideo);
  for (const [sha, count] of was) {
    if (world.testMade.has(sha) || (now.get(sha) ?? 0) >= count) continue;
    const paths = (map: Map<string, string>) => [...map].filter(([, s]) => s === sha).map(([p]) => p);
    const job = world.jobBySha.get(sha);
    world.violated(
      '2 saved video lost',
      `${what}: the bytes of ${job ? `job ${job.id} (item ${job.item})` : `sha ${sha.slice(0, 12)}`} were in ` +
        `${paths(before.files).join(', ')} and are now in ${paths(after.files).join(', ') || 'no file'}`,
    );
  }
  if (options.readOnly) {
    if (before.ledger !== after.ledger)
      world.violated('3 ledger changed by a read-only command', `${what} changed the ledger's rows`);
    const target = options.target ?? null;
    const changes = changedFiles(before.files, after.files, (path) => path === target);
    if (changes.length > 0)
      world.violated('2 read-only command changed files', `${what}: ${changes.join('; ')}`);
  }
  return runs;
}

/** Invariant 1: no request has more charged jobs than its first payment and its allowed extras. */
export function checkPayments(world: PathsWorld): void {
  // A killed run's last POST may be stored after the kill: learn every job there is now.
  world.refreshJobs();
  const charged = new Map<string, string[]>();
  for (const job of world.sandbox.records().jobs) {
    if (job.amountMicros - job.refundedMicros <= 0) continue;
    const facts = world.jobs.get(job.id)!;
    charged.set(facts.request, [...(charged.get(facts.request) ?? []), `${job.id} (item ${facts.item})`]);
  }
  for (const [request, jobs] of charged) {
    const allowed = 1 + (world.extraPays.get(request) ?? 0);
    if (jobs.length > allowed)
      world.violated(
        '1 paid twice',
        `request ${request} has ${jobs.length} charged jobs (${allowed} allowed): ${jobs.join(', ')}`,
      );
  }
}

/**
 * The requests whose result is lost: no job of theirs still running or holding its output at the
 * service, and no file anywhere in the project with the bytes of one of their jobs.
 */
export function lostRequests(world: PathsWorld): Set<string> {
  const { paid, held, onDisk } = whereResultsAre(world);
  return new Set([...paid].filter((request) => !held.has(request) && !onDisk.has(request)));
}

function whereResultsAre(world: PathsWorld): { paid: Set<string>; held: Set<string>; onDisk: Set<string> } {
  world.refreshJobs();
  const files = new Set(fileHashes(world.dir, ['.mediabatch']).values());
  const now = Date.now() + world.offsetMs;
  const paid = new Set<string>();
  const held = new Set<string>();
  const onDisk = new Set<string>();
  for (const job of world.sandbox.records().jobs) {
    const facts = world.jobs.get(job.id)!;
    paid.add(facts.request);
    const holds = job.status === 'succeeded' && job.expiresAt !== null && Date.parse(job.expiresAt) > now;
    if (job.status === 'queued' || job.status === 'running' || holds) held.add(facts.request);
    if (facts.sha !== null && files.has(facts.sha)) onDisk.add(facts.request);
  }
  return { paid, held, onDisk };
}

interface StatusItem {
  id: string;
  state: string;
  job_id: string | null;
  files: string[];
}
interface ExportLine {
  id: string;
  state: string;
  job_id: string | null;
  files: Array<{ path: string; sha256: string }>;
}
interface Sidecar {
  item: string;
  job_id: string | null;
  file: { sha256: string };
}

/**
 * Invariant 4: for each file status, export or a sidecar speaks of, whose bytes are a job's
 * output, that job is the one named; and after a run that exited 0, each item's file is an output
 * of the request the item asks for (before it, status shows what the ledger holds, an edited
 * item's earlier take included). Files the test altered (bytes of no job) and missing files are
 * left to the other checks.
 */
export async function checkNames(world: PathsWorld, afterCleanRun: boolean): Promise<void> {
  const problems: string[] = [];
  const jobOf = (path: string) => {
    const full = resolve(world.dir, path);
    return existsSync(full) ? (world.jobBySha.get(sha256Of(full)) ?? null) : null;
  };
  // status and export are read from the ledger, the files, the manifest and the clock: when none
  // changed since the last check (a read-only step, an edit undone by another), they say the same.
  const state = createHash('sha256')
    .update(
      JSON.stringify([ledgerDump(world.ledger), [...fileHashes(world.dir, ['.mediabatch'])], world.offsetMs]),
    )
    .digest('hex');
  const seen = !afterCleanRun && world.checkedState === state;
  world.checkedState = state;
  if (existsSync(world.ledger) && !seen) {
    const [status, exported] = await commands(
      world,
      [
        ['status', world.manifest, '--json'],
        ['export', world.manifest],
      ],
      { readOnly: true },
    );
    if (status!.code !== 0 || exported!.code !== 0)
      return world.violated('4 unreadable', `status exited ${status!.code}, export ${exported!.code}`);
    const asked = new Map(world.ledgerItems().map((item) => [item.id, item.request]));
    for (const item of (JSON.parse(status!.stdout) as { items: StatusItem[] }).items) {
      const job = item.files[0] === undefined ? null : jobOf(item.files[0]);
      if (job === null) continue;
      if (item.job_id !== job.id)
        problems.push(
          `status: ${item.id} names job ${item.job_id}, its file ${item.files[0]} holds ${job.id}'s bytes`,
        );
      if (afterCleanRun && asked.get(item.id) !== job.request)
        problems.push(
          `status: ${item.id} is done with ${item.files[0]}, the output of ${job.id} of ${job.request}`,
        );
    }
    for (const line of exported!.stdout.split('\n').filter((text) => text.trim() !== '')) {
      const record = JSON.parse(line) as ExportLine;
      const job = record.files[0] === undefined ? null : jobOf(record.files[0].path);
      if (job !== null && record.job_id !== job.id)
        problems.push(
          `export: ${record.id} names job ${record.job_id}, its file ${record.files[0]!.path} holds ${job.id}'s bytes`,
        );
    }
  }
  for (const video of world.videos()) {
    const sidecarPath = join(world.outDir, video.replace(/\.mp4$/, '.json'));
    const job = jobOf(join(world.outDir, video));
    if (job === null || !existsSync(sidecarPath)) continue;
    const sidecar = JSON.parse(readFileSync(sidecarPath, 'utf8')) as Sidecar;
    if (sidecar.job_id !== job.id)
      problems.push(
        `sidecar: ${relative(world.dir, sidecarPath)} names job ${sidecar.job_id}, ${video} holds ${job.id}'s bytes`,
      );
  }
  if (problems.length > 0) world.violated('4 wrong job named', problems.join('\n'));
}
