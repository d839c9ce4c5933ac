/**
 * The flags several commands take, each declared once: a command's table (`commands/<name>-flags.ts`)
 * lists those it takes beside its own. The flags that name a batch (`--ledger`, `--sandbox`,
 * `--base-url`, `--batch`, `--output-dir`) become library options in `batch-options.ts`.
 */
import type { FlagRow } from './flag-row.js';

/** Where a sandbox run's files go (placement.ts): beside the real folder, never inside it. */
export const SANDBOX_OUTPUT =
  "out/<name> becomes out/sandbox/<name>, output.dir out becomes sandbox/out: output.dir's last folder moves into a sandbox folder beside it";

export const baseUrl = {
  name: 'base-url',
  value: 'URL',
  env: 'MEDIAGEN_BASE_URL',
  description: "The service's base URL, ending in /v1.",
} as const satisfies FlagRow;

export const ledger = {
  name: 'ledger',
  value: 'PATH|URL',
  default: '.mediabatch/<name>.sqlite beside the manifest',
  description: 'Every attempt, job, charge and saved file: a file, or a postgres:// URL runners share.',
} as const satisfies FlagRow;

export const batch = {
  name: 'batch',
  value: 'NAME',
  description:
    'In place of <manifest>: the shared batch NAME as its ledger (--ledger postgres://...) defines it, its current revision, on a machine with no copy of the manifest. A batch gets its definition when it is first run with its manifest on that ledger (see docs/shared-ledger.md, "Adding a machine").',
} as const satisfies FlagRow;

export const outputDir = {
  name: 'output-dir',
  value: 'DIR',
  description:
    "With --batch, required when the batch saves to a folder: where that folder, shared with the batch's other runners, is on this machine; a path ending in the batch's output.dir, which is relative to the manifest's folder (out/shots is found at /mnt/render/out/shots, say). Left out for an s3:// output.",
} as const satisfies FlagRow;

/** `--sandbox`: one switch on every command that names a batch, told per command what it does there. */
export const sandbox = <const D extends string>(description: D) =>
  ({ name: 'sandbox', description }) as const;

/** `--sandbox` of the commands that start the embedded sandbox after `run` (import, forget, audit). */
export const sandboxStarted = sandbox(
  `Work against the embedded sandbox that \`run --sandbox\` uses (its saved jobs beside the sandbox ledger), on that ledger (.mediabatch/sandbox/<name>.sqlite) and output folder (${SANDBOX_OUTPUT}).`,
);

/** `--sandbox` of the commands that only read what `run --sandbox` wrote. */
export const sandboxRead = sandbox(
  `Read the ledger and output folder that \`run --sandbox\` writes (.mediabatch/sandbox/<name>.sqlite; ${SANDBOX_OUTPUT}) instead of the real ones; no sandbox is started.`,
);

export const sandboxConfig = {
  name: 'sandbox-config',
  value: 'FILE',
  default: 'the demo settings',
  description:
    "With --sandbox: a YAML or JSON sandbox configuration for the embedded sandbox, as `mediabatch sandbox --config` takes (docs/sandbox.md): its workspace's concurrency limit, prices, job durations, faults. Give the same file to each command that starts it (run, import, forget, audit): its jobs are kept beside the sandbox ledger.",
} as const satisfies FlagRow;

export const json = {
  name: 'json',
  description: 'Print one JSON document on stdout instead of text.',
} as const satisfies FlagRow;

/** run's flags that change what it pays for, which plan previews. */
export const regenerateExpired = {
  name: 'regenerate-expired',
  option: 'regenerateExpired',
  description:
    'Pay again for items whose output the service no longer holds: expired before it could be saved, or saved, then deleted or altered on disk. With plan: show what that would submit and cost.',
} as const satisfies FlagRow;

export const redefine = {
  name: 'redefine',
  option: 'redefine',
  description:
    "With a shared (postgres://) ledger: where the manifest is not the batch's definition, make it the batch's next revision (its budget binds every runner; runners still on the old one stop submitting) instead of refusing the run. With plan: show what would change. See docs/shared-ledger.md.",
} as const satisfies FlagRow;

export const retryFailed = {
  name: 'retry-failed',
  option: 'retryFailed',
  description:
    'Also submit again items that failed for a final reason (content_rejected, a 400 code), with a new key and within the budget; says how many and what they may cost first. With plan: show what that would submit and cost.',
} as const satisfies FlagRow;

/** The text forms of `plan` and `status` (docs/commands.md, "Summaries"). */
export const summary = {
  name: 'summary',
  description:
    'Print counts, money and problems with a few examples of each, not a line per item (the default above 1,000 items; see docs/commands.md, "Summaries").',
} as const satisfies FlagRow;

export const full = {
  name: 'full',
  description:
    'Print a line for every item however large the batch (above 1,000 items the default is the summary).',
} as const satisfies FlagRow;

export const verify = {
  name: 'verify',
  option: 'verify',
  description:
    "Check each saved file's content by its SHA-256 (a read of every file), not only its size and modification time (a stat each, the default); files missing or altered are listed either way.",
} as const satisfies FlagRow;

export const help = {
  name: 'help',
  short: 'h',
  description: 'Show this help.',
} as const satisfies FlagRow;
