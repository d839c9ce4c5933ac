/**
 * `run`'s flags: what it runs (the batch, --only, --redo, an approved --plan), how it watches and
 * saves, whom it tells when it ends; `option` names the library option a value is given as.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const RUN_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.batch,
  shared.outputDir,
  {
    name: 'poll-interval',
    option: 'pollIntervalSeconds',
    kind: 'seconds',
    value: 'SECONDS',
    default: "learned from the service's Retry-After, else 10",
    description:
      "The poll interval to assume in place of the service's Retry-After: looks at unfinished jobs are timed by how long jobs take, never more often than polling each job every SECONDS would.",
  },
  {
    name: 'no-item-lines',
    description:
      "Plain output (a pipe, a CI log): leave out the line per item event; the run's notices and a summary every five seconds, with its pace and the time left, remain. For long runs (see docs/commands.md). The live view and --progress ndjson are unchanged.",
  },
  {
    name: 'max-unsaved',
    option: 'maxUnsaved',
    kind: 'count',
    value: 'N',
    default: 'twice the concurrency',
    description:
      'The most outputs paid for and not yet saved at once: jobs unfinished at the service, and finished ones waiting for or in their download. At N the run submits nothing more until saving catches up, and its progress says so (see docs/performance.md, "Saving keeps up with paying").',
  },
  shared.sandbox(
    `Run against an embedded sandbox on a free loopback port instead of the service, with its own ledger (.mediabatch/sandbox/<name>.sqlite) and output folder (${shared.SANDBOX_OUTPUT}).`,
  ),
  shared.sandboxConfig,
  shared.json,
  {
    name: 'progress',
    value: 'FORMAT',
    choices: ['ndjson'],
    description:
      'Also write each event as one JSON object per line on stderr, for scripts and dashboards (see docs/commands.md).',
  },
  shared.regenerateExpired,
  shared.redefine,
  {
    name: 'redo',
    option: 'redo',
    multiple: true,
    variadic: true,
    value: 'ID|@FILE',
    description:
      'Generate a new take of these done items (ids, or @FILE listing them, such as the redo.txt the gallery saves; an item with variants by its id redoes every variant), preserving the earlier take as <name>.take1.mp4 (see docs/gallery.md).',
  },
  {
    name: 'only',
    option: 'only',
    multiple: true,
    variadic: true,
    value: 'ID|GLOB',
    description:
      'Run just these items: ids or globs such as "beach-*" (several after the flag, or separated by commas). An id also selects the items expanded from it (matrix and template children, <id>.<suffix>, its variants). Other items are left exactly as they are.',
  },
  shared.retryFailed,
  {
    name: 'notify',
    option: 'notify',
    value: 'URL',
    env: 'MEDIABATCH_NOTIFY_URL',
    default: "the manifest's notify.url, else none",
    description:
      'POST a JSON summary to URL when the run stops or ends, signed with MEDIABATCH_NOTIFY_SECRET; a notification that cannot be delivered never changes the outcome (see docs/overnight.md).',
  },
  {
    name: 'on-complete',
    option: 'onComplete',
    value: 'CMD',
    description:
      "Run CMD once when the run ends, with the summary as JSON on its stdin and in MEDIABATCH_* variables. CMD is split into words like a shell would, but no shell runs it: write sh -c '...' for one. Its failure is reported, not fatal (see docs/overnight.md).",
  },
  {
    name: 'plan',
    option: 'plan',
    value: 'FILE',
    description:
      'Run only the approved plan in FILE (written by plan --out): refused before any request (exit 2) when the manifest, the items, the prices the ledger knows or the ledger changed since, and never spending more than its total at most, whatever budget_usd says. Give the same --retry-failed and --regenerate-expired as the plan had; --only and --redo are refused with it.',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
