import type { ExitCode } from '../exit-codes.js';

/** An exit code by its name in `ExitCode` (exit-codes.ts). */
export type ExitName = keyof typeof ExitCode;

/** Every command of mediabatch, declared once (see `flags.ts` for how the tables are used). */
export interface CommandSpec {
  name: string;
  /** Positional arguments, in order; all are required. */
  args: readonly string[];
  /** Any number of further positionals of this kind may follow (`forget <manifest> [id...]`). */
  rest?: string;
  /** At least one of `rest` must be given (`keep <manifest> <ID:VARIANT[.TAKE]>...`). */
  restRequired?: boolean;
  /** A flag that stands in for the positionals (`run --batch NAME`, no manifest). */
  orFlag?: string;
  summary: string;
  description: string;
  /**
   * What a refusal before the command starts (a broken manifest, a shared batch's definition that
   * cannot be read) left undone, in its words: only `run` and `import` could have paid or changed
   * anything, and a command that never submits does not say that nothing was submitted.
   */
  undone: string;
  /**
   * The exit codes the command can end with, which its help lists (the main help lists them all).
   * Every command can end with Usage (2) and Internal (70); only those that handle Ctrl-C end with
   * Interrupted (130).
   */
  exits: readonly ExitName[];
  /**
   * One or two command lines that work as pasted, in a folder holding batch.yaml (its items include
   * `beach`), with what each does; test/e2e/cli/help-examples.test.ts runs every one against the
   * sandbox.
   */
  examples: ReadonlyArray<readonly [command: string, what: string]>;
}

export const COMMANDS = [
  {
    name: 'run',
    args: ['manifest'],
    orFlag: 'batch',
    undone: 'nothing was submitted',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Internal', 'Interrupted'],
    examples: [
      [
        'mediabatch run batch.yaml --sandbox',
        'try the manifest on the embedded sandbox: nothing is paid, and its files go to a sandbox folder',
      ],
      [
        'mediabatch run batch.yaml',
        'generate every item on the service (export MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY first); run it again to resume',
      ],
    ],
    summary: 'Generate every item of a manifest, resumably and within budget',
    description:
      'Submits each item once, follows the jobs and saves every video before the service deletes it. It can be stopped and started again at any moment: nothing is paid twice, and budget_usd holds across runs. Before it spends anything it prints the same one-line summary as `plan` (with its own --only, --redo and --retry-failed). When its output is closed (a pipe into `head`), it keeps running and saving to the end, and what it would print is dropped.',
  },
  {
    name: 'plan',
    args: ['manifest'],
    orFlag: 'batch',
    undone: 'run would refuse it too, and submit nothing',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Internal'],
    examples: [
      [
        'mediabatch plan batch.yaml',
        'what run would submit and what it may cost, from the manifest and the ledger',
      ],
      [
        'mediabatch plan batch.yaml --out plan.json',
        'the same, kept as an approved plan: run it with mediabatch run batch.yaml --plan plan.json',
      ],
    ],
    summary: 'Show what `run` would do and cost, without submitting anything',
    description:
      "Compares the manifest with the ledger: items that are new, changed (and which fields), done, to retry or to resume; items removed from the manifest and the files they left; files in the output folder this ledger did not write; and a cost estimate. Like `run`, it refuses (exit 2) an output folder another batch owns, and a folder that cannot take a file or has no room for the next wave (it probes the folder as run does, and removes what the probe made). With --base-url (or MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY set) it first makes run's own checks (the ledger's service, GET /account, a lost ledger) and refuses what run would refuse, with the same exit code; it never sends a POST.",
  },
  {
    name: 'status',
    args: ['manifest'],
    orFlag: 'batch',
    undone: 'no status can be shown; nothing was changed',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Internal'],
    examples: [
      ['mediabatch status batch.yaml', "each item's state, cost and files, from the ledger"],
      [
        'mediabatch status batch.yaml --sandbox --json',
        "the same for the sandbox's ledger, as one JSON document",
      ],
    ],
    summary: "Show each item's state, cost and files from the ledger",
    description: 'Reads the ledger only; it never contacts the service and works while a run is going on.',
  },
  {
    name: 'report',
    args: ['manifest'],
    undone: 'no report was made',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Internal'],
    examples: [
      ['mediabatch report batch.yaml', 'every attempt of every item, as text'],
      ['mediabatch report batch.yaml --html', 'the gallery page, written to index.html in the output folder'],
    ],
    summary: 'Print every attempt of every item, or write an HTML report',
    description:
      'Lists each item with its attempts, jobs, costs and saved files. With --html it writes one self-contained page instead, with the videos playable in place.',
  },
  {
    name: 'import',
    args: ['manifest'],
    undone: 'nothing was imported',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Internal'],
    examples: [
      ['mediabatch import batch.yaml', "rebuild a lost ledger from the service's jobs of the last 48 hours"],
      [
        'mediabatch import batch.yaml --sandbox',
        "the same for the sandbox's ledger, from the jobs the embedded sandbox keeps",
      ],
    ],
    summary: 'Rebuild a lost ledger from the jobs the service still holds',
    description:
      'Lists the jobs of the last 48 hours (or --since), matches them to items by their mediabatch metadata and request, adopts the best job per item (succeeded first), records every job of the manifest in a new ledger so spend and budget stay right, and saves the outputs still available. A later `run` submits only what is missing. `docs/import.md` explains what it matches.',
  },
  {
    name: 'forget',
    args: ['manifest'],
    rest: 'id',
    undone: 'nothing was forgotten',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Internal'],
    examples: [
      [
        'mediabatch forget batch.yaml',
        'ask the service about every job in flight; give up those it no longer knows',
      ],
    ],
    summary: 'Give up on jobs the service no longer knows, so their items can be paid for again',
    description:
      'For each job in flight of the items named (all in flight when none is named), asks the service GET /jobs/{id}: only a job it answers 404 job_not_found is marked lost in the ledger, with what it cost, and its item goes back to pending. Any other answer leaves the job as it is, and says why. The next `run` says which items it pays for again, and how much at most. See `docs/troubleshooting.md`.',
  },
  {
    name: 'keep',
    args: ['manifest'],
    rest: 'ID:VARIANT[.TAKE]',
    restRequired: true,
    undone: 'nothing was kept',
    exits: ['Ok', 'Usage', 'Refused', 'Internal'],
    examples: [
      ['mediabatch keep batch.yaml beach:1', 'keep the newest saved take of item beach (its variant 1)'],
      ['mediabatch keep batch.yaml beach:none', 'no keeper for beach any more'],
    ],
    summary: 'Record which take of each item is kept; sends nothing',
    description:
      "ID:N keeps variant N's newest saved take (1 for an item without variants), ID:N.T its take T, ID:none clears it; @FILE reads entries from a file such as the keep.txt the gallery saves. All or nothing: a bad entry writes nothing. status, export and the sidecars then say which file is kept. See docs/gallery.md.",
  },
  {
    name: 'audit',
    args: ['manifest'],
    undone: 'nothing was audited',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Unreconciled', 'Internal'],
    examples: [
      ['mediabatch audit batch.yaml', "compare the service's charges and refunds with the ledger"],
      [
        'mediabatch audit batch.yaml --out dispute',
        'the same, and a dispute bundle in the new folder dispute',
      ],
    ],
    summary: "Check the service's charges and refunds against the ledger; sends no POST",
    description:
      "Reads every job of the batch back from the service (GET /jobs/{id} for each job the ledger knows, the job list for jobs with the manifest's metadata it does not) and compares: a failed or canceled job not refunded in full, a job charged more than its max_cost_usd, a job only the service or only the ledger knows, and the net spend of each to the micro-dollar. Jobs of other clients of the workspace are counted apart. Exits 0 when everything agrees, 4 when something is owed or unexplained; --out DIR writes a dispute bundle. It records the audit in the ledger and changes nothing else. See docs/audit.md.",
  },
  {
    name: 'copy-ledger',
    args: ['manifest'],
    undone: 'nothing was copied',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Refused', 'Internal'],
    examples: [
      [
        'mediabatch copy-ledger batch.yaml --to copy.sqlite',
        "the batch's whole record into a new SQLite file (or a postgres:// URL runners share)",
      ],
    ],
    summary: "Copy a batch's ledger, whole, between SQLite and PostgreSQL",
    description:
      "Copies everything the ledger records of the manifest's batch (items, attempts, jobs, charges, saved files and takes, events, runs) from its ledger (--ledger, default the usual file) to --to: a file, or a postgres:// URL of a database several runners share, and back. The source is only read. It refuses, writing nothing, while a run holds either ledger, when the source has no such batch, and when the target already records items of it; the copy is one transaction, so it is there whole or not at all. Passwords are never printed. See docs/shared-ledger.md.",
  },
  {
    name: 'export',
    args: ['manifest'],
    undone: 'nothing was exported',
    exits: ['Ok', 'ItemsNotDone', 'Usage', 'Internal'],
    examples: [
      ['mediabatch export batch.yaml --format csv --out items.csv', 'one row per item, written to items.csv'],
      ['mediabatch export batch.yaml --kept', 'the kept take of each item, as JSON Lines on stdout'],
    ],
    summary: 'Write one record per item (prompt, variables, job, cost, files) for pipelines',
    description:
      'Streams one record per item, in manifest order, as JSON Lines or CSV: id, state, the prompt as sent, its variables, input, model, job id, attempts, net cost, files with their SHA-256 and size, completion and expiry times, the error code, and whether the manifest still names the item: items the ledger paid for that it no longer names come last, so the net costs add up to what was spent. Reads the ledger only. `docs/results.md` shows it feeding a script.',
  },
  {
    name: 'sandbox',
    args: [],
    undone: 'no sandbox was started',
    exits: ['Ok', 'Usage', 'Internal', 'Interrupted'],
    examples: [
      [
        'mediabatch sandbox --port 0',
        'serve the emulator on a free port; it prints the address and key to export (Ctrl-C stops it)',
      ],
      [
        'mediabatch sandbox --port 0 --state sandbox.json',
        'the same, keeping its jobs in sandbox.json for the next start',
      ],
    ],
    summary: 'Serve a local emulator of the video service',
    description:
      'Starts an offline stand-in for the service on 127.0.0.1 and prints the base URL and API key to export. Ctrl-C stops it. `docs/sandbox.md` describes the configuration file.',
  },
] as const satisfies readonly CommandSpec[];

export type CommandName = (typeof COMMANDS)[number]['name'];

export const ALL_COMMANDS: readonly CommandName[] = COMMANDS.map((command) => command.name);

export function commandSpec(name: string): CommandSpec | undefined {
  return (COMMANDS as readonly CommandSpec[]).find((command) => command.name === name);
}
