import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { z } from 'zod';
import type { GalleryWritten } from '../../batch/gallery/batch-gallery.js';
import { type StatusDocument, statusDocument } from '../../batch/ledger/status-document.js';
import { batchOf, checkedManifest, checkOptions, serviceOptionsSchema } from '../../batch/resolve/options.js';
import { callerCwd } from '../../batch/resolve/resolve-batch.js';
import type { Notice, Warning } from '../../batch/resolve/warnings.js';
import { readRedoIds } from '../../batch/run-settings/list-files.js';
import { runSettings } from '../../batch/run-settings/run-settings.js';
import type { Outcome } from '../../codes.js';
import { UserError } from '../../errors.js';
import type { ItemState } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import type { CheckFunction } from '../../runner/own-checks.js';
import type { RunOptions as RunnerOptions } from '../../runner/run-context.js';
import type { ProgressSnapshot } from '../../runner/run-observer.js';
import type { StopReason } from '../../runner/stop-rules.js';
import { type CheckedService, type RunOutcome, type RunView, runManifest } from './run-batch.js';
import { readNoticeSettings } from './run-notices.js';

/**
 * The options the runner takes as they are (`RunOptions`, runner/run-context.ts): `run` checks
 * them here and hands them over untouched, so a new one is a field here and its use in the runner.
 * Each is one the runner declares, of a type it takes (`satisfies`).
 */
const runnerOptions = {
  /** Items failed for a final reason go out again with a new key (`--retry-failed`). */
  retryFailed: z.boolean().optional(),
  /** Expired results are generated again, paid again (`--regenerate-expired`). */
  regenerateExpired: z.boolean().optional(),
  /**
   * The most outputs paid for and not yet saved at once (`--max-unsaved`): jobs unfinished, and
   * finished ones not yet saved. At it the run submits nothing more until saving catches up.
   * Default twice the concurrency (docs/performance.md, "Saving keeps up with paying").
   */
  maxUnsaved: z.number().int().positive().optional(),
} satisfies { [K in keyof RunnerOptions]?: z.ZodType<RunnerOptions[K] | undefined> };

const runOptionsSchema = serviceOptionsSchema.extend({
  /**
   * Done items to generate a new take of, preserving the earlier one (`--redo`); `@FILE` names a
   * list file (the gallery's redo.txt: ids separated by white space, `#` comments), read from `cwd`.
   */
  redo: z.array(z.string().min(1)).optional(),
  /** Item ids or glob patterns this run may touch (`--only`). */
  only: z.array(z.string().min(1)).optional(),
  ...runnerOptions,
  /** Seconds between polls of one job, instead of the service's Retry-After (`--poll-interval`). */
  pollIntervalSeconds: z.number().positive().optional(),
  /** Where to POST run notices (`--notify`); default env.MEDIABATCH_NOTIFY_URL, then the manifest's. */
  notify: z.string().min(1).optional(),
  /** A command to run when the run ends (`--on-complete`): words split without a shell, or an argv. */
  onComplete: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  /**
   * Write or refresh the gallery (`<output>/index.html`, as `writeGallery` with no `to`) when the
   * run ends; default true. A gallery that cannot be written is a warning, never the run's outcome.
   */
  gallery: z.boolean().optional(),
  /**
   * A shared ledger's batch runs one definition: where the manifest differs from it, make the
   * manifest its next revision instead of refusing the run (`--redefine`, docs/shared-ledger.md).
   */
  redefine: z.boolean().optional(),
  /**
   * An approved plan's file, from `cwd` (`--plan`, written by `writePlan`): run only that plan,
   * refused before any request when it no longer matches, never spending more than its total.
   */
  plan: z.string().min(1).optional(),
  /** Aborting drains the run: nothing new is submitted, what is paid is saved. */
  signal: z.instanceof(AbortSignal).optional(),
  /**
   * A check of your own (docs/checks.md): given each saved file, it answers true, false or
   * `{ pass, score?, reason? }`; a throw stops the run before anything more is bought.
   */
  check: z.custom<CheckFunction>((value) => typeof value === 'function').optional(),
});

export type RunOptions = z.input<typeof runOptionsSchema>;

export interface ItemEvent {
  itemId: string;
  state: ItemState;
  detail: string | null;
  /** Items per state right after this change, so counts shown beside the event always agree. */
  counts: Record<ItemState, number>;
}
/** A line of the run's own log (what the CLI's plain view prints). */
export interface LogEvent {
  level: 'info' | 'warn' | 'error';
  message: string;
}
export interface StopEvent {
  reason: StopReason;
  message: string;
}
/** The embedded sandbox is up: where it listens, and the ledger and folder a sandbox run uses. */
export interface SandboxEvent {
  baseUrl: string;
  ledgerPath: string;
  outputDir: string;
}
/** The run is about to submit: the plan's line, and what the pre-flight found. */
export interface StartEvent {
  plan: string;
  checked: CheckedService;
}

/** The events of a run, each with one argument. */
export interface RunEvents {
  sandbox: [SandboxEvent];
  /** What this run will do that a person should read before it spends: `{ code, message, fields }`. */
  notice: [Notice];
  /** A structured warning: `{ code, message }` (docs/api.md lists the codes). */
  warning: [Warning];
  start: [StartEvent];
  item: [ItemEvent];
  progress: [ProgressSnapshot];
  log: [LogEvent];
  stop: [StopEvent];
  /** What the --on-complete command wrote, as it wrote it. */
  output: [string];
  /** The run is over: its result, before the notifications are awaited. */
  end: [RunResult];
}

/** One event of a run with its name, as `RunHandle` emits it: what every view of a run reads. */
export type RunEvent = { [K in keyof RunEvents]: { name: K; payload: RunEvents[K][0] } }[keyof RunEvents];

/** How a run ended: its outcome (the CLI's exit code is the outcome's) and the `run --json` document. */
export interface RunResult {
  outcome: Outcome;
  /** False when it was stopped during the pre-flight: nothing was submitted. */
  started: boolean;
  stop: StopReason | null;
  status: StatusDocument;
  ledgerPath: string;
  /** The items this run was asked to run (`only`); null for all. */
  selected: string[] | null;
  /** The gallery page the run wrote or refreshed as it ended; null when it wrote none (see `gallery`). */
  gallery: GalleryWritten | null;
  /**
   * How many other runners of its shared batch were still running when it ended: it left the
   * gallery to them, and the last of them to end writes it (docs/shared-ledger.md). 0 otherwise.
   */
  galleryLeftTo: number;
  /**
   * Items not submitted because a file this ledger did not write holds their name (docs/results.md):
   * they stay pending, and only moving that file lets a re-run send them.
   */
  heldBack: string[];
}

/** A run under way: its events, a way to stop it, and its result (resolves also when aborted). */
export class RunHandle extends EventEmitter<RunEvents> {
  readonly result: Promise<RunResult>;
  readonly #stop = new AbortController();

  /** @internal */
  constructor(start: (handle: RunHandle, signal: AbortSignal) => Promise<RunResult>) {
    super();
    // Started on the next tick, so listeners added right after run() hear every event.
    this.result = Promise.resolve().then(() => start(this, this.#stop.signal));
  }

  /** Drains the run, like aborting the `signal` option: nothing new is submitted, what is paid is saved. */
  abort(): void {
    this.#stop.abort();
  }
}

/** Runs a manifest as `mediabatch run` does: the same ledger, lock, budget and exit codes. */
export function run(manifest: Manifest, options: RunOptions = {}): RunHandle {
  const {
    redo,
    only,
    pollIntervalSeconds,
    notify,
    onComplete,
    gallery,
    redefine,
    signal,
    plan,
    check,
    ...rest
  } = checkOptions('run', runOptionsSchema, options);
  const [runner, service] = splitOff(rest, runnerOptions);
  checkedManifest('run', manifest);
  // `@FILE` entries (a gallery's redo.txt) are read now: a file that cannot be read refuses the call.
  const redoIds = readRedoIds(redo ?? [], callerCwd(service));
  if (plan !== undefined && ((only?.length ?? 0) > 0 || redoIds.length > 0))
    throw new UserError(
      'an approved `plan` is run whole: `only` and `redo` would run another plan. Write a plan without them, or run without `plan`',
      'invalid_usage',
      { option: 'plan' },
    );
  return new RunHandle(async (handle, stopSignal) => {
    const batch = batchOf(manifest, service);
    const settings = runSettings(
      {
        ...runner,
        redo: redoIds,
        only: only ?? [],
        pollIntervalMs: pollIntervalSeconds === undefined ? null : pollIntervalSeconds * 1000,
        check,
      },
      batch,
    );
    const notices = readNoticeSettings({ notify, onComplete }, batch);
    const signals = [stopSignal, ...(signal ? [signal] : [])];
    const outcome = await runManifest(
      {
        batch,
        settings,
        notices,
        gallery: gallery ?? true,
        redefine: redefine ?? false,
        approvedPlan: plan === undefined ? null : resolve(batch.cwd, plan),
      },
      eventView(handle, AbortSignal.any(signals)),
    );
    return resultOf(outcome);
  });
}

/** The options named in `group` (those given), apart from the others. */
function splitOff<O extends object, K extends string>(
  options: O,
  group: Record<K, unknown>,
): [Pick<O, Extract<K, keyof O>>, Omit<O, K>] {
  const picked: Record<string, unknown> = {};
  const others = { ...options } as Record<string, unknown>;
  for (const key of Object.keys(group)) {
    if (others[key] !== undefined) picked[key] = others[key];
    delete others[key];
  }
  return [picked as Pick<O, Extract<K, keyof O>>, others as Omit<O, K>];
}

function eventView(handle: RunHandle, signal: AbortSignal): RunView {
  const log = (level: LogEvent['level'], message: string) => handle.emit('log', { level, message });
  return {
    sandboxStarted: (baseUrl, ledgerPath, outputDir) =>
      handle.emit('sandbox', { baseUrl, ledgerPath, outputDir }),
    notice: (notice) => handle.emit('notice', notice),
    warn: (warning) => handle.emit('warning', warning),
    hookOutput: new Writable({
      write(chunk, _encoding, done) {
        handle.emit('output', String(chunk));
        done();
      },
    }),
    start: (plan, checked) => {
      handle.emit('start', { plan, checked });
      return {
        itemChanged: (itemId, state, detail, counts) =>
          handle.emit('item', { itemId, state, detail, counts: { ...counts } }),
        log,
        progress: (snapshot) => handle.emit('progress', snapshot),
      };
    },
    stopped: (reason, message) => handle.emit('stop', { reason, message }),
    onInterrupt: (listener) => {
      if (signal.aborted) listener();
      else signal.addEventListener('abort', () => listener(), { once: true });
    },
    ended: (outcome) => handle.emit('end', resultOf(outcome)),
  };
}

function resultOf(outcome: RunOutcome): RunResult {
  return {
    outcome: outcome.outcome,
    started: outcome.started,
    stop: outcome.stop,
    status: statusDocument(outcome.report, outcome.ledger),
    ledgerPath: outcome.ledger.path,
    selected: outcome.only === null ? null : [...outcome.only],
    gallery: outcome.gallery,
    galleryLeftTo: outcome.galleryLeftTo,
    heldBack: outcome.heldBack,
  };
}
