/**
 * The input fields mediabatch knows (the service documents these, and accepts others it does not
 * list). A key one or two letters away from a known field is almost always a typo that would be
 * sent, and paid for, as written; any other key passes through and `plan` mentions it
 * (docs/manifest.md, "Input fields").
 */
import { closestMatch } from '../suggest.js';
import { describeValue as describe, type Path, type ProblemList, type Source } from './problems.js';

const KNOWN_INPUT_CHECKS: Record<string, (value: unknown) => string | null> = {
  seconds: (value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value > 0
      ? null
      : `must be a positive whole number of seconds, not ${describe(value)}`,
  definition: (value) =>
    typeof value === 'string' && /^[0-9]+p$/.test(value)
      ? null
      : `must be a number followed by 'p', such as "720p", not ${describe(value)}`,
  orientation: (value) =>
    typeof value === 'string' && /^[0-9]+:[0-9]+$/.test(value)
      ? null
      : `must be width:height, such as "16:9", not ${describe(value)}`,
};

export const CHECKED_INPUT_FIELDS = Object.keys(KNOWN_INPUT_CHECKS);

/** Why a value is wrong for a known input field, or null (also for fields the service leaves open). */
export function inputFieldProblem(field: string, value: unknown): string | null {
  const check = Object.hasOwn(KNOWN_INPUT_CHECKS, field) ? KNOWN_INPUT_CHECKS[field] : undefined;
  return check ? check(value) : null;
}

/** Whether a key is one of the documented input fields (the prompt included). */
function isKnownInputField(key: string): boolean {
  return key === 'prompt' || Object.hasOwn(KNOWN_INPUT_CHECKS, key);
}

// 100,000 JSONL items repeat the same few keys: remember each key's verdict.
const typoCache = new Map<string, string | null>();

/** The known field an unknown input key is a near miss of, or null when it is known or far from all. */
export function inputKeyTypo(key: string): string | null {
  if (isKnownInputField(key)) return null;
  let guess = typoCache.get(key);
  if (guess === undefined) {
    guess = closestMatch(key, CHECKED_INPUT_FIELDS);
    if (typoCache.size < 10_000) typoCache.set(key, guess);
  }
  return guess;
}

function inputTypoMessage(key: string, guess: string): string {
  return `unknown input field '${key}', did you mean '${guess}'? (other unknown input fields are sent as written)`;
}

/** Reports each near-miss key of an input map. */
export function checkInputKeys(
  keys: readonly string[],
  report: (key: string, message: string) => void,
): void {
  for (const key of keys) {
    const guess = inputKeyTypo(key);
    if (guess !== null) report(key, inputTypoMessage(key, guess));
  }
}

/** Matrix keys are input fields too. */
export function checkMatrixKey(key: string, report: (message: string) => void): void {
  const guess = inputKeyTypo(key);
  if (guess !== null) report(inputTypoMessage(key, guess));
}

interface InputSite {
  source: Source;
  input: Record<string, unknown> | undefined;
}

/**
 * Notes each unknown input key that is not a near miss (those are errors), once per key, at the
 * first place it is written, with how many places use it. These go to the service as written.
 */
export function notePassThroughFields(
  defaults: { source: Source; input: Record<string, unknown>; matrix: Record<string, unknown> },
  sites: readonly InputSite[],
  notes: ProblemList,
): void {
  const found = new PassThroughNotes(defaults);
  found.sites(sites);
  found.report(notes);
}

/**
 * notePassThroughFields over a manifest read a chunk of items at a time (manifest-stream.ts): the
 * keys and their places are counted across every chunk, and noted once at the end.
 */
export class PassThroughNotes {
  readonly #found = new Map<string, { source: Source; rel: Path; places: number }>();

  constructor(defaults: { source: Source; input: Record<string, unknown>; matrix: Record<string, unknown> }) {
    for (const key of Object.keys(defaults.input)) this.#note(key, defaults.source, ['input', key]);
    for (const key of Object.keys(defaults.matrix)) this.#note(key, defaults.source, ['matrix', key]);
  }

  sites(sites: readonly InputSite[]): void {
    for (const site of sites)
      for (const key of Object.keys(site.input ?? {})) this.#note(key, site.source, ['input', key]);
  }

  report(notes: ProblemList): void {
    for (const [key, { source, rel, places }] of this.#found) {
      const where = places > 1 ? ` (written in ${places} places)` : '';
      notes.at(
        source,
        rel,
        `input field '${key}' is not one mediabatch knows; it is sent to the service as written${where}`,
        'key',
      );
    }
  }

  #note(key: string, source: Source, rel: Path): void {
    if (isKnownInputField(key) || inputKeyTypo(key) !== null) return;
    const entry = this.#found.get(key);
    if (entry) entry.places += 1;
    else this.#found.set(key, { source, rel, places: 1 });
  }
}

/** Where an item's own input was written; also given for items that failed other checks. */
export interface ItemInput {
  source: Source;
  input: Record<string, unknown> | undefined;
}

/**
 * Checks each known input field on the value an item will send, reported where that value was
 * written. A default or matrix entry shared by many items is checked once.
 */
export function checkInputFields(
  defaults: { source: Source; input: Record<string, unknown>; matrix: Record<string, unknown[]> },
  drafts: readonly ItemInput[],
  problems: ProblemList,
): void {
  if (drafts.length === 0) return;
  const defaultsUsed = new Set<string>();
  for (const draft of drafts) {
    for (const field of CHECKED_INPUT_FIELDS) {
      if (Object.hasOwn(defaults.matrix, field)) continue;
      if (draft.input && Object.hasOwn(draft.input, field)) {
        const problem = inputFieldProblem(field, draft.input[field]);
        if (problem) problems.at(draft.source, ['input', field], problem);
      } else if (Object.hasOwn(defaults.input, field)) defaultsUsed.add(field);
    }
  }
  for (const field of defaultsUsed) {
    const problem = inputFieldProblem(field, defaults.input[field]);
    if (problem) problems.at(defaults.source, ['input', field], problem);
  }
  for (const [field, values] of Object.entries(defaults.matrix)) {
    values.forEach((value, index) => {
      const problem = inputFieldProblem(field, value);
      if (problem) problems.at(defaults.source, ['matrix', field, index], problem);
    });
  }
}
