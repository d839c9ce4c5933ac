// Mutation testing of the pure core and the download checks (docs/testing.md). `npm run mutate`;
// run by .ci/run after `npm test`. Only the fast unit tests run against each mutant
// (vitest.unit.config.ts).

/**
 * Every file under the mutated folders is either here or in `notMutated` with its reason;
 * test/mutation/mutation-set.test.ts fails otherwise, so a new file cannot slip past the proof.
 */
export const mutated = [
  'src/money.ts',
  'src/downloads/preserve-take.ts',
  'src/downloads/output-owner.ts',
  'src/downloads/new-file.ts',
  'src/downloads/save-file.ts',
  'src/downloads/save-job-files.ts',
  'src/downloads/sidecar.ts',
  'src/downloads/sync-folder.ts',
  'src/downloads/verify-file.ts',
  'src/downloads/write-atomically.ts',
  'src/runner/budget.ts',
  'src/runner/duration-model.ts',
  'src/runner/item-plan.ts',
  'src/runner/look-budget.ts',
  'src/runner/look-limits.ts',
  'src/runner/unsaved.ts',
  'src/runner/min-heap.ts',
  'src/runner/policy.ts',
  'src/runner/poll-timing.ts',
  'src/runner/request.ts',
  'src/runner/save-estimate.ts',
  'src/runner/stop-rules.ts',
  'src/runner/budget-words.ts',
  'src/runner/renames.ts',
  'src/runner/kept-takes.ts',
  'src/runner/take-index.ts',
  'src/runner/shown-ids.ts',
  'src/runner/output-check.ts',
  'src/runner/reroll.ts',
  'src/runner/own-checks.ts',
  'src/runner/fallback.ts',
  'src/runner/narrow-read.ts',
  // Pure rules outside the two folders, proved the same way.
  'src/manifest/template.ts',
  'src/notify/sign.ts',
  'src/documents/value-at-risk.ts',
  // The keys of an s3:// location (nothing may leave the prefix) and what an S3 failure means.
  'src/manifest/s3-uri.ts',
  'src/storage/s3-errors.ts',
];

/** Folders (and files) whose every file is in one of the two lists. */
export const mutatedFolders = ['src/downloads/', 'src/runner/', 'src/money.ts'];

/** Files under those folders that are not mutated, each with why. */
export const notMutated = {
  'src/runner/clock.ts': 'the system clock: real timers and Date.now, nothing to decide',
  'src/runner/next-step.ts': 'a type: what restoring an item asks of the run',
  'src/runner/check-saved.ts':
    'reads saved files through the store and hands them to output-check.ts (mutated); proved by test/e2e/run/output-checks.test.ts',
  'src/runner/check-command.ts':
    'starts a program and reads its exit, output and timeout; proved by test/e2e/run/own-checks.test.ts (a missing program, a timeout, a verdict)',
  'src/runner/rerolls-due.ts':
    "counts a checks_failed item's failed takes from the ledger and asks reroll.ts (mutated); proved by test/e2e/run/own-checks.test.ts (a re-run after mediabatch check)",
  'src/runner/run-checks.ts':
    "hands a run's saved takes to check-saved.ts and own-checks.ts (mutated) and stops the run when a check cannot run; proved by test/e2e/run/own-checks.test.ts",
  'src/runner/check-tally.ts':
    "a run's counts of unchecked and failed takes, read by failed-take.ts and the run's end; proved by test/e2e/run/rerolls.test.ts",
  'src/runner/fallback-steps.ts':
    "the run's side of fallbacks (reads the ledger's rejections, re-queues an item, fails one with none left); its rules are fallback.ts (mutated); proved by test/e2e/run/fallback-prompts.test.ts",
  'src/runner/failed-take.ts':
    'tells the run and its observer of a take that failed its check; proved end to end by test/e2e/run/output-checks.test.ts',
  'src/downloads/video-facts.ts':
    "reads a file's container through mp4box.js (I/O and a third-party parser); proved on real files by test/downloads/video-facts.test.ts",
  'src/runner/shared-runners.ts':
    "a runner's share of a shared ledger's work, through its claims; proved against PostgreSQL by test/e2e/shared",
  'src/runner/shared-look.ts':
    "the batch's one lister: lists, writes and reads job views through the ledger (I/O); proved against PostgreSQL by test/e2e/shared",
  'src/runner/shared-admit.ts':
    "sends a shared run's new attempts to the ledger's admission and queues what it refused (I/O); its offer and look-ahead rules are shared-runners.ts, tested by test/runner/shared-offer.test.ts; proved against PostgreSQL by test/ledger/contract-shared.test.ts and test/e2e/shared",
  'src/runner/shared-turn.ts':
    'renews leases and adopts what other runners let go, through the ledger; proved by test/e2e/shared (kill -9)',
  'src/runner/run-observer.ts': 'interfaces and an observer that does nothing; no rule to break',
  'src/runner/progress-report.ts':
    "reads the ledger's money totals and the run state for a snapshot on the wall clock (I/O); proved by the progress e2e tests",
  'src/runner/run-loop.ts':
    'the I/O shell of a run (ledger, HTTP, timers); proved end to end in test/e2e/run/',
  'src/runner/run-context.ts': 'wires the ledger, the client and the state of one run; proved end to end',
  'src/runner/run-state.ts':
    'the state holder the loop drives; its rules are in the pure files; proved end to end',
  'src/runner/submit.ts':
    'sends POSTs and records them in the ledger (I/O); its rules are budget.ts and policy.ts',
  'src/runner/watch.ts': 'lists and fetches jobs over HTTP (I/O); its timing rules are in poll-timing.ts',
  'src/runner/restore.ts':
    'reads the ledger and the output folder at start-up (I/O); proved by test/e2e/run/resume',
  'src/runner/download-queue.ts':
    'runs downloads and records them in the ledger (I/O); its checks are src/downloads/',
  'src/runner/job-outcome.ts':
    'applies policy.ts decisions to the run state and the ledger; proved end to end',
  'src/runner/provenance.ts':
    'passes ledger records to src/downloads (sidecars, kept takes), which are mutated',
  'src/runner/idempotency.ts':
    'key creation is random and the job search is HTTP; proved by the resend and import e2e tests',
  'src/runner/job-snapshot.ts': 'copies wire fields into a ledger record; proved by the ledger and e2e tests',
  'src/runner/outage-state.ts': 'pure, but without unit tests yet: proved by test/e2e/faults/network.test.ts',
  'src/runner/submit-queue.ts': 'pure, but without unit tests yet: proved by the 429 and budget e2e tests',
  'src/runner/names-in-the-way.ts':
    'reads the output folder and the ledger; its rule is src/manifest/taken-names.ts, proved by output-owner e2e',
  'src/runner/size-check.ts':
    'the I/O shell of the learnt-size check (ledger totals, the store probe); its rule is save-estimate.ts',
  'src/runner/output-sizing.ts':
    'a three-phase part of the run state; proved by test/e2e/faults/size-guess.test.ts on a real tmpfs',
  'src/runner/rename-items.ts':
    'moves a renamed item in the ledger and on disk (I/O); its pairing rule is renames.ts; proved by rename e2e',
  'src/runner/verify-saved.ts':
    'stats and hashes saved files, rewrites sidecars (I/O); proved by test/e2e/run/saved-files.test.ts',
  'src/downloads/move-saved.ts':
    'hard-links and removes real files under new names (I/O); proved by test/e2e/commands/rename.test.ts',
  'src/downloads/saved-file-check.ts':
    'stats and hashes files on disk (I/O); its words are report/file-problems.ts; proved by saved-files e2e',
  'src/runner/request-key.ts':
    'unit-tested (test/runner/request-key.test.ts), but its mutants of the hash call time out the whole unit set, more than CI can give',
  'src/runner/unsent-items.ts':
    'a part of the run state that holds rows until an attempt is prepared; proved by test/e2e/run/refused-run.test.ts',
  'src/runner/twins.ts':
    "pairs the items of a run that ask for one request from the run's context (manifest, ledger's attempts); proved by test/e2e/run/reuse-takes.test.ts (a twin waits for the fetch) and the user paths model (test/e2e/paths)",
  'src/runner/held-results.ts':
    'asks the service for a held job (GET) and records the take to fetch in the ledger (I/O); proved by test/e2e/run/reuse-takes.test.ts (an altered earlier take fetched again, never paid) and test/e2e/paths/found.test.ts',
  'src/runner/reuse-takes.ts':
    'copies saved takes on the store and records them in the ledger (I/O); proved by test/e2e/run/reuse-*.test.ts',
  'src/runner/saved-before-commit.ts':
    'reads the sidecars and files a stopped run left (I/O); proved by test/e2e/run/results-record.test.ts',
  'src/downloads/files-on-disk.ts':
    'reads sidecars and hashes the files beside them (I/O); proved by test/e2e/import/files-on-disk.test.ts and test/e2e/run/results-record.test.ts',
  'src/runner/lost-copies.ts':
    "asks the service for a copy's result and queues its download or a copy (I/O); proved by test/e2e/run/results-record.test.ts",
  'src/downloads/copy-verified.ts':
    'copies, hashes, fsyncs and links or renames real files into place (I/O); proved by test/e2e/import/files-on-disk.test.ts and test/e2e/run/reuse-takes.test.ts',
  'src/runner/definition-words.ts':
    'pure words of a shared batch whose definition differs; proved by test/e2e/shared/shared-definition.test.ts',
  'src/runner/redefined-stop.ts':
    'stops a runner whose shared batch was redefined, through the run state; proved by test/e2e/shared/shared-definition.test.ts',
  'src/downloads/save-probe.ts':
    'writes, fsyncs, renames and removes a real probe file and reads statfs (I/O); proved on a real tmpfs',
};

/** Each group must score at least the break threshold on its own (scripts/mutate.mjs). */
export const mutationGroups = {
  'downloads/': 'src/downloads/',
  'runner/': 'src/runner/',
  'money.ts': 'src/money.ts',
};

export default {
  testRunner: 'vitest',
  // The pool is the unit config's (forks: a download test sets the process umask, which worker
  // threads may not).
  vitest: { configFile: 'vitest.unit.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: mutated,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // Only mutants in changed code, or covered by changed tests, run again; the file is committed, so
  // a fresh clone (and CI) starts from the last full results. `npm run mutate` rewrites it.
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 95, low: 90, break: 90 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  timeoutMS: 10_000,
};
