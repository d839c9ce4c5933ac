/**
 * parseManifest: text in, a fully expanded manifest or every problem out. Pure apart from the
 * injected reader for items_from files, so it is tested without touching the disk.
 */
import { dirname, join, resolve } from 'node:path';
import type { Document, LineCounter } from 'yaml';
import type { z } from 'zod';
import { isPlainObject } from '../plain-object.js';
import { type DeclaredId, declaredId, type IdClaims } from './base-ids.js';
import { type Defaults, expandItems, type ItemDraft, type ReadyDraft } from './expand.js';
import {
  checkInputFields,
  type ItemInput,
  notePassThroughFields,
  type PassThroughNotes,
} from './input-fields.js';
import { readItemsFrom, type SiblingReader } from './items-from.js';
import { YamlSource } from './locate.js';
import { assignOutputNames } from './output-names.js';
import { ProblemList, type Source } from './problems.js';
import { noteLongPrompts } from './prompt-size.js';
import type { RawItem } from './raw-item.js';
import { readYaml } from './read-yaml.js';
import { isS3Uri, parseS3Uri, s3Uri } from './s3-uri.js';
import { itemSchema, itemWithSharedPromptSchema, ownCheckName, topSchema, varsSchema } from './schema.js';
import { prepareTemplates, type SharedTemplate, type Vars } from './templates.js';
import type { Manifest, ManifestItem, ManifestResult, OwnCheckSpec } from './types.js';
import { itemKeysAt, reportIssues, topKeysAt } from './zod-issues.js';

export const DEFAULT_RETRIES = 2;

export function parseManifest(file: string, text: string, readSibling: SiblingReader): ManifestResult {
  const problems = new ProblemList();
  let manifest: Manifest | null = null;
  try {
    manifest = build(file, text, readSibling, problems);
  } catch (error) {
    // A bug here must still read as a problem, never as a stack trace in the user's terminal.
    const message = error instanceof Error ? error.message : String(error);
    problems.atDocument(file, `internal error while checking the manifest (please report this): ${message}`);
  }
  if (manifest && problems.size === 0) return { ok: true, manifest };
  if (problems.size === 0) problems.atDocument(file, 'the manifest could not be read');
  return { ok: false, problems: problems.sorted() };
}

type TopShape = typeof topSchema.shape;
type TopSettings = z.output<typeof topSchema>;
/** One top-level setting read on its own: undefined when absent or invalid. */
export type TopField = <K extends keyof TopShape>(key: K) => z.output<TopShape[K]> | undefined;

/** The manifest's top-level map, with the YAML document kept for locating problems. */
export interface TopMap {
  file: string;
  doc: Document;
  lineCounter: LineCounter;
  top: YamlSource;
  value: Record<string, unknown>;
}

function build(
  file: string,
  text: string,
  readSibling: SiblingReader,
  problems: ProblemList,
): Manifest | null {
  const topMap = readTopMap(file, text, problems);
  if (topMap === null) return null;
  const { top, value } = topMap;
  const parsed = topSchema.safeParse(value);
  if (!parsed.success) reportIssues(parsed.error.issues, top, value, topKeysAt, problems);
  const field = fieldReader(value);

  const shared = readSharedTemplate(top, field, value);
  const { drafts, inputs, declared, count, failed } = readItems(topMap, field, readSibling, problems);
  // A prompt and no items: the manifest is one item, and its variables make the many.
  if (
    count === 0 &&
    !failed &&
    value.prompt !== undefined &&
    value.items === undefined &&
    value.items_from === undefined
  ) {
    if (shared.prompt !== null) drafts.push(bareDraft(top));
  } else if (count === 0 && !failed) {
    // At the empty list or file the items were to come from, when there is one: that is the fix.
    const at = value.items_from !== undefined ? 'items_from' : value.items !== undefined ? 'items' : null;
    const message = "no items: list them under 'items' or point 'items_from' at a .csv or .jsonl file";
    if (at === null) problems.atDocument(file, message);
    else problems.at(top, [at], message);
  }
  const defaults = readDefaults(top, field);
  const warnings = checkInputs(defaults, value, inputs, problems);
  const nameTemplate = field('output')?.name;
  const { items } = expandAndName(defaults, shared, { drafts, declared }, nameTemplate, problems, warnings);

  const name = field('name');
  if (!parsed.success || name === undefined || problems.size > 0) return null;
  return assembleManifest(file, name, parsed.data, items, warnings);
}

/** The YAML as a map of settings, or null after reporting why it is not one. */
export function readTopMap(file: string, text: string, problems: ProblemList): TopMap | null {
  const { doc, lineCounter, value: document } = readYaml(file, String(text), problems);
  if (document === undefined) return null;
  if (document === null) {
    problems.atDocument(file, 'the manifest is empty: expected at least version, name and items');
    return null;
  }
  const top = new YamlSource(file, doc, lineCounter, []);
  if (!isPlainObject(document)) {
    problems.at(top, [], 'the manifest must be a map of settings (version, name, items, ...)');
    return null;
  }
  // Top-level keys starting with x- are the user's own (a home for YAML anchors), as in Compose files.
  const value = Object.fromEntries(Object.entries(document).filter(([key]) => !key.startsWith('x-')));
  return { file, doc, lineCounter, top, value };
}

/** Each setting is also read on its own, so one bad setting does not hide the items' problems. */
export function fieldReader(value: Record<string, unknown>): TopField {
  return <K extends keyof TopShape>(key: K) => {
    const result = topSchema.shape[key].safeParse(value[key]);
    return result.success ? (result.data as z.output<TopShape[K]>) : undefined;
  };
}

/**
 * The items under `items`, then those of the `items_from` file, each made a draft as soon as it is
 * read so that its parsed value can be let go at once (100,000-line files are normal). `inputs`
 * holds every item's own input for the input-field checks, `declared` every item's own id (sound
 * item or not, so that a clash shows with the other mistakes); `failed` says a source itself was
 * invalid or unreadable, so that "no items" would only repeat the real problem.
 */
function readItems(
  { file, doc, lineCounter, top, value }: TopMap,
  field: TopField,
  readSibling: SiblingReader,
  problems: ProblemList,
): { drafts: ItemDraft[]; inputs: ItemInput[]; declared: DeclaredId[]; count: number; failed: boolean } {
  const drafts: ItemDraft[] = [];
  const inputs: ItemInput[] = [];
  const declared: DeclaredId[] = [];
  let count = 0;
  const schema = value.prompt === undefined ? itemSchema : itemWithSharedPromptSchema;
  const take = (raw: RawItem) => {
    count += 1;
    const id = declaredId(raw.value);
    if (id !== undefined) declared.push({ source: raw.source, id });
    const draft = toDraft(raw, schema, problems);
    if (draft) drafts.push(draft);
    // An item with another mistake still has its input checked, so that all problems show at once.
    const input = draft ? draft.input : isPlainObject(raw.value) ? raw.value.input : undefined;
    if (input === undefined || isPlainObject(input)) inputs.push(draft ?? { source: raw.source, input });
  };
  let failed = false;
  const yamlItems = field('items');
  if (value.items !== undefined && yamlItems === undefined) failed = true;
  yamlItems?.forEach((item, index) => {
    take({ value: item, source: new YamlSource(file, doc, lineCounter, ['items', index]) });
  });
  const itemsFrom = field('items_from');
  if (value.items_from !== undefined && itemsFrom === undefined) failed = true;
  const sharedPrompt = value.prompt !== undefined;
  if (itemsFrom !== undefined && readItemsFrom(itemsFrom, top, readSibling, problems, take, sharedPrompt))
    failed = true;
  return { drafts, inputs, declared, count, failed };
}

/**
 * The manifest's prompt and variables. Where one variable is bad the others still count, so that
 * the prompt's placeholders are not also reported as having no variable.
 */
export function readSharedTemplate(
  top: YamlSource,
  field: TopField,
  value: Record<string, unknown>,
): SharedTemplate {
  let vars = field('vars');
  if (vars === undefined && isPlainObject(value.vars)) {
    // A bad one stands as an empty text: its own problem already refuses the manifest.
    const usable = Object.entries(value.vars).map(([key, one]) =>
      varsSchema.safeParse({ [key]: one }).success ? [key, one] : [key, ''],
    );
    vars = Object.fromEntries(usable) as Vars;
  }
  const variants = value.variants !== undefined;
  const fallbacks = field('fallback_prompts') ?? null;
  return { source: top, prompt: field('prompt') ?? null, fallbacks, vars: vars ?? {}, variants };
}

function bareDraft(top: YamlSource): ItemDraft {
  const none = undefined;
  return {
    source: top,
    id: none,
    prompt: none,
    vars: none,
    input: none,
    model: none,
    metadata: none,
    maxCostMicros: none,
    variants: none,
    rerolls: none,
    fallbackPrompts: none,
    bare: true,
  };
}

export function readDefaults(top: YamlSource, field: TopField): Defaults {
  return {
    source: top,
    input: field('input') ?? {},
    model: field('model') ?? null,
    metadata: field('metadata') ?? {},
    maxCostMicros: field('max_cost_usd') ?? null,
    variants: field('variants') ?? null,
    rerolls: field('rerolls') ?? null,
    matrix: (field('matrix') ?? {}) as Record<string, unknown[]>,
  };
}

/** Checks known input fields as problems and notes unknown ones; returns the notes as warnings. */
export function checkInputs(
  defaults: Defaults,
  value: Record<string, unknown>,
  inputs: readonly ItemInput[],
  problems: ProblemList,
  /** A streamed manifest's notes, counted across its chunks (then nothing is returned). */
  notes?: PassThroughNotes,
): ProblemList {
  const checkDefaults = inputDefaults(defaults, value);
  checkInputFields(checkDefaults, inputs, problems);
  const warnings = new ProblemList();
  if (notes) notes.sites(inputs);
  else notePassThroughFields(checkDefaults, inputs, warnings);
  return warnings;
}

/** The defaults as the input-field checks read them. */
export function inputDefaults(defaults: Defaults, value: Record<string, unknown>): Defaults {
  // Known input fields are checked even where a neighbouring mistake made the whole map invalid.
  const usable = (map: unknown, keep: (entry: unknown) => boolean) =>
    isPlainObject(map) ? Object.fromEntries(Object.entries(map).filter(([, entry]) => keep(entry))) : {};
  return {
    ...defaults,
    input: usable(value.input, () => true),
    matrix: usable(value.matrix, Array.isArray) as Record<string, unknown[]>,
  };
}

/**
 * The expanded items, their prompts rendered from checked templates, named from output.name. Every
 * item that expanded is named even when others have mistakes, so that two items given one file
 * name are reported with those mistakes, not only once they are fixed.
 */
export function expandAndName(
  defaults: Defaults,
  shared: SharedTemplate,
  { drafts, declared }: { drafts: readonly ItemDraft[]; declared: readonly DeclaredId[] },
  nameTemplate: string | undefined,
  problems: ProblemList,
  warnings: ProblemList,
  claims?: IdClaims,
  /** A streamed manifest's: its variables used across chunks, and where its long prompts are noted. */
  across?: { usedVars: Set<string>; promptWarnings: ProblemList },
): { items: ManifestItem[]; sources: Source[] } {
  const templates = prepareTemplates(shared, drafts, problems, warnings, across?.usedVars);
  const ready: ReadyDraft[] = [];
  drafts.forEach((draft, index) => {
    const template = templates[index];
    if (template) ready.push(Object.assign(draft, { template }));
  });
  const sources: Source[] = [];
  const items = expandItems(defaults, ready, declared, problems, sources, claims);
  noteLongPrompts(items, sources, across?.promptWarnings ?? warnings);
  if (nameTemplate !== undefined) {
    const entries = items.map((item, index) => ({ item, source: sources[index]! }));
    assignOutputNames(nameTemplate, Object.keys(defaults.matrix), entries, defaults.source, problems);
  }
  return { items, sources };
}

/** The manifest's settings, before (and without) its items. */
export function manifestHead(
  file: string,
  name: string,
  data: TopSettings,
): Omit<Manifest, 'items' | 'warnings'> {
  const {
    items: _items,
    warnings: _warnings,
    ...head
  } = assembleManifest(file, name, data, [], new ProblemList());
  return head;
}

function assembleManifest(
  file: string,
  name: string,
  data: TopSettings,
  items: ManifestItem[],
  warnings: ProblemList,
): Manifest {
  const absolute = resolve(file);
  return {
    file: absolute,
    name,
    budgetMicros: data.budget_usd ?? null,
    concurrency: data.concurrency ?? null,
    retries: data.retries ?? DEFAULT_RETRIES,
    ...(data.duration_tolerance_seconds === undefined
      ? {}
      : { durationToleranceSeconds: data.duration_tolerance_seconds }),
    ...(data.video_checks === false ? { videoChecks: false as const } : {}),
    ...(data.checks?.length ? { checks: data.checks.map(ownCheckOf) } : {}),
    outputDir: outputLocation(dirname(absolute), data.output?.dir ?? join('out', name)),
    items,
    ...(data.items_from ? { itemsFrom: resolve(dirname(absolute), data.items_from) } : {}),
    ...(data.output?.sidecars === false ? { sidecars: false as const } : {}),
    ...(data.notify?.url ? { notifyUrl: data.notify.url } : {}),
    warnings: warnings.sorted(),
  };
}

/** How long a check of your own may take unless it says (docs/checks.md). */
const DEFAULT_CHECK_TIMEOUT_SECONDS = 60;

function ownCheckOf(check: NonNullable<TopSettings['checks']>[number]): OwnCheckSpec {
  return {
    name: ownCheckName(check),
    run: check.run,
    timeoutMs: Math.round((check.timeout_seconds ?? DEFAULT_CHECK_TIMEOUT_SECONDS) * 1000),
  };
}

/**
 * zod alone: it checks 100,000 items in about 50-90 ms, and a hand-written fast path for valid
 * items made no measurable difference to plan or status over a 100,000-item manifest.
 */
export function toDraft(
  raw: RawItem,
  schema: typeof itemSchema | typeof itemWithSharedPromptSchema,
  problems: ProblemList,
): ItemDraft | null {
  const result = (schema as typeof itemWithSharedPromptSchema).safeParse(raw.value);
  if (!result.success) {
    reportIssues(result.error.issues, raw.source as Source, raw.value, itemKeysAt, problems);
    return null;
  }
  const item = result.data;
  return {
    source: raw.source,
    id: item.id,
    prompt: item.prompt,
    vars: item.vars,
    input: item.input,
    model: item.model,
    metadata: item.metadata,
    maxCostMicros: item.max_cost_usd,
    variants: item.variants,
    rerolls: item.rerolls,
    fallbackPrompts: item.fallback_prompts,
  };
}

/** A folder resolved against the manifest's; an `s3://` location in its canonical form. */
function outputLocation(base: string, dir: string): string {
  if (!isS3Uri(dir)) return resolve(base, dir);
  const location = parseS3Uri(dir);
  // The schema refused a bad location already; a problem here is a bug, not the user's.
  if ('problem' in location) throw new Error(`unchecked output location: ${location.problem}`);
  return s3Uri(location);
}
