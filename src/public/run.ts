import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { ExitCode } from '../errors.js';
import type { ItemState } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import type { ProgressSnapshot } from '../runner/reporter.js';
import type { StopReason } from '../runner/stop-rules.js';
import { checkOptions, hostOf, OptionError, placeOf, serviceOptionsSchema } from './options.js';
import { type RunOutcome, type RunView, runManifest } from '../batch/run-batch.js';
import { readNoticeSettings } from '../batch/run-notices.js';
import { runSettings } from '../batch/run-settings.js';
import { type StatusDocument, statusDocument } from './status-document.js';

const runOptionsSchema = serviceOptionsSchema.extend({
  /** Done items to generate a new take of, keeping the earlier one (`--redo`). */
  redo: z.array(z.string().min(1)).optional(),
  /** Item ids or glob patterns this run may touch (`--only`). */
  only: z.array(z.string().min(1)).optional(),
  /** Items failed for a final reason go out again with a new key (`--retry-failed`). */
  retryFailed: z.boolean().optional(),
  /** Expired results are generated again, paid again (`--regenerate-expired`). */
  regenerateExpired: z.boolean().optional(),
  /** Seconds between polls of one job, instead of the service's Retry-After (`--poll-interval`). */
  pollIntervalSeconds: z.number().positive().optional(),
  /** Where to POST run notices (`--notify`); default env.MEDIABATCH_NOTIFY_URL, then the manifest's. */
  notify: z.string().min(1).optional(),
  /** Aborting drains the run exactly like Ctrl-C: nothing new is submitted, what is paid is saved. */
  signal: z.instanceof(AbortSignal).optional(),
});

export type RunOptions = z.input<typeof runOptionsSchema>;

export interface ItemEvent {
  itemId: string;
  state: ItemState;
  detail: string | null;
  /** Items per state right after this change, so counts shown beside the event always agree. */
  counts: Record<ItemState, number>;
}
export interface LogEvent {
  level: 'info' | 'warn' | 'error';
  message: string;
}
export interface StopEvent {
  reason: StopReason;
  message: string;
}

/** The events of a run, each with one argument. */
export interface RunEvents {
  item: [ItemEvent];
  progress: [ProgressSnapshot];
  log: [LogEvent];
  stop: [StopEvent];
}

/** How a run ended: the `run --json` document and the exit code the CLI would end with. */
export interface RunResult {
  exitCode: ExitCode;
  exitName: keyof typeof ExitCode;
  /** False when it was stopped during the pre-flight: nothing was submitted. */
  started: boolean;
  stop: StopReason | null;
  status: StatusDocument;
  ledgerPath: string;
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

  /** Drains the run, like Ctrl-C or aborting the `signal` option. */
  abort(): void {
    this.#stop.abort();
  }
}

/** Runs a manifest as `mediabatch run` does: the same ledger, lock, budget and exit codes. */
export function run(manifest: Manifest, options: RunOptions = {}): RunHandle {
  if (!manifest || typeof manifest !== 'object' || !Array.isArray(manifest.items))
    throw new OptionError('manifest', 'run(): the manifest must be what loadManifest() returned');
  const checked = checkOptions('run', runOptionsSchema, options);
  return new RunHandle(async (handle, stopSignal) => {
    const host = hostOf(checked, linesTo(handle));
    const placed = placeOf(manifest, checked, host);
    const settings = runSettings(
      {
        sandbox: checked.sandbox ?? false,
        baseUrl: checked.baseUrl,
        redo: checked.redo ?? [],
        only: checked.only ?? [],
        pollIntervalMs: checked.pollIntervalSeconds === undefined ? null : checked.pollIntervalSeconds * 1000,
        regenerateExpired: checked.regenerateExpired ?? false,
        retryFailed: checked.retryFailed ?? false,
      },
      placed.manifest,
      host,
    );
    const notices = readNoticeSettings({ notify: checked.notify }, placed.manifest, host);
    const signals = [stopSignal, ...(checked.signal ? [checked.signal] : [])];
    const outcome = await runManifest(
      {
        ...placed,
        settings,
        notices,
        named: { manifest: manifest.file, ledger: checked.ledger, baseUrl: checked.baseUrl },
      },
      eventView(handle, host, AbortSignal.any(signals)),
    );
    return resultOf(outcome);
  });
}

function eventView(handle: RunHandle, host: RunView['host'], signal: AbortSignal): RunView {
  const log = (level: LogEvent['level'], message: string) => handle.emit('log', { level, message });
  return {
    host,
    sandboxStarted: (baseUrl) => log('info', `running against the embedded sandbox at ${baseUrl}`),
    notice: (text) => log('info', text.trimEnd()),
    warn: (line) => log('warn', line),
    start: (planLine) => {
      log('info', planLine);
      return {
        reporter: {
          itemChanged: (itemId, state, detail, counts) =>
            handle.emit('item', { itemId, state, detail, counts: { ...counts } }),
          log,
          progress: (snapshot) => handle.emit('progress', snapshot),
        },
        finish: async () => undefined,
        finished: () => undefined,
      };
    },
    stopped: (reason, message) => handle.emit('stop', { reason, message }),
    // An abort is the first Ctrl-C: the pre-flight stops, or the run drains. There is no second.
    onInterrupt: (listener) => {
      if (signal.aborted) listener(1);
      else signal.addEventListener('abort', () => listener(1), { once: true });
    },
    exit: () => {
      throw new Error('an API run never ends the process');
    },
    ended: () => undefined,
  };
}

/** Hook output and warnings the library writes for a terminal become `log` events, one per line. */
function linesTo(handle: RunHandle): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n'))
        if (line.trim() !== '') handle.emit('log', { level: 'info', message: line });
      done();
    },
  });
}

function resultOf(outcome: RunOutcome): RunResult {
  const exitName = (Object.keys(ExitCode) as Array<keyof typeof ExitCode>).find(
    (name) => ExitCode[name] === outcome.exitCode,
  )!;
  return {
    exitCode: outcome.exitCode,
    exitName,
    started: outcome.started,
    stop: outcome.stop,
    status: statusDocument(outcome.report, outcome.service),
    ledgerPath: outcome.ledgerPath,
  };
}
