import { Writable } from 'node:stream';
import { ListrRunView } from '../../src/cli/ui/listr-view.js';
import type { ProgressSnapshot, RunEvent } from '../../src/index.js';
import { zeroCounts } from '../../src/ledger/records.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { expectExit, runCli } from './spawn-cli.js';

/**
 * Scenario 9: what the live view (listr2) costs at 200 slots and 100 finishes a second.
 *
 * The view's share: the same stream of events (each finish an item done and the next one in
 * flight, a snapshot every 200 ms, as the runner sends them) is fed for VIEW_SECONDS to the real
 * view drawing into a 110x30 terminal that discards what it gets, and to a observer that does
 * nothing; the difference in this process's CPU time is the view's. The run's own CPU at that
 * pace comes from the real CLI (--json, no view) against the sandbox: 1,000 items, 200 slots,
 * every job 2 s, so 100 finish each second.
 */
export const VIEW_SLOTS = 200;
export const VIEW_FINISHES_PER_SECOND = 100;
const VIEW_SECONDS = 8;
const RUN_ITEMS = 1000;
const JOB_SECONDS = VIEW_SLOTS / VIEW_FINISHES_PER_SECOND;

export interface ViewSample {
  /** CPU time of the view per second of run, over what feeding the same events costs anyway. */
  viewCpuMsPerSecond: number;
  /** Bytes written to the terminal per second. */
  bytesPerSecond: number;
  /** Frames (writes) per second. */
  framesPerSecond: number;
  /** CPU time of the real run at the same pace, per second of its wall time. */
  runCpuMsPerSecond: number;
  /** viewCpuMsPerSecond / runCpuMsPerSecond. */
  share: number;
}

/** A view that does nothing with the events: the baseline. */
const silentView = { handle: (_event: RunEvent) => undefined };

/** Feeds a view 200 jobs in flight and 100 finishes a second; returns the CPU time it took. */
async function feed(
  view: { handle(event: RunEvent): unknown },
  total: number,
  seconds = VIEW_SECONDS,
): Promise<number> {
  const counts = zeroCounts();
  counts.pending = total;
  let next = 0;
  const start = (id: number) => {
    counts.pending -= 1;
    counts.in_flight += 1;
    view.handle({
      name: 'item',
      payload: { itemId: `item-${id}`, state: 'in_flight', detail: null, counts: { ...counts } },
    });
  };
  const snapshot = (): ProgressSnapshot => ({
    total,
    byState: { ...counts },
    unfinished: counts.in_flight,
    slotLimit: VIEW_SLOTS,
    batchInUse: null,
    downloadsActive: 3,
    downloadsQueued: 0,
    unsavedLimit: 20,
    savingFirst: false,
    spentMicros: counts.done * 40_000,
    budgetMicros: 100_000_000,
    draining: false,
  });
  while (next < VIEW_SLOTS) start(next++);
  const cpu = process.cpuUsage();
  const began = performance.now();
  let finished = 0;
  let lastSnapshot = 0;
  for (;;) {
    const elapsed = performance.now() - began;
    if (elapsed >= seconds * 1000) break;
    const due = Math.floor((elapsed / 1000) * VIEW_FINISHES_PER_SECOND);
    for (; finished < due; finished += 1) {
      counts.in_flight -= 1;
      counts.done += 1;
      view.handle({
        name: 'item',
        payload: { itemId: `item-${finished}`, state: 'done', detail: null, counts: { ...counts } },
      });
      start(next++);
    }
    if (elapsed - lastSnapshot >= 200) {
      lastSnapshot = elapsed;
      view.handle({ name: 'progress', payload: snapshot() });
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000;
}

async function viewCost(): Promise<Omit<ViewSample, 'runCpuMsPerSecond' | 'share'>> {
  const total = VIEW_SLOTS + VIEW_FINISHES_PER_SECOND * (VIEW_SECONDS + 1);
  let bytes = 0;
  let frames = 0;
  const terminal = Object.assign(
    new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        bytes += chunk.length;
        frames += 1;
        done();
      },
    }),
    { isTTY: true, columns: 110, rows: 30 },
  );
  // A first view loads listr2's lazily imported parts and warms both paths up: start-up is not pace.
  const warm = new ListrRunView(new Writable({ write: (_c, _e, done) => done() }), {
    title: 'warm-up',
    checked: 'Checked the service',
  });
  warm.start();
  await feed(warm, total, 1);
  await warm.finish(null);
  await feed(silentView, total, 1);
  const baseline = await feed(silentView, total);
  bytes = 0;
  frames = 0;
  const view = new ListrRunView(terminal, {
    title: `bench (${total} items)`,
    checked: 'Checked the service',
  });
  view.start();
  const withView = await feed(view, total);
  await view.finish(null);
  return {
    viewCpuMsPerSecond: Math.max(0, withView - baseline) / VIEW_SECONDS,
    bytesPerSecond: bytes / VIEW_SECONDS,
    framesPerSecond: frames / VIEW_SECONDS,
  };
}

async function runCost(): Promise<number> {
  const sandbox = await startSandbox(
    benchSandboxConfig(VIEW_SLOTS, {
      queued_seconds: 0,
      running_seconds: { min: JOB_SECONDS, max: JOB_SECONDS },
      retry_after_seconds: 1,
    }),
    { port: 0 },
  );
  const items = Array.from({ length: RUN_ITEMS }, (_, i) => `  - {id: v${i}, prompt: "View shot ${i}"}`);
  const manifest = `version: 1\nname: bench-view\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${VIEW_SLOTS}\nitems:\n${items.join('\n')}\n`;
  const dir = benchDir('view', { 'batch.yaml': manifest });
  try {
    const run = await runCli(
      ['run', 'batch.yaml', '--base-url', sandbox.baseUrl, '--poll-interval', '1', '--json'],
      { cwd: dir, env: cliEnv(sandbox), discardStdout: true, timeoutMs: 600_000 },
    );
    expectExit(run, 0, 'view run');
    return (run.stats.userCpuMicros + run.stats.systemCpuMicros) / 1000 / (run.wallMs / 1000);
  } finally {
    await sandbox.close();
    removeDir(dir);
  }
}

export async function viewRun(): Promise<ViewSample> {
  const view = await viewCost();
  const runCpuMsPerSecond = await runCost();
  return { ...view, runCpuMsPerSecond, share: view.viewCpuMsPerSecond / runCpuMsPerSecond };
}
