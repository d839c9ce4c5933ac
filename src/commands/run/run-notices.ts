import { statusSource } from '../../batch/ledger/ledger-read.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import type { Outcome } from '../../codes.js';
import { buildStatusStreamed, type StatusReport } from '../../documents/status-report.js';
import { UserError } from '../../errors.js';
import type { LedgerLifecycle, ReadingLedger, RecordReads } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { deliver } from '../../notify/deliver.js';
import { parseCommand, runHook } from '../../notify/on-complete.js';
import type { RunObserver } from '../../runner/run-observer.js';
import type { StopReason } from '../../runner/stop-rules.js';
import { noticeStop, type RunNotice, runNotice } from './run-notice.js';

/** How `run` tells someone: both off unless asked for (docs/overnight.md). */
export interface NoticeSettings {
  url: string | null;
  secret: string | null;
  windowMs: number;
  onComplete: string[] | null;
  /** What the hook inherits: the environment without its secrets. */
  hookEnv: Record<string, string>;
}

/** The notify option, else MEDIABATCH_NOTIFY_URL, else the manifest's notify.url; checked before anything runs. */
export function readNoticeSettings(
  asked: { notify?: string | undefined; onComplete?: string | readonly string[] | undefined },
  batch: Pick<Batch, 'manifest' | 'settings'>,
): NoticeSettings {
  const { settings } = batch;
  const url = asked.notify ?? settings.notifyUrl ?? batch.manifest.notifyUrl ?? null;
  if (url !== null && !(/^https?:\/\//i.test(url) && URL.canParse(url)))
    throw new UserError('`notify` / MEDIABATCH_NOTIFY_URL must be an http(s) URL', 'setting_invalid', {
      option: 'notify',
      variable: 'MEDIABATCH_NOTIFY_URL',
    });
  return {
    url,
    secret: settings.notifySecret,
    windowMs: settings.notifyWindowMs,
    onComplete: hookArgv(asked.onComplete),
    hookEnv: settings.hookEnv,
  };
}

/** The hook as words (split without a shell) or as an argv already. */
function hookArgv(command: string | readonly string[] | undefined): string[] | null {
  if (command === undefined) return null;
  if (typeof command !== 'string') return [...command];
  const parsed = parseCommand(command);
  if ('problem' in parsed)
    throw new UserError(`\`onComplete\` ${parsed.problem}`, 'invalid_usage', {
      option: 'onComplete',
    });
  return parsed.argv;
}

/** Variables an `onComplete` command finds, besides MEDIABATCH_SUMMARY (the whole JSON). */
const HOOK_ENV: ReadonlyArray<[string, (notice: RunNotice) => string | number | null]> = [
  ['MEDIABATCH_EVENT', (n) => n.event],
  ['MEDIABATCH_EXIT_CODE', (n) => n.exit_code],
  ['MEDIABATCH_MANIFEST', (n) => n.manifest],
  ['MEDIABATCH_STOP', (n) => n.stop?.kind ?? null],
  ['MEDIABATCH_ITEMS', (n) => n.totals.items],
  ['MEDIABATCH_DONE', (n) => n.totals.done],
  ['MEDIABATCH_FAILED', (n) => n.totals.failed],
  ['MEDIABATCH_PENDING', (n) => n.totals.pending],
  ['MEDIABATCH_IN_FLIGHT', (n) => n.totals.in_flight],
  ['MEDIABATCH_BUDGET_EXCEEDED', (n) => n.totals.budget_exceeded],
  ['MEDIABATCH_EXPIRED', (n) => n.totals.expired],
  ['MEDIABATCH_SPENT_USD', (n) => n.totals.spent_usd],
  ['MEDIABATCH_BUDGET_LEFT_USD', (n) => n.totals.budget_left_usd],
  ['MEDIABATCH_AT_RISK_OUTPUTS', (n) => n.value_at_risk.outputs],
  ['MEDIABATCH_AT_RISK_USD', (n) => n.value_at_risk.cost_usd],
  ['MEDIABATCH_LEDGER', (n) => n.ledger],
  ['MEDIABATCH_OUTPUT_DIR', (n) => n.output_dir],
];

interface Where {
  manifest: Manifest;
  ledgerPath: string;
  ledger: LedgerLifecycle & RecordReads & ReadingLedger;
}

/**
 * The run's notifications: one POST each time the run stops (a new reason, or the first item kept
 * back by the budget) and one when it ends, then the --on-complete command. Deliveries run in the
 * background and the end waits for them, each bounded by MEDIABATCH_NOTIFY_SECONDS; none of them
 * can change the run's exit code.
 */
export class RunNotices {
  readonly #settings: NoticeSettings;
  readonly #where: Where;
  readonly #warn: Warn;
  readonly #hookOutput: NodeJS.WritableStream;
  readonly #deliveries: Promise<void>[] = [];
  #stopMessage: string | null = null;
  #budgetTold = false;

  constructor(
    settings: NoticeSettings,
    where: Where,
    tell: { warn: Warn; hookOutput: NodeJS.WritableStream },
  ) {
    this.#settings = settings;
    this.#where = where;
    this.#warn = tell.warn;
    this.#hookOutput = tell.hookOutput;
    if (settings.url !== null && settings.secret === null)
      this.#warn({
        code: 'notify_unsigned',
        message: 'MEDIABATCH_NOTIFY_SECRET is not set: notifications are sent unsigned',
      });
  }

  /** For RunDeps.onStop: a new reason to stop, told at once. */
  readonly stopped = (reason: StopReason, message: string): void => {
    this.#stopMessage = message;
    if (reason.kind === 'draining' || this.#settings.url === null) return;
    this.#sendStopped(reason, message);
  };

  /** The ledger is read for the notice in the background; the end waits for it with the deliveries. */
  #sendStopped(reason: StopReason | null, message: string | null): void {
    const built = (async () => {
      const report = await this.#status();
      return runNotice('run.stopped', await this.#context(report), noticeStop(reason, message, report), null);
    })();
    this.#deliveries.push(built.then((notice) => this.#send(notice)));
  }

  /** The run's observer, also watching for the first item the budget keeps back. */
  observer(inner: RunObserver): RunObserver {
    return {
      log: (level, message) => inner.log(level, message),
      progress: (snapshot) => inner.progress(snapshot),
      itemChanged: (itemId, state, detail, counts) => {
        inner.itemChanged(itemId, state, detail, counts);
        if (state !== 'budget_exceeded' || this.#budgetTold || this.#settings.url === null) return;
        this.#budgetTold = true;
        this.#sendStopped(null, null);
      },
    };
  }

  /** The end: the last notification and the hook; resolves once both are over. */
  async finished(report: StatusReport, stop: StopReason | null, outcome: Outcome): Promise<void> {
    const notice = runNotice(
      'run.finished',
      await this.#context(report),
      noticeStop(stop, this.#stopMessage, report),
      outcome,
    );
    if (this.#settings.url !== null) this.#send(notice);
    const hook = this.#settings.onComplete === null ? null : this.#runHook(this.#settings.onComplete, notice);
    await Promise.all([...this.#deliveries, hook]);
  }

  async #status(): Promise<StatusReport> {
    return buildStatusStreamed(this.#where.manifest, await statusSource(this.#where.ledger), Date.now());
  }

  async #context(report: StatusReport) {
    return {
      report,
      service: (await this.#where.ledger.service())?.identity ?? null,
      ledger: this.#where.ledgerPath,
      outputDir: this.#where.manifest.outputDir,
      now: Date.now(),
    };
  }

  #send(notice: RunNotice): void {
    const url = this.#settings.url!;
    // Only the origin is ever printed: a webhook URL often carries its token in the path or query.
    const shown = new URL(url).origin;
    const task = deliver({
      url,
      body: JSON.stringify(notice),
      event: notice.event,
      secret: this.#settings.secret,
      windowMs: this.#settings.windowMs,
    }).then((result) => {
      if (result.delivered)
        this.#warn({ code: 'notify_delivered', message: `notified ${shown} (${notice.event})` });
      else
        this.#warn({
          code: 'notify_failed',
          message: `could not deliver the ${notice.event} notification to ${shown} after ${result.tries} tr${result.tries === 1 ? 'y' : 'ies'} (${result.reason}); the run's outcome is unchanged`,
        });
    });
    this.#deliveries.push(task);
  }

  async #runHook(argv: string[], notice: RunNotice): Promise<void> {
    const env: Record<string, string> = { ...this.#settings.hookEnv };
    for (const [name, of] of HOOK_ENV) env[name] = String(of(notice) ?? '');
    const json = JSON.stringify(notice);
    env.MEDIABATCH_SUMMARY = json;
    const result = await runHook(argv, env, `${json}\n`, this.#hookOutput);
    if (result.kind === 'exited' && result.code === 0) return;
    const what =
      result.kind === 'exited'
        ? `exited with code ${result.code}`
        : result.kind === 'signal'
          ? `was ended by ${result.signal}`
          : `could not be started (${result.reason})`;
    this.#warn({
      code: 'hook_failed',
      message: `\`onComplete\` ${argv[0]} ${what}; the run's outcome is unchanged`,
      fields: { option: 'onComplete', argv, ...result },
    });
  }
}
