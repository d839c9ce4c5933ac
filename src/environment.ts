/**
 * Every environment variable mediabatch reads, with what it does and which commands read it, for
 * help and docs/commands.md (a table, in the bottom layer: help reads it without loading the
 * library). src/batch/resolve/settings.ts reads the library's share of them, once per batch; the
 * CLI reads only MEDIABATCH_DEBUG (and CI, NO_COLOR for how it draws).
 */
const ALL_COMMANDS = [
  'run',
  'plan',
  'status',
  'report',
  'import',
  'forget',
  'copy-ledger',
  'export',
  'sandbox',
] as const;

export const ENVIRONMENT = [
  {
    name: 'MEDIAGEN_API_KEY',
    description: "The service's API key. It is read from here only, and never stored or printed.",
    commands: ['run', 'plan', 'import', 'forget'],
  },
  {
    name: 'MEDIABATCH_HTTP_TIMEOUT',
    description:
      'Seconds to wait for any one response (default 60). A request that times out is sent again ' +
      'with the same key and body.',
    commands: ['run', 'import', 'forget'],
  },
  {
    name: 'MEDIABATCH_PREFLIGHT_SECONDS',
    description:
      'How long `run` (and `plan`, `import`, `forget`) keeps trying to reach the service before anything ' +
      'is sent (default 30); after that it stops with exit 1, nothing submitted. See docs/services.md.',
    commands: ['run', 'plan', 'import', 'forget'],
  },
  {
    name: 'MEDIABATCH_MODEL_BUSY_SECONDS',
    description:
      'For test harnesses only: seconds before a model_busy job is resubmitted (default 30, as the ' +
      'service asks). Leave it unset against the real service.',
    commands: ['run'],
  },
  {
    name: 'MEDIABATCH_NOTIFY_SECRET',
    description:
      'The key of the HMAC-SHA256 signature of every --notify POST (header X-Mediabatch-Signature, ' +
      'see docs/overnight.md). Never printed; without it notifications go unsigned.',
    commands: ['run'],
  },
  {
    name: 'MEDIABATCH_NOTIFY_SECONDS',
    description:
      'How long one notification is tried again while its receiver fails or does not answer (default 60).',
    commands: ['run'],
  },
  {
    name: 'AWS_*',
    description:
      'For an s3:// output location: credentials, region, profile and endpoint as every AWS tool reads ' +
      'them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_PROFILE, ' +
      'AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL). Never stored or printed. See docs/storage.md.',
    commands: ['run', 'plan', 'import', 'report'],
  },
  {
    name: 'MEDIABATCH_S3_ADDRESSING',
    description:
      'path or virtual: how S3 requests name the bucket. Default: path-style with a custom endpoint ' +
      '(local servers have no wildcard DNS), virtual-hosted with AWS.',
    commands: ['run', 'plan', 'import', 'report'],
  },
  {
    name: 'PG*',
    description:
      'For a postgres:// ledger: the parts its URL leaves out, as every PostgreSQL tool reads them ' +
      '(PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE). The password is never stored or ' +
      'printed. See docs/shared-ledger.md.',
    commands: ['run', 'plan', 'status', 'report', 'import', 'forget', 'copy-ledger', 'export'],
  },
  {
    name: 'MEDIABATCH_LEASE_SECONDS',
    description:
      "On a shared ledger: how long a runner's claim on an item lasts unless renewed (default 30); a " +
      "dead runner's items pass to another runner this long after it stopped renewing.",
    commands: ['run'],
  },
  {
    name: 'MEDIABATCH_LEDGER_WAIT_SECONDS',
    description:
      'On a shared ledger: how long a run waits for a lost database to answer again before it stops ' +
      'with exit 1, no item failed (default 120).',
    commands: ['run', 'import', 'forget', 'copy-ledger'],
  },
  {
    name: 'MEDIABATCH_DEBUG',
    description: 'Set to 1 to print the stack trace of an internal error.',
    commands: ALL_COMMANDS,
  },
] as const satisfies ReadonlyArray<{ name: string; description: string; commands: readonly string[] }>;
