/**
 * A manifest's items as a stream: its YAML is read whole (it is small), its `items_from` file a
 * line at a time (items-from-stream.ts), a chunk of items at a time through the same checks and
 * expansion as the whole reader (parse.ts). Across chunks only the ids are kept (item-ids.ts).
 *
 * Ids made by expansion (list variables, the matrix, variants) and names made by `output.name`
 * depend on every other item's (a readable id is kept only if no other item reads the same), so a
 * manifest that uses them is not streamed: the caller reads it whole (NotStreamable).
 */
import { isPlainObject } from '../plain-object.js';
import { declaredId } from './base-ids.js';
import type { ItemDraft } from './expand.js';
import type { ItemInput } from './input-fields.js';
import { ItemIds } from './item-ids.js';
import { streamItemsFrom } from './items-from-stream.js';
import { YamlSource } from './locate.js';
import {
  checkInputs,
  expandAndName,
  fieldReader,
  readDefaults,
  readSharedTemplate,
  readTopMap,
  toDraft,
} from './parse.js';
import { ProblemList } from './problems.js';
import type { RawItem } from './raw-item.js';
import { itemSchema, itemWithSharedPromptSchema, topSchema } from './schema.js';
import type { ManifestItem } from './types.js';
import { reportIssues, topKeysAt } from './zod-issues.js';

/** Items checked and expanded together: enough to amortise each step, few enough to hold. */
const CHUNK = 1000;

/** The manifest uses a feature whose ids or names need every item at once (see above). */
export class NotStreamable extends Error {}

/**
 * Every item of the manifest `file` (its YAML given as `text`), in manifest order, as the whole
 * reader gives them. Problems go to `problems` as they are found, sorted as the whole reader sorts
 * them once the stream ends; an item is yielded before the problems of later items are known, so
 * a caller that must not act on a bad manifest reads the stream through once first.
 */
export async function* streamManifestItems(
  file: string,
  text: string,
  problems: ProblemList,
  /** Items per chunk; small in tests, to cross chunks with few items. */
  chunkSize = CHUNK,
): AsyncGenerator<ManifestItem> {
  const topMap = readTopMap(file, text, problems);
  if (topMap === null) return;
  const { top, value } = topMap;
  if (value.items_from === undefined || value.matrix !== undefined || value.variants !== undefined)
    throw new NotStreamable();
  const parsed = topSchema.safeParse(value);
  if (!parsed.success) reportIssues(parsed.error.issues, top, value, topKeysAt, problems);
  const field = fieldReader(value);
  if (field('output')?.name !== undefined) throw new NotStreamable();
  const context = {
    value,
    shared: readSharedTemplate(top, field, value),
    defaults: readDefaults(top, field),
    schema: value.prompt === undefined ? itemSchema : itemWithSharedPromptSchema,
    ids: new ItemIds(),
    problems,
  };
  let count = 0;
  const yamlItems = field('items') ?? [];
  const fromYaml = yamlItems.map((item, index) => ({
    value: item as unknown,
    source: new YamlSource(file, topMap.doc, topMap.lineCounter, ['items', index]),
  }));
  count += fromYaml.length;
  yield* chunkItems(context, fromYaml);
  const itemsFrom = field('items_from');
  const read = { failed: value.items !== undefined && field('items') === undefined };
  if (itemsFrom === undefined) read.failed = true;
  else {
    let chunk: RawItem[] = [];
    const shared = value.prompt !== undefined;
    for await (const raw of streamItemsFrom(itemsFrom, file, top, problems, read, shared)) {
      count += 1;
      chunk.push(raw);
      if (chunk.length < chunkSize) continue;
      yield* chunkItems(context, chunk);
      chunk = [];
    }
    yield* chunkItems(context, chunk);
  }
  if (count === 0 && !read.failed)
    problems.at(
      top,
      ['items_from'],
      "no items: list them under 'items' or point 'items_from' at a .csv or .jsonl file",
    );
}

interface ChunkContext {
  value: Record<string, unknown>;
  shared: ReturnType<typeof readSharedTemplate>;
  defaults: ReturnType<typeof readDefaults>;
  schema: typeof itemSchema | typeof itemWithSharedPromptSchema;
  ids: ItemIds;
  problems: ProblemList;
}

/** One chunk through readItems' steps (parse.ts), its ids claimed across the whole stream. */
function chunkItems(context: ChunkContext, raws: readonly RawItem[]): ManifestItem[] {
  if (raws.length === 0) return [];
  const { problems, ids } = context;
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
  // Warnings (fields mediabatch does not know) are the whole manifest's: plan reads it whole.
  const warnings = new ProblemList();
  checkInputs(context.defaults, context.value, inputs, problems);
  const { items, sources } = expandAndName(
    context.defaults,
    context.shared,
    { drafts, declared },
    undefined,
    problems,
    warnings,
    ids,
  );
  if (new Set(sources).size !== items.length) throw new NotStreamable();
  return items;
}
