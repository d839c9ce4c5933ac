import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { formatUsd, parseUsd } from '../money.js';
import { durationShape, queuedShape } from './durations.js';

/** The demo key is fixed so that users can export it once and keep it across sandbox restarts. */
export const DEMO_API_KEY = 'mg_demo_0000000000000000000000000000';
export const DEMO_WORKSPACE = 'ws_demo';

/**
 * YAML numbers are accepted for convenience, but they are turned into a decimal string at once
 * and parsed into integer micro-dollars, so no arithmetic ever happens on a float.
 */
const usd = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const micros = parseUsd(String(value));
  if (micros === null) {
    ctx.addIssue({ code: 'custom', message: 'expected a decimal amount with at most six decimal places' });
    return z.NEVER;
  }
  return formatUsd(micros);
});

const rate = z.number().min(0).max(1);
const seconds = z.number().min(0);
const range = z
  .strictObject({ min: seconds, max: seconds })
  .refine((value) => value.min <= value.max, 'min must not exceed max');
const codeRates = z
  .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'error codes are lower_snake_case'), rate)
  .refine(
    (rates) => Object.values(rates).reduce((sum, value) => sum + value, 0) <= 1,
    'rates add up to more than 1',
  );

const keySchema = z.strictObject({
  key: z.string().regex(/^mg_[A-Za-z0-9_-]{8,200}$/, 'API keys start with mg_ followed by 8+ characters'),
  id: z.number().int().min(1),
  workspace: z.string().min(1),
  revoked: z.boolean().default(false),
});

const workspaceSchema = z.strictObject({
  id: z.string().min(1),
  balance_usd: usd,
  wallet_enabled: z.boolean().default(true),
  concurrency_limit: z.number().int().min(0).default(3),
});

const faultsSchema = z.strictObject({
  /** Jobs accepted as queued that later end failed with the code (or `canceled`). */
  job_failures: codeRates.default({}),
  /** Jobs answered 202 already failed (rejected by the provider at submission). */
  submit_failures: codeRates.default({}),
  /** Failed or canceled jobs left charged: their refund never comes (the spec's refund rule broken). */
  refund_missing: rate.default(0),
  http500_before_store: rate.default(0),
  http500_after_store: rate.default(0),
  drop_before_store: rate.default(0),
  drop_after_store: rate.default(0),
  download_cut: rate.default(0),
  /** Downloads whose Content-Length disagrees with the whole body they send (half short, half long). */
  download_wrong_length: rate.default(0),
  /** Succeeded jobs whose clip is half as long as asked (docs/sandbox.md), of the wrong size, cut short. */
  short_clip: rate.default(0),
  wrong_size: rate.default(0),
  truncated_file: rate.default(0),
  latency_ms: range.default({ min: 0, max: 0 }),
  download_bytes_per_second: z.number().positive().optional(),
});

const inputRulesSchema = z.strictObject({
  seconds: z
    .strictObject({
      min: z.number().int().min(1).default(1),
      max: z.number().int().min(1).default(20),
      default: z.number().int().min(1).default(5),
    })
    .default({ min: 1, max: 20, default: 5 }),
  definitions: z
    .array(z.string().regex(/^[0-9]+p$/))
    .min(1)
    .default(['480p', '720p', '1080p']),
  default_definition: z.string().default('720p'),
  orientations: z
    .array(z.string().regex(/^[0-9]+:[0-9]+$/))
    .min(1)
    .default(['16:9', '9:16', '1:1']),
  /** Input fields beyond prompt/seconds/definition/orientation: the real set is not published. */
  unknown_fields: z.enum(['accept', 'reject']).default('accept'),
});

const DEFAULT_PRICES = { '480p': '0.020000', '720p': '0.050000', '1080p': '0.100000' };

const configShape = z.strictObject({
  seed: z.union([z.number(), z.string()]).default(1),
  keys: z
    .array(keySchema)
    .min(1)
    .default([{ key: DEMO_API_KEY, id: 1, workspace: DEMO_WORKSPACE, revoked: false }]),
  workspaces: z
    .array(workspaceSchema)
    .min(1)
    .default([{ id: DEMO_WORKSPACE, balance_usd: '100.000000', wallet_enabled: true, concurrency_limit: 3 }]),
  models: z.array(z.string().min(1)).min(1).default(['acme-video-2', 'acme-video-3']),
  prices: z
    .strictObject({ per_second_usd: z.record(z.string(), usd) })
    .default({ per_second_usd: DEFAULT_PRICES }),
  input: inputRulesSchema.default(inputRulesSchema.parse({})),
  unknown_body_fields: z.enum(['accept', 'reject']).default('reject'),
  /** A number, a range, a lognormal or a mix of populations (durations.ts). */
  queued_seconds: queuedShape.default(1),
  running_seconds: durationShape.default({ min: 3, max: 8 }),
  job_timeout_seconds: z.number().positive().default(1800),
  retention_seconds: z
    .number()
    .positive()
    .default(48 * 3600),
  url_lifetime_seconds: z.number().positive().default(3600),
  retry_after_seconds: z.number().positive().default(10),
  /** The service may forget an Idempotency-Key after a day: a resend after that is a new job. */
  idempotency_ttl_seconds: z
    .number()
    .positive()
    .default(24 * 3600),
  /**
   * Pads every output to this many bytes (inside a trailing `free` box, still playable), for tests
   * and benchmarks of large files; default: the clip's own size (a few KB).
   */
  output_bytes: z
    .number()
    .int()
    .min(4096)
    .max(1024 * 1024 * 1024)
    .optional(),
  /** Pages shorter than `limit`, as some implementations return. */
  page_size_cap: z.number().int().min(1).optional(),
  faults: faultsSchema.default(faultsSchema.parse({})),
});

type CheckedConfig = z.output<typeof configShape>;
type CrossCheck = (config: CheckedConfig, ctx: z.RefinementCtx) => void;

const addIssue = (ctx: z.RefinementCtx, path: PropertyKey[], message: string) =>
  ctx.addIssue({ code: 'custom', path, message });

const uniqueWorkspaces: CrossCheck = (config, ctx) => {
  const seen = new Set<string>();
  config.workspaces.forEach((workspace, index) => {
    if (seen.has(workspace.id)) addIssue(ctx, ['workspaces', index, 'id'], 'duplicate workspace id');
    seen.add(workspace.id);
  });
};

const keysOfKnownWorkspaces: CrossCheck = (config, ctx) => {
  const workspaceIds = new Set(config.workspaces.map((workspace) => workspace.id));
  const keyIds = new Set<number>();
  const keyTexts = new Set<string>();
  config.keys.forEach((key, index) => {
    if (!workspaceIds.has(key.workspace)) addIssue(ctx, ['keys', index, 'workspace'], 'no such workspace');
    if (keyIds.has(key.id)) addIssue(ctx, ['keys', index, 'id'], 'duplicate key id');
    if (keyTexts.has(key.key)) addIssue(ctx, ['keys', index, 'key'], 'duplicate key');
    keyIds.add(key.id);
    keyTexts.add(key.key);
  });
};

const secondsInOrder: CrossCheck = ({ input: { seconds } }, ctx) => {
  if (seconds.min > seconds.max) addIssue(ctx, ['input', 'seconds'], 'min must not exceed max');
  if (seconds.default < seconds.min || seconds.default > seconds.max) {
    addIssue(ctx, ['input', 'seconds', 'default'], 'outside min..max');
  }
};

const definitionsPriced: CrossCheck = ({ input, prices }, ctx) => {
  if (!input.definitions.includes(input.default_definition)) {
    addIssue(ctx, ['input', 'default_definition'], 'not in input.definitions');
  }
  for (const definition of input.definitions) {
    if (prices.per_second_usd[definition] === undefined) {
      addIssue(ctx, ['prices', 'per_second_usd', definition], 'missing price');
    }
  }
};

/**
 * Rules between settings, in this order: only the first issue is shown (describeConfigIssue), so
 * the order decides which mistake a config with several is answered with.
 */
const CROSS_CHECKS: readonly CrossCheck[] = [
  uniqueWorkspaces,
  keysOfKnownWorkspaces,
  secondsInOrder,
  definitionsPriced,
];

export const sandboxConfigSchema = configShape.superRefine((config, ctx) => {
  for (const check of CROSS_CHECKS) check(config, ctx);
});

export type SandboxConfigInput = z.input<typeof sandboxConfigSchema>;
export type SandboxConfig = z.output<typeof sandboxConfigSchema>;

/** Names the first offending field the way a user wrote it: `workspaces[0].balance_usd`. */
export function describeConfigIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid config';
  const path = issue.path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
  return `${path || '(root)'}: ${issue.message}`;
}

export function parseSandboxConfig(input: unknown, source = 'sandbox config'): SandboxConfig {
  const parsed = sandboxConfigSchema.safeParse(input ?? {});
  if (!parsed.success) throw new UserError(`${source}: ${describeConfigIssue(parsed.error)}`);
  return parsed.data;
}

export function loadSandboxConfig(file: string): SandboxConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `${file}: cannot read sandbox config (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  const document = parseDocument(text, { prettyErrors: true });
  const yamlError = document.errors[0];
  if (yamlError) throw new UserError(`${file}: ${yamlError.message}`);
  return parseSandboxConfig(document.toJS(), file);
}

/** Funded wallet and jobs that finish in one to three seconds, for `run --sandbox` and demos. */
export function demoSandboxConfig(): SandboxConfigInput & {
  queued_seconds: number;
  running_seconds: { min: number; max: number };
} {
  return {
    seed: 'demo',
    keys: [{ key: DEMO_API_KEY, id: 1, workspace: DEMO_WORKSPACE }],
    workspaces: [{ id: DEMO_WORKSPACE, balance_usd: '100.00', wallet_enabled: true, concurrency_limit: 3 }],
    queued_seconds: 0.5,
    running_seconds: { min: 0.5, max: 2.5 },
    retry_after_seconds: 1,
  };
}
