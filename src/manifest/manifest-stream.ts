/**
 * A manifest's items as a stream: its YAML is read whole (it is small), its `items_from` file a
 * few hundred lines at a time (items-from-stream.ts), a chunk of items at a time through the same
 * checks and expansion as the whole reader (parse.ts). Across chunks only the ids are kept
 * (item-ids.ts), with what the manifest's warnings count across its items.
 *
 * Ids made by expansion (list variables, the matrix, variants) and names made by `output.name`
 * depend on every other item's (a readable id is kept only if no other item reads the same), so a
 * manifest that uses them is not streamed: the caller reads it whole (NotStreamable).
 */
import type { ManifestProblem } from '../errors.js';
import { isPlainObject } from '../plain-object.js';
import { declaredId } from './base-ids.js';
import type { ItemDraft } from './expand.js';
import { type ItemInput, PassThroughNotes } from './input-fields.js';
import { ItemIds } from './item-ids.js';
import { streamItemsFrom } from './items-from-stream.js';
import { YamlSource } from './locate.js';
import {
  checkInputs,
  expandAndName,
  fieldReader,
  inputDefaults,
  manifestHead,
  readDefaults,
  readSharedTemplate,
  readTopMap,
  toDraft,
} from './parse.js';
import { ProblemList } from './problems.js';
import type { RawItem } from './raw-item.js';
import { itemSchema, itemWithSharedPromptSchema, topSchema } from './schema.js';
import { noteUnusedVars, type SharedTemplate } from './templates.js';
import type { Manifest, ManifestItem } from './types.js';
import { reportIssues, topKeysAt } from './zod-issues.js';

/** Items checked and expanded together: enough to amortise each step, few enough to hold. */
const CHUNK = 1000;

/** The manifest uses a feature whose ids or names need every item at once (see above). */
export class NotStreamable extends Error {}

/** A manifest but its items and warnings: what is known of it before its items are read. */
export type ManifestHead = Omit<Manifest, 'items' | 'warnings'>;

/**
 * One read of a streamed manifest: the problems found, the ids claimed and the items given so
 * far, the manifest's settings (null while its YAML has problems), and, once the read has ended,
 * its warnings as the whole reader gives them.
 */
export class ManifestRead {
  /** The ids claimed across chunks; null for a read again of items already checked (no id is held). */
  readonly ids: ItemIds | null;
  count = 0;
  head: ManifestHead | null = null;
  /** What the warnings count across chunks, set up once the YAML is read. */
  notes: PassThroughNotes | null = null;
  shared: SharedTemplate | null = null;
  readonly usedVars = new Set<string>();
  readonly templateWarnings = new ProblemList();
  readonly promptWarnings = new ProblemList();

  constructor(
    readonly problems = new ProblemList(),
    /** Read again: the items were read through once, without a problem; their ids are not claimed again. */
    again = false,
  ) {
    this.ids = again ? null : new ItemIds();
  }

  /** The warnings in the order the whole reader notes them: input fields, templates, variables, prompts. */
  warnings(): ManifestProblem[] {
    const all = new ProblemList();
    this.notes?.report(all);
    for (const problem of this.templateWarnings.entries()) all.push(problem);
    if (this.shared !== null) noteUnusedVars(this.shared, this.usedVars, all);
    for (const problem of this.promptWarnings.entries()) all.push(problem);
    return all.sorted();
  }
}

/**
 * Every item of the manifest `file` (its YAML given as `text`), in manifest order, as the whole
 * reader gives them, a chunk at a time. Problems go to `read.problems` as they are found; a chunk
 * is yielded before the problems of later items are known, so a caller that must not act on a bad
 * manifest reads the stream through once first, or acts only once it has ended.
 */
export async function* streamManifestChunks(
  file: string,
  text: string,
  read: ManifestRead,
  /** Items per chunk; small in tests, to cross chunks with few items. */
  chunkSize = CHUNK,
): AsyncGenerator<ManifestItem[]> {
  const { problems } = read;
  const settings = streamableTop(file, text, problems);
  if (settings === null) return;
  const { topMap, field } = settings;
  const { top, value } = topMap;
  read.head = settings.head;
  const defaults = readDefaults(top, field);
  read.notes = new PassThroughNotes(inputDefaults(defaults, value));
  read.shared = readSharedTemplate(top, field, value);
  const context: ChunkContext = {
    value,
    defaults,
    schema: value.prompt === undefined ? itemSchema : itemWithSharedPromptSchema,
    read,
  };
  const yamlItems = field('items') ?? [];
  const fromYaml = yamlItems.map((item, index) => ({
    value: item as unknown,
    source: new YamlSource(file, topMap.doc, topMap.lineCounter, ['items', index]),
  }));
  let count = fromYaml.length;
  for (let start = 0; start < fromYaml.length; start += chunkSize)
    yield* given(read, chunkItems(context, fromYaml.slice(start, start + chunkSize)));
  const itemsFrom = field('items_from');
  const failed = { failed: value.items !== undefined && field('items') === undefined };
  if (value.items_from !== undefined && itemsFrom === undefined) failed.failed = true;
  if (itemsFrom !== undefined) {
    let chunk: RawItem[] = [];
    const shared = value.prompt !== undefined;
    for await (const raws of streamItemsFrom(itemsFrom, file, top, problems, failed, shared)) {
      count += raws.length;
      for (const raw of raws) {
        chunk.push(raw);
        if (chunk.length < chunkSize) continue;
        yield* given(read, chunkItems(context, chunk));
        chunk = [];
      }
    }
    yield* given(read, chunkItems(context, chunk));
  }
  // At the empty list or file the items were to come from: that is the fix (parse.ts).
  if (count === 0 && !failed.failed)
    problems.at(
      top,
      [value.items_from !== undefined ? 'items_from' : 'items'],
      "no items: list them under 'items' or point 'items_from' at a .csv or .jsonl file",
    );
}

/**
 * The manifest's YAML as a streamed read starts from: its settings read, its own problems
 * reported, NotStreamable thrown where its items need each other; null when it is no map.
 */
function streamableTop(file: string, text: string, problems: ProblemList) {
  const topMap = readTopMap(file, text, problems);
  if (topMap === null) return null;
  const { top, value } = topMap;
  // A prompt and no items is one item whose variables make the many: read whole, as a matrix is.
  const bare = value.items === undefined && value.items_from === undefined;
  if (bare || value.matrix !== undefined || value.variants !== undefined) throw new NotStreamable();
  const parsed = topSchema.safeParse(value);
  if (!parsed.success) reportIssues(parsed.error.issues, top, value, topKeysAt, problems);
  const field = fieldReader(value);
  if (field('output')?.name !== undefined) throw new NotStreamable();
  const name = field('name');
  const head = parsed.success && name !== undefined ? manifestHead(file, name, parsed.data) : null;
  return { topMap, field, head };
}

/**
 * The settings of a manifest that can be read a chunk at a time, without reading its items; null
 * when it cannot be (see above), or when its YAML has problems of its own (a whole read says them).
 */
export function streamableHead(file: string, text: string): ManifestHead | null {
  const problems = new ProblemList();
  try {
    const settings = streamableTop(file, text, problems);
    return problems.size === 0 ? (settings?.head ?? null) : null;
  } catch (error) {
    if (error instanceof NotStreamable) return null;
    throw error;
  }
}

/** A chunk counted as given; an empty one is not yielded. */
function* given(read: ManifestRead, items: ManifestItem[]): Generator<ManifestItem[]> {
  if (items.length === 0) return;
  read.count += items.length;
  yield items;
}

interface ChunkContext {
  value: Record<string, unknown>;
  defaults: ReturnType<typeof readDefaults>;
  schema: typeof itemSchema | typeof itemWithSharedPromptSchema;
  read: ManifestRead;
}

/** One chunk through readItems' steps (parse.ts), its ids claimed across the whole stream. */
function chunkItems(context: ChunkContext, raws: readonly RawItem[]): ManifestItem[] {
  if (raws.length === 0) return [];
  const { read } = context;
  const { problems, ids } = read;
  const drafts: ItemDraft[] = [];
  const inputs: ItemInput[] = [];
  const declared: { source: RawItem['source']; id: string }[] = [];
  for (const raw of raws) {
    const id = declaredId(raw.value);
    if (id !== undefined) declared.push({ source: raw.source, id });
    const draft = toDraft(raw, context.schema, problems);
    if (draft) drafts.push(draft);
    const input = draft ? draft.input : isPlainObject(raw.value) ? raw.value.input : undefined;
    if (input === undefined || isPlainObject(input)) inputs.push(draft ?? { source: raw.source, input });
  }
  checkInputs(context.defaults, context.value, inputs, problems, read.notes ?? undefined);
  const { items, sources } = expandAndName(
    context.defaults,
    read.shared!,
    { drafts, declared },
    undefined,
    problems,
    read.templateWarnings,
    // Read again, only a chunk's own ids are claimed: none clashes, the first read said so.
    ids ?? undefined,
    { usedVars: read.usedVars, promptWarnings: read.promptWarnings },
  );
  if (new Set(sources).size !== items.length) throw new NotStreamable();
  return items;
}
