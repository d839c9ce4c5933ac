/**
 * The manifest's shape as zod schemas. Every object is strict so that a typo is an error instead
 * of a silently ignored setting; messages are written for the person who typed the manifest.
 */
import { z } from 'zod';
import { canonicalJson } from '../canonical-json.js';
import { parseUsd } from '../money.js';
import { isPlainObject } from '../plain-object.js';
import { idProblem } from './ids.js';
import { checkInputKeys, checkMatrixKey } from './input-fields.js';
import { jsonValueIssue } from './json-value.js';
import { describeValue as describe, show } from './problems.js';
import { isS3Uri, s3UriProblem } from './s3-uri.js';
import { VAR_NAME, type VarValue } from './template.js';
import { variantsSchema } from './variants.js';

export const TOP_KEYS = [
  'version',
  'name',
  'model',
  'input',
  'metadata',
  'max_cost_usd',
  'budget_usd',
  'concurrency',
  'retries',
  'duration_tolerance_seconds',
  'video_checks',
  'output',
  'notify',
  'items',
  'items_from',
  'matrix',
  'prompt',
  'vars',
  'variants',
  'rerolls',
  'checks',
  'fallback_prompts',
] as const;
export const ITEM_KEYS = [
  'id',
  'prompt',
  'vars',
  'input',
  'model',
  'metadata',
  'max_cost_usd',
  'variants',
  'rerolls',
  'fallback_prompts',
] as const;
export const OUTPUT_KEYS = ['dir', 'name', 'sidecars'] as const;
export const NOTIFY_KEYS = ['url'] as const;

export const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const RESERVED_METADATA_PREFIX = 'mediabatch.';

/** Marks a custom issue as being about a map key (the key is what to fix, not the value). */
export const AT_KEY = { at: 'key' } as const;

const expected = (what: string) => (issue: { input?: unknown }) =>
  `must be ${what}, not ${describe(issue.input)}`;

function amountProblem(text: string, positive: boolean): string | null {
  if (/^\s*-/.test(text)) return `amount ${show(text)} must not be negative`;
  if (/^\d+\.\d{7,}$/.test(text)) return `amount ${show(text)} has more than six decimal places`;
  const micros = parseUsd(text);
  if (micros === null)
    return `not a decimal amount: ${show(text)} (write digits with up to six decimals, e.g. "1.20")`;
  if (!Number.isSafeInteger(micros)) return `amount ${show(text)} is too large`;
  if (positive && micros === 0) return 'must be greater than zero';
  return null;
}

/** Decimal-string money, converted to micro-dollars. A YAML number is refused: it was a float. */
const amount = (positive: boolean) =>
  z
    .string({
      error: (issue) =>
        typeof issue.input === 'number'
          ? `amounts must be quoted strings: write "${issue.input}" (a bare YAML number is a float, and money is never a float)`
          : `must be a decimal string such as "1.20", not ${describe(issue.input)}`,
    })
    .transform((text, ctx) => {
      const problem = amountProblem(text, positive);
      if (problem === null) return parseUsd(text)!;
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    });

const plainMap = (what: string) =>
  z.custom<Record<string, unknown>>(isPlainObject, { error: expected(`a map of ${what}`) });

type Ctx = z.RefinementCtx;

function checkJsonEntry(ctx: Ctx, key: string, value: unknown): void {
  const issue = jsonValueIssue(value);
  if (issue) ctx.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message });
}

function refuseProtoKey(ctx: Ctx, key: string): boolean {
  if (key !== '__proto__') return false;
  ctx.addIssue({
    code: 'custom',
    path: [key],
    message: "'__proto__' is not allowed as a key",
    params: AT_KEY,
  });
  return true;
}

export const PROMPT_IN_INPUT =
  "the prompt is not an input field here: give each item a 'prompt' key instead of input.prompt";

export const inputSchema = plainMap('input fields').superRefine((input, ctx) => {
  for (const key of Object.keys(input)) {
    if (refuseProtoKey(ctx, key)) continue;
    if (key === 'prompt')
      ctx.addIssue({ code: 'custom', path: [key], message: PROMPT_IN_INPUT, params: AT_KEY });
    else checkJsonEntry(ctx, key, input[key]);
  }
  checkInputKeys(Object.keys(input), (key, message) =>
    ctx.addIssue({ code: 'custom', path: [key], message, params: AT_KEY }),
  );
});

export const metadataSchema = plainMap('metadata values').superRefine((metadata, ctx) => {
  for (const key of Object.keys(metadata)) {
    if (refuseProtoKey(ctx, key)) continue;
    if (key.toLowerCase().startsWith(RESERVED_METADATA_PREFIX)) {
      const message = `metadata keys starting with '${RESERVED_METADATA_PREFIX}' are reserved for mediabatch's own tracing`;
      ctx.addIssue({ code: 'custom', path: [key], message, params: AT_KEY });
    } else {
      checkJsonEntry(ctx, key, metadata[key]);
    }
  }
});

export const matrixSchema = plainMap('input field: list of values').superRefine((matrix, ctx) => {
  for (const key of Object.keys(matrix)) {
    if (refuseProtoKey(ctx, key)) continue;
    if (key === 'prompt') {
      const message = 'the prompt cannot be a matrix field: write one item per prompt instead';
      ctx.addIssue({ code: 'custom', path: [key], message, params: AT_KEY });
      continue;
    }
    checkMatrixKey(key, (message) => ctx.addIssue({ code: 'custom', path: [key], message, params: AT_KEY }));
    const values = matrix[key];
    if (!Array.isArray(values) || values.length === 0) {
      const message = Array.isArray(values)
        ? 'must list at least one value'
        : `must be a list of values, not ${describe(values)}`;
      ctx.addIssue({ code: 'custom', path: [key], message });
      continue;
    }
    const seen = new Map<string, number>();
    values.forEach((value, index) => {
      const issue = jsonValueIssue(value);
      if (issue) {
        ctx.addIssue({ code: 'custom', path: [key, index, ...issue.path], message: issue.message });
        return;
      }
      const canonical = canonicalJson(value);
      const first = seen.get(canonical);
      if (first === undefined) seen.set(canonical, index);
      else {
        const message = `duplicate value ${show(value)} (already at ${key}[${first}]): it would give two items the same id`;
        ctx.addIssue({ code: 'custom', path: [key, index], message });
      }
    });
  }
});

/** Why a variable's value (or one value of its list) cannot fill a placeholder, or null. */
function varValueProblem(value: unknown, inList: boolean): string | null {
  if (typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number')
    return Number.isFinite(value) ? null : `${value} is not a number a prompt can hold`;
  if (isPlainObject(value))
    return inList
      ? 'a list of values cannot hold a map: a placeholder prints one text'
      : 'a variable cannot be a map: give it a text, a number, or a list of them';
  if (Array.isArray(value)) return 'a list of values cannot hold another list';
  return `must be a text, a number, true/false or a list of them, not ${describe(value)}`;
}

function checkVarList(ctx: Ctx, key: string, values: unknown[]): void {
  if (values.length === 0) {
    ctx.addIssue({ code: 'custom', path: [key], message: 'must list at least one value' });
    return;
  }
  const seen = new Map<string, number>();
  values.forEach((value, index) => {
    const problem = varValueProblem(value, true);
    if (problem) {
      ctx.addIssue({ code: 'custom', path: [key, index], message: problem });
      return;
    }
    const first = seen.get(String(value));
    if (first === undefined) seen.set(String(value), index);
    else {
      const message = `duplicate value ${show(value)} (already at ${key}[${first}]): it would give two items the same prompt and id`;
      ctx.addIssue({ code: 'custom', path: [key, index], message });
    }
  });
}

/** Template variables: name -> a value, or a list of values that expands into one item each. */
export const varsSchema = plainMap('variables')
  .superRefine((vars, ctx) => {
    for (const key of Object.keys(vars)) {
      if (refuseProtoKey(ctx, key)) continue;
      if (!VAR_NAME.test(key)) {
        const message = `invalid variable name ${show(key)}: use letters, digits and '_', not starting with a digit`;
        ctx.addIssue({ code: 'custom', path: [key], message, params: AT_KEY });
        continue;
      }
      const value = vars[key];
      if (Array.isArray(value)) checkVarList(ctx, key, value);
      else {
        const problem = varValueProblem(value, false);
        if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
      }
    }
  })
  .transform((vars) => vars as Record<string, VarValue | VarValue[]>);

const idSchema = z.string({ error: expected('a string (quote numbers)') }).superRefine((id, ctx) => {
  const problem = idProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const promptSchema = z
  .string({ error: expected('a string') })
  .refine((prompt) => prompt.trim() !== '', { error: 'prompt must not be empty' });

const modelSchema = z.string({ error: expected('a string') }).min(1, { error: 'model must not be empty' });

/** How many times a take that failed its check is bought again (docs/checks.md, "Re-rolls"). */
const rerollsSchema = z
  .int({ error: expected('a whole number, 0 to 10') })
  .min(0, { error: 'must be 0 or more' })
  .max(10, { error: 'must be at most 10' });

/**
 * A check of your own (docs/checks.md, "Checks of your own"): a program run on each saved file, as
 * an argument list (no shell), `{file}` and `{sidecar}` replaced by the saved file's and its
 * sidecar's paths.
 */
const ownCheckSchema = z.strictObject(
  {
    name: z
      .string({ error: expected('a name') })
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
        error: "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
      })
      .optional(),
    run: z
      .array(z.string({ error: expected('a string') }).min(1, { error: 'must not be empty' }), {
        error: expected('a list of words: the program, then its arguments (no shell)'),
      })
      .min(1, { error: 'must name the program to run' }),
    timeout_seconds: z
      .number({ error: expected('a number of seconds') })
      .positive({ error: 'must be more than 0' })
      .max(3600, { error: 'must be at most 3600' })
      .optional(),
  },
  { error: expected("a check: a map with at least 'run'") },
);

/** The most fallback prompts an item lists (docs/manifest.md, "Fallback prompts"). */
export const MAX_FALLBACK_PROMPTS = 10;

/** Prompts sent in turn after the service's moderation rejects the one before (content_rejected). */
const fallbackPromptsSchema = z
  .array(promptSchema, { error: expected('a list of prompts') })
  .min(1, { error: 'must list at least one prompt (leave the key out for none)' })
  .max(MAX_FALLBACK_PROMPTS, { error: `must list at most ${MAX_FALLBACK_PROMPTS} prompts` });

export const itemSchema = z.strictObject(
  {
    id: idSchema.optional(),
    prompt: promptSchema,
    vars: varsSchema.optional(),
    input: inputSchema.optional(),
    model: modelSchema.optional(),
    metadata: metadataSchema.optional(),
    max_cost_usd: amount(true).optional(),
    variants: variantsSchema.optional(),
    rerolls: rerollsSchema.optional(),
    fallback_prompts: fallbackPromptsSchema.optional(),
  },
  { error: expected("an item: a map with at least 'prompt'") },
);

/** Items of a manifest with a prompt of its own, which an item without one inherits. */
export const itemWithSharedPromptSchema = itemSchema.extend({ prompt: promptSchema.optional() });

const noNul = (text: string) => !text.includes('\0');

export const topSchema = z.strictObject({
  version: z.literal(1, {
    error: (issue) => `unsupported manifest version ${show(issue.input)}: this mediabatch reads 'version: 1'`,
  }),
  name: z.string({ error: expected('a string') }).regex(NAME_PATTERN, {
    error: (issue) =>
      `invalid name ${show(issue.input)}: use 1-64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
  }),
  model: modelSchema.optional(),
  input: inputSchema.optional(),
  metadata: metadataSchema.optional(),
  max_cost_usd: amount(true).optional(),
  budget_usd: amount(false).optional(),
  concurrency: z
    .int({ error: expected('a positive integer') })
    .min(1, { error: 'must be a positive integer' })
    .optional(),
  retries: z
    .int({ error: expected('a whole number, 0 or more') })
    .min(0, { error: 'must be 0 or more' })
    .optional(),
  duration_tolerance_seconds: z
    .number({ error: expected('a number of seconds, 0 or more') })
    .min(0, { error: 'must be 0 or more' })
    .max(3600, { error: 'must be at most 3600' })
    .optional(),
  // false: saved takes are not read as videos (outputs that are not video); checks: still run.
  video_checks: z.boolean({ error: expected('true or false') }).optional(),
  output: z
    .strictObject(
      {
        dir: z
          .string({ error: expected('a folder path') })
          .min(1, { error: 'must not be empty' })
          .refine(noNul, { error: 'must not contain a NUL character' })
          .superRefine((text, context) => {
            const problem = isS3Uri(text) ? s3UriProblem(text) : null;
            if (problem !== null)
              context.addIssue({ code: 'custom', message: `an s3:// location ${problem}` });
          })
          .optional(),
        name: z
          .string({ error: expected('a name template such as "{orientation}/{id}"') })
          .min(1, { error: 'must not be empty' })
          .optional(),
        sidecars: z.boolean({ error: expected('true or false') }).optional(),
      },
      { error: expected('a map') },
    )
    .optional(),
  notify: z
    .strictObject(
      {
        url: z
          .string({ error: expected('an http(s) URL') })
          .refine((text) => /^https?:\/\/[^\s]+$/i.test(text) && URL.canParse(text), {
            error: (issue) => `must be an http(s) URL, not ${show(issue.input)}`,
          })
          .optional(),
      },
      { error: expected('a map') },
    )
    .optional(),
  items: z.array(z.unknown(), { error: expected('a list of items') }).optional(),
  items_from: z
    .string({ error: expected('a file path') })
    .min(1, { error: 'must not be empty' })
    .refine(noNul, { error: 'must not contain a NUL character' })
    .refine((file) => /\.(csv|jsonl)$/i.test(file), {
      error: (issue) => `unsupported file type ${show(issue.input)}: items_from reads .csv or .jsonl files`,
    })
    .optional(),
  matrix: matrixSchema.optional(),
  prompt: promptSchema.optional(),
  vars: varsSchema.optional(),
  variants: variantsSchema.optional(),
  rerolls: rerollsSchema.optional(),
  checks: z
    .array(ownCheckSchema, { error: expected('a list of checks') })
    .max(20, { error: 'must be at most 20 checks' })
    .superRefine((checks, context) => {
      const seen = new Set<string>();
      checks.forEach((check, index) => {
        const name = ownCheckName(check);
        if (seen.has(name))
          context.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `two checks are named ${name}: give each its own name`,
          });
        seen.add(name);
      });
    })
    .optional(),

  fallback_prompts: fallbackPromptsSchema.optional(),
});

/** A check's name: its own, else its program's file name (`checks/sharp.py` is `sharp.py`). */
export function ownCheckName(check: { name?: string | undefined; run: readonly string[] }): string {
  return check.name ?? (check.run[0] ?? '').split(/[\\/]/).pop() ?? '';
}
