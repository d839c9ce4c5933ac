import { parseUsd } from '../money.js';
import { isPlainObject } from '../plain-object.js';
import type { SandboxConfig } from './config.js';
import { fail } from './http-error.js';
import type { PricedInput } from './pricing.js';

export interface ValidSubmission {
  model: string;
  prompt: string;
  input: Record<string, unknown>;
  metadata: Record<string, unknown>;
  maxCostMicros: number | null;
  priced: PricedInput;
}

const BODY_FIELDS = new Set(['model', 'input', 'max_cost_usd', 'metadata']);
const INPUT_FIELDS = new Set(['prompt', 'seconds', 'definition', 'orientation']);

type InputRules = SandboxConfig['input'];

/**
 * Checks a POST /videos/generation body against the configured bounds; throws the first HttpError.
 * The order of the checks decides which mistake a body with several is answered with.
 */
export function validateSubmission(body: Record<string, unknown>, config: SandboxConfig): ValidSubmission {
  if (config.unknown_body_fields === 'reject') {
    const extra = unknownField(body, BODY_FIELDS);
    if (extra !== undefined) throw fail.invalidParameter(extra, `Unknown field ${extra}.`);
  }
  const model = oneOf(body.model, 'model', config.models) ?? config.models[0] ?? '';
  const { input, prompt, priced } = validateInput(body.input, config.input);
  const maxCostMicros = validateMaxCost(body.max_cost_usd);
  const metadata = validateMetadata(body.metadata);
  return { model, prompt, input, metadata, maxCostMicros, priced };
}

function validateInput(
  value: unknown,
  rules: InputRules,
): { input: Record<string, unknown>; prompt: string; priced: PricedInput } {
  if (value === undefined) throw fail.missingParameter('input');
  if (!isPlainObject(value)) throw fail.invalidParameter('input', 'input must be an object.');
  const input = value;
  // The service answers invalid_parameter, not missing_parameter, for a missing prompt: `input`
  // itself is present, one of its fields is wrong.
  if (typeof input.prompt !== 'string' || input.prompt.trim() === '') {
    throw fail.invalidParameter('input.prompt', 'input.prompt is required and must be a non-empty string.');
  }
  const seconds = wholeSeconds(input.seconds, rules.seconds);
  const definition =
    oneOf(input.definition, 'input.definition', rules.definitions) ?? rules.default_definition;
  oneOf(input.orientation, 'input.orientation', rules.orientations);
  if (rules.unknown_fields === 'reject') {
    const extra = unknownField(input, INPUT_FIELDS);
    if (extra !== undefined) throw fail.invalidParameter(`input.${extra}`, `Unknown input field ${extra}.`);
  }
  return { input, prompt: input.prompt, priced: { seconds, definition } };
}

function unknownField(fields: Record<string, unknown>, known: ReadonlySet<string>): string | undefined {
  return Object.keys(fields).find((field) => !known.has(field));
}

/** A string from a configured list, or undefined when absent. */
function oneOf(value: unknown, param: string, allowed: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw fail.invalidParameter(param, `${param} must be one of: ${allowed.join(', ')}.`);
  }
  return value;
}

function wholeSeconds(value: unknown, bounds: InputRules['seconds']): number {
  if (value === undefined) return bounds.default;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw fail.invalidParameter(
      'input.seconds',
      `input.seconds must be an integer from ${bounds.min} to ${bounds.max}.`,
    );
  }
  return value;
}

function validateMaxCost(value: unknown): number | null {
  if (value === undefined) return null;
  const parsed = typeof value === 'string' ? parseUsd(value) : null;
  if (parsed === null) {
    throw fail.invalidParameter(
      'max_cost_usd',
      'max_cost_usd must be a decimal string with at most six decimals.',
    );
  }
  return parsed;
}

function validateMetadata(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw fail.invalidParameter('metadata', 'metadata must be an object.');
  return value;
}
