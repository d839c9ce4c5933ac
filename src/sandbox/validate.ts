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

/** Checks a POST /videos/generation body against the configured bounds; throws the first HttpError. */
export function validateSubmission(body: Record<string, unknown>, config: SandboxConfig): ValidSubmission {
  if (config.unknown_body_fields === 'reject') {
    const extra = Object.keys(body).find((field) => !BODY_FIELDS.has(field));
    if (extra !== undefined) throw fail.invalidParameter(extra, `Unknown field ${extra}.`);
  }

  let model = config.models[0] ?? '';
  if (body.model !== undefined) {
    if (typeof body.model !== 'string' || !config.models.includes(body.model)) {
      throw fail.invalidParameter('model', `model must be one of: ${config.models.join(', ')}.`);
    }
    model = body.model;
  }

  if (body.input === undefined) throw fail.missingParameter('input');
  if (!isPlainObject(body.input)) throw fail.invalidParameter('input', 'input must be an object.');
  const input = body.input;
  const rules = config.input;

  // The service answers invalid_parameter, not missing_parameter, for a missing prompt: `input`
  // itself is present, one of its fields is wrong.
  if (typeof input.prompt !== 'string' || input.prompt.trim() === '') {
    throw fail.invalidParameter('input.prompt', 'input.prompt is required and must be a non-empty string.');
  }

  let seconds = rules.seconds.default;
  if (input.seconds !== undefined) {
    const value = input.seconds;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value < rules.seconds.min ||
      value > rules.seconds.max
    ) {
      throw fail.invalidParameter(
        'input.seconds',
        `input.seconds must be an integer from ${rules.seconds.min} to ${rules.seconds.max}.`,
      );
    }
    seconds = value;
  }

  let definition = rules.default_definition;
  if (input.definition !== undefined) {
    if (typeof input.definition !== 'string' || !rules.definitions.includes(input.definition)) {
      throw fail.invalidParameter(
        'input.definition',
        `input.definition must be one of: ${rules.definitions.join(', ')}.`,
      );
    }
    definition = input.definition;
  }

  if (input.orientation !== undefined) {
    if (typeof input.orientation !== 'string' || !rules.orientations.includes(input.orientation)) {
      throw fail.invalidParameter(
        'input.orientation',
        `input.orientation must be one of: ${rules.orientations.join(', ')}.`,
      );
    }
  }

  if (rules.unknown_fields === 'reject') {
    const extra = Object.keys(input).find((field) => !INPUT_FIELDS.has(field));
    if (extra !== undefined) throw fail.invalidParameter(`input.${extra}`, `Unknown input field ${extra}.`);
  }

  let maxCostMicros: number | null = null;
  if (body.max_cost_usd !== undefined) {
    const parsed = typeof body.max_cost_usd === 'string' ? parseUsd(body.max_cost_usd) : null;
    if (parsed === null) {
      throw fail.invalidParameter(
        'max_cost_usd',
        'max_cost_usd must be a decimal string with at most six decimals.',
      );
    }
    maxCostMicros = parsed;
  }

  let metadata: Record<string, unknown> = {};
  if (body.metadata !== undefined) {
    if (!isPlainObject(body.metadata)) throw fail.invalidParameter('metadata', 'metadata must be an object.');
    metadata = body.metadata;
  }

  return { model, prompt: input.prompt, input, metadata, maxCostMicros, priced: { seconds, definition } };
}
