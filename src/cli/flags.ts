/**
 * Every flag of mediabatch, declared once, beside the commands (`command-table.ts`). The parser
 * (`parse-args.ts`), the help screens (`help.ts`), `docs/commands.md` and the README's command
 * reference are all made from these tables (`npm run docs` regenerates the Markdown; a test fails
 * when it drifts). Adding a flag is one row in FLAGS; its value then appears in the command's
 * parsed values.
 */
import { ALL_COMMANDS, type CommandName } from './command-table.js';
import type { FlagKind } from './flag-kinds.js';

export interface FlagSpec {
  /** The long name, without `--`. */
  name: string;
  /** What the value is (flag-kinds.ts): the command gets it parsed and checked, as a number. */
  kind?: FlagKind;
  /** One letter for `-x`, where a convention exists (only `-h`). */
  short?: string;
  /** May be given several times; the value is then a list, in order. */
  multiple?: boolean;
  /** The flag takes a value, shown so in help (`--ledger PATH`); a flag without one is a switch. */
  value?: string;
  /**
   * The value may be left out (the flag last, or followed by another flag): it then parses as ''
   * and the command applies `default`.
   */
  optionalValue?: boolean;
  /** With `multiple`: `--flag a b c` gives all three, up to the next option. */
  variadic?: boolean;
  /** The only values accepted (checked by the parser, with a suggestion). */
  choices?: readonly string[];
  /** What applies when the flag is absent, in words (no flag here has a hidden default). */
  default?: string;
  /** The command cannot do without it (`copy-ledger --to`): missing, it is a usage error with the usage line. */
  required?: boolean;
  /** Environment variable read when the flag is absent. */
  env?: string;
  description: string;
  commands: readonly CommandName[];
}

const MANIFEST_COMMANDS = [
  'run',
  'plan',
  'status',
  'report',
  'import',
  'forget',
  'keep',
  'audit',
  'export',
] as const;

/** `--sandbox`: one switch on every command that names a batch, told per command what it does there. */
const sandbox = <const C extends readonly CommandName[]>(commands: C, description: string) =>
  ({ name: 'sandbox', description, commands }) as const;

/** Where a sandbox run's files go (placement.ts): beside the real folder, never inside it. */
const SANDBOX_OUTPUT =
  "out/<name> becomes out/sandbox/<name>, output.dir out becomes sandbox/out: output.dir's last folder moves into a sandbox folder beside it";

export const FLAGS = [
  {
    name: 'base-url',
    value: 'URL',
    env: 'MEDIAGEN_BASE_URL',
    description: "The service's base URL, ending in /v1.",
    commands: ['run', 'plan', 'import', 'forget', 'keep', 'audit'],
  },
  {
    name: 'ledger',
    value: 'PATH|URL',
    default: '.mediabatch/<name>.sqlite beside the manifest',
    description: 'Every attempt, job, charge and saved file: a file, or a postgres:// URL runners share.',
    commands: MANIFEST_COMMANDS,
  },
  {
    name: 'ledger',
    value: 'PATH|URL',
    default: '.mediabatch/<name>.sqlite beside the manifest',
    description: 'The ledger to copy from: a file, or a postgres:// URL. It is only read.',
    commands: ['copy-ledger'],
  },
  {
    name: 'to',
    value: 'PATH|URL',
    required: true,
    description:
      'Required: the ledger to copy into, a file or a postgres:// URL (its password, or PGPASSWORD, is never printed). It must record nothing of the batch yet; a new file is created. A file must be new or a SQLite ledger: never the manifest, the ledger copied from, a file beside a ledger or anything in an output folder (see docs/results.md, "The door for named files").',
    commands: ['copy-ledger'],
  },
  {
    name: 'batch',
    value: 'NAME',
    description:
      'In place of <manifest>: the shared batch NAME as its ledger (--ledger postgres://...) defines it, its current revision, on a machine with no copy of the manifest. A batch gets its definition when it is first run with its manifest on that ledger (see docs/shared-ledger.md, "Adding a machine").',
    commands: ['run', 'plan', 'status'],
  },
  {
    name: 'output-dir',
    value: 'DIR',
    description:
      "With --batch, required when the batch saves to a folder: where that folder, shared with the batch's other runners, is on this machine; a path ending in the batch's output.dir, which is relative to the manifest's folder (out/shots is found at /mnt/render/out/shots, say). Left out for an s3:// output.",
    commands: ['run', 'plan', 'status'],
  },
  {
    name: 'poll-interval',
    kind: 'seconds',
    value: 'SECONDS',
    default: "learned from the service's Retry-After, else 10",
    description:
      "The poll interval to assume in place of the service's Retry-After: looks at unfinished jobs are timed by how long jobs take, never more often than polling each job every SECONDS would.",
    commands: ['run'],
  },
  sandbox(
    ['run'],
    `Run against an embedded sandbox on a free loopback port instead of the service, with its own ledger (.mediabatch/sandbox/<name>.sqlite) and output folder (${SANDBOX_OUTPUT}).`,
  ),
  sandbox(
    ['import', 'forget', 'audit'],
    `Work against the embedded sandbox that \`run --sandbox\` uses (its saved jobs beside the sandbox ledger), on that ledger (.mediabatch/sandbox/<name>.sqlite) and output folder (${SANDBOX_OUTPUT}).`,
  ),
  {
    name: 'sandbox-config',
    value: 'FILE',
    default: 'the demo settings',
    description:
      "With --sandbox: a YAML or JSON sandbox configuration for the embedded sandbox, as `mediabatch sandbox --config` takes (docs/sandbox.md): its workspace's concurrency limit, prices, job durations, faults. Give the same file to each command that starts it (run, import, forget, audit): its jobs are kept beside the sandbox ledger.",
    commands: ['run', 'import', 'forget', 'audit'],
  },
  sandbox(['keep'], 'Keep takes of `run --sandbox`, in its ledger and output folder; no sandbox is started.'),
  sandbox(
    ['plan', 'status', 'report', 'export'],
    `Read the ledger and output folder that \`run --sandbox\` writes (.mediabatch/sandbox/<name>.sqlite; ${SANDBOX_OUTPUT}) instead of the real ones; no sandbox is started.`,
  ),
  {
    name: 'json',
    description: 'Print one JSON document on stdout instead of text.',
    commands: ['run', 'plan', 'status', 'import', 'audit'],
  },
  {
    name: 'progress',
    value: 'FORMAT',
    choices: ['ndjson'],
    description:
      'Also write each event as one JSON object per line on stderr, for scripts and dashboards (see docs/commands.md).',
    commands: ['run'],
  },
  {
    name: 'regenerate-expired',
    description:
      'Pay again for items whose output the service no longer holds: expired before it could be saved, or saved, then deleted or altered on disk. With plan: show what that would submit and cost.',
    commands: ['run', 'plan'],
  },
  {
    name: 'redefine',
    description:
      "With a shared (postgres://) ledger: where the manifest is not the batch's definition, make it the batch's next revision (its budget binds every runner; runners still on the old one stop submitting) instead of refusing the run. With plan: show what would change. See docs/shared-ledger.md.",
    commands: ['run', 'plan'],
  },
  {
    name: 'verify',
    description:
      "Check each saved file's content by its SHA-256 (a read of every file), not only its size and modification time (a stat each, the default); files missing or altered are listed either way.",
    commands: ['plan', 'status'],
  },
  {
    name: 'redo',
    multiple: true,
    variadic: true,
    value: 'ID|@FILE',
    description:
      'Generate a new take of these done items (ids, or @FILE listing them, such as the redo.txt the gallery saves; an item with variants by its id redoes every variant), preserving the earlier take as <name>.take1.mp4 (see docs/gallery.md).',
    commands: ['run'],
  },
  {
    name: 'only',
    multiple: true,
    variadic: true,
    value: 'ID|GLOB',
    description:
      'Run just these items: ids or globs such as "beach-*" (several after the flag, or separated by commas). An id also selects the items expanded from it (matrix and template children, <id>.<suffix>, its variants). Other items are left exactly as they are.',
    commands: ['run'],
  },
  {
    name: 'retry-failed',
    description:
      'Also submit again items that failed for a final reason (content_rejected, a 400 code), with a new key and within the budget; says how many and what they may cost first. With plan: show what that would submit and cost.',
    commands: ['run', 'plan'],
  },
  {
    name: 'notify',
    value: 'URL',
    env: 'MEDIABATCH_NOTIFY_URL',
    default: "the manifest's notify.url, else none",
    description:
      'POST a JSON summary to URL when the run stops or ends, signed with MEDIABATCH_NOTIFY_SECRET; a notification that cannot be delivered never changes the outcome (see docs/overnight.md).',
    commands: ['run'],
  },
  {
    name: 'on-complete',
    value: 'CMD',
    description:
      "Run CMD once when the run ends, with the summary as JSON on its stdin and in MEDIABATCH_* variables. CMD is split into words like a shell would, but no shell runs it: write sh -c '...' for one. Its failure is reported, not fatal (see docs/overnight.md).",
    commands: ['run'],
  },
  {
    name: 'since',
    kind: 'duration',
    value: 'DURATION',
    default: '48h, how long the service keeps outputs',
    description: 'How far back to look for jobs: minutes, hours or days, as in 90m, 6h or 2d.',
    commands: ['import'],
  },
  {
    name: 'files-from',
    multiple: true,
    value: 'DIR',
    default: 'the output folder only',
    description:
      'Also look in DIR (and its subfolders) for outputs moved out of the output folder: a file whose sidecar names a job being imported and whose bytes match the SHA-256 it records is copied back under its name in the output folder, never over another file, and recorded as saved. Give it again for more folders (see docs/import.md).',
    commands: ['import'],
  },
  {
    name: 'html',
    value: 'FILE',
    optionalValue: true,
    default: '<output dir>/index.html when FILE is left out',
    description:
      'Write the gallery, a self-contained HTML page with the videos, to FILE instead of printing text (see docs/gallery.md). For an s3:// output location, FILE may be s3://BUCKET/KEY.html below it, to review from the bucket.',
    commands: ['report'],
  },
  {
    name: 'url-lifetime',
    kind: 'lifetime',
    value: 'DURATION',
    default: '7d, the longest a presigned URL can live',
    description:
      'With --html and an s3:// output location: how long the presigned links to the videos (and to a page written to the bucket) work, from 1m to 7d, as in 90m, 12h or 2d. The page says when they expire.',
    commands: ['report'],
  },
  {
    name: 'format',
    value: 'FORMAT',
    choices: ['jsonl', 'csv'],
    default: 'jsonl',
    description:
      'jsonl: one JSON object per line. csv: a header row, then one row per item; vars, input and files are JSON text in their cell.',
    commands: ['export'],
  },
  {
    name: 'state',
    multiple: true,
    value: 'STATE',
    choices: [
      'pending',
      'in_flight',
      'done',
      'failed',
      'checks_failed',
      'budget_exceeded',
      'expired',
      'removed',
    ],
    default: 'every item',
    description:
      'Only items in this state; give it again for more states (--state done --state failed). removed: the paid items the manifest no longer names, whatever their state; the other states select manifest items only.',
    commands: ['export'],
  },
  {
    name: 'kept',
    description:
      'One record per manifest item instead: its kept take (mediabatch keep; an item with one variant and one take keeps it), with files, SHA-256, variant, take and cost. Items without one are counted on stderr. A keeper the manifest no longer asks for (variants lowered, item removed) is written with in_manifest false. Each kept file is read and compared with its SHA-256: one missing or altered is named on stderr and the exit code is 1.',
    commands: ['export'],
  },
  {
    name: 'out',
    value: 'FILE',
    default: 'stdout',
    description:
      'Write to FILE instead: a temporary file beside it, renamed over it once complete. FILE is new or an export mediabatch wrote (else see --force); never the manifest, a ledger or anything in an output folder (see docs/results.md, "The door for named files").',
    commands: ['export'],
  },
  {
    name: 'out',
    value: 'FILE',
    description:
      "Also write the plan as an approved plan to FILE: plain JSON with every item's request hash and expected price, the total at most, the manifest's hash, the ledger's money it was made against, and a plan_sha256 a reviewer quotes. Run it with run --plan FILE (see docs/audit.md). A plan without an upper bound (an item without max_cost_usd, and no budget_usd) is refused. FILE is new or an approved plan mediabatch wrote (else see --force); never the manifest, a ledger or anything in an output folder (see docs/results.md, \"The door for named files\").",
    commands: ['plan'],
  },
  {
    name: 'plan',
    value: 'FILE',
    description:
      'Run only the approved plan in FILE (written by plan --out): refused before any request (exit 2) when the manifest, the items, the prices the ledger knows or the ledger changed since, and never spending more than its total at most, whatever budget_usd says. Give the same --retry-failed and --regenerate-expired as the plan had; --only and --redo are refused with it.',
    commands: ['run'],
  },
  {
    name: 'out',
    value: 'DIR',
    description:
      "Also write a dispute bundle into DIR, a new or empty folder (an earlier bundle only with --force; never an output folder or anything in one): problems.csv (job ids, idempotency keys, request ids, times, amounts, status, error code), audit.json, and for each job of a problem its JSON as the service returned it, the ledger's record of it and its sidecars. The API key is in none of them.",
    commands: ['audit'],
  },
  {
    name: 'force',
    description:
      'With --html: replace FILE even when it is not a gallery mediabatch wrote. The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
    commands: ['report'],
  },
  {
    name: 'force',
    description:
      'With --out: replace FILE even when it is not an approved plan mediabatch wrote (one it wrote is replaced without --force). The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
    commands: ['plan'],
  },
  {
    name: 'force',
    description:
      'With --out: replace FILE even when it is not an export mediabatch wrote (one it wrote is replaced without --force). The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
    commands: ['export'],
  },
  {
    name: 'force',
    description:
      'With --out: replace a dispute bundle audit wrote before in DIR, whole. A folder of other files, a file, and anything protected (see docs/results.md, "The door for named files") are refused all the same.',
    commands: ['audit'],
  },
  {
    name: 'port',
    kind: 'port',
    value: 'N',
    default: '4010',
    description: 'The loopback port to listen on; 0 picks a free one.',
    commands: ['sandbox'],
  },
  {
    name: 'config',
    value: 'FILE',
    default: 'the demo settings',
    description: 'A YAML or JSON sandbox configuration (see docs/sandbox.md).',
    commands: ['sandbox'],
  },
  {
    name: 'state',
    value: 'FILE',
    default: 'none: everything is forgotten when the sandbox stops',
    description: 'Keep jobs, keys and wallets in FILE, so a restarted sandbox knows its old jobs.',
    commands: ['sandbox'],
  },
  {
    name: 'help',
    short: 'h',
    description: 'Show this help.',
    commands: ALL_COMMANDS,
  },
] as const satisfies readonly FlagSpec[];

/** The rows of FLAGS that list command C. */
type FlagsOf<C extends CommandName, F = (typeof FLAGS)[number]> = F extends { commands: readonly (infer K)[] }
  ? C extends K
    ? F
    : never
  : never;
type ValueOf<F> = F extends { multiple: true }
  ? string[]
  : F extends { required: true }
    ? string
    : F extends { value: string }
      ? F extends { kind: FlagKind }
        ? number | undefined
        : string | undefined
      : boolean;

/** The parsed flags of one command: booleans default to false, repeatable flags to []. */
export type FlagValues<C extends CommandName> = { [F in FlagsOf<C> as F['name']]: ValueOf<F> };

export function flagsOf(command: string): FlagSpec[] {
  return (FLAGS as readonly FlagSpec[]).filter((flag) =>
    (flag.commands as readonly string[]).includes(command),
  );
}
