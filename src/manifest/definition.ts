import { hash } from 'node:crypto';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { isS3Uri } from './s3-uri.js';
import type { Manifest, ManifestItem } from './types.js';

/**
 * A batch's definition (docs/shared-ledger.md, "One definition per batch"): the manifest after
 * expansion, in plain JSON values, with nothing that depends on where its copy lives. Every item's
 * request (id, model, input, metadata, max_cost, variant, vars, matrix, output name), the budget,
 * the concurrency, the retries and the output settings. Items are in id order, so that the same
 * batch written differently (key order, comments, `items` against `items_from`, items reordered)
 * is the same definition, and the same hash.
 */
export interface BatchDefinition {
  format: 1;
  name: string;
  budgetMicros: number | null;
  concurrency: number | null;
  retries: number;
  /** An `s3://` location, or a folder relative to the manifest's folder ('/'-separated). */
  output: { dir: string; sidecars: boolean };
  items: ManifestItem[];
  /** duration_tolerance_seconds, only where a manifest sets it (so older definitions keep their hash). */
  durationToleranceSeconds?: number;
  /** video_checks, only where a manifest turns them off (so older definitions keep their hash). */
  videoChecks?: false;
}

/** The manifest's definition. */
export function definitionOf(manifest: Manifest): BatchDefinition {
  const items = manifest.items
    .map((item) => JSON.parse(JSON.stringify(item)) as ManifestItem)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    format: 1,
    name: manifest.name,
    budgetMicros: manifest.budgetMicros,
    concurrency: manifest.concurrency,
    retries: manifest.retries,
    output: { dir: definedOutputDir(manifest), sidecars: manifest.sidecars !== false },
    items,
    ...(manifest.durationToleranceSeconds === undefined
      ? {}
      : { durationToleranceSeconds: manifest.durationToleranceSeconds }),
    ...(manifest.videoChecks === false ? { videoChecks: false as const } : {}),
  };
}

function definedOutputDir(manifest: Manifest): string {
  if (isS3Uri(manifest.outputDir)) return manifest.outputDir;
  return relative(dirname(manifest.file), manifest.outputDir).split(sep).join('/') || '.';
}

/** The definition as the ledger stores it, and the hash two definitions are compared by. */
export function definitionText(definition: BatchDefinition): { text: string; hash: string } {
  const text = canonicalJson(definition);
  return { text, hash: hash('sha256', text, 'hex') };
}

/**
 * The manifest a stored definition stands for, on a machine without a copy of it: `root` is the
 * folder that stands for the manifest's own there (a relative `output.dir` is read against it, and
 * the ledger records saved files relative to it, as every runner does). Its definition is the one
 * given, byte for byte. Items are in id order, the order the definition keeps.
 */
export function manifestOfDefinition(definition: BatchDefinition, root: string): Manifest {
  const { dir, sidecars } = definition.output;
  return {
    file: join(root, `${definition.name}.yaml`),
    name: definition.name,
    budgetMicros: definition.budgetMicros,
    concurrency: definition.concurrency,
    retries: definition.retries,
    outputDir: isS3Uri(dir) ? dir : resolve(root, dir),
    ...(sidecars ? {} : { sidecars: false as const }),
    items: definition.items,
    ...(definition.durationToleranceSeconds === undefined
      ? {}
      : { durationToleranceSeconds: definition.durationToleranceSeconds }),
    ...(definition.videoChecks === false ? { videoChecks: false as const } : {}),
    warnings: [],
  };
}

/** A stored definition read back. */
export function parseDefinition(text: string): BatchDefinition {
  return JSON.parse(text) as BatchDefinition;
}

/** What differs between the batch's definition and another: settings by name, items by id. */
export interface DefinitionDiff {
  settings: Array<{ name: string; batch: unknown; here: unknown }>;
  /** Items only the other definition (here) has. */
  added: string[];
  /** Items only the batch's definition has. */
  removed: string[];
  /** Items in both, with the fields that differ. */
  changed: Array<{ id: string; fields: string[] }>;
}

const SETTINGS: ReadonlyArray<[string, (definition: BatchDefinition) => unknown]> = [
  ['budget_usd', (d) => d.budgetMicros],
  ['concurrency', (d) => d.concurrency],
  ['retries', (d) => d.retries],
  ['output.dir', (d) => d.output.dir],
  ['output.sidecars', (d) => d.output.sidecars],
  ['duration_tolerance_seconds', (d) => d.durationToleranceSeconds ?? null],
  ['video_checks', (d) => d.videoChecks ?? true],
];

/** The item fields a person wrote, by the manifest's names. */
const ITEM_FIELDS: ReadonlyArray<[string, keyof ManifestItem]> = [
  ['model', 'model'],
  ['metadata', 'metadata'],
  ['max_cost_usd', 'maxCostMicros'],
  ['variants', 'variant'],
  ['vars', 'vars'],
  ['matrix', 'matrix'],
  ['output.name', 'name'],
];

export function diffDefinitions(batch: BatchDefinition, here: BatchDefinition): DefinitionDiff {
  const settings = SETTINGS.filter(([, of]) => canonicalJson(of(batch)) !== canonicalJson(of(here))).map(
    ([name, of]) => ({ name, batch: of(batch), here: of(here) }),
  );
  const theirs = new Map(batch.items.map((item) => [item.id, item]));
  const ours = new Set(here.items.map((item) => item.id));
  const changed: DefinitionDiff['changed'] = [];
  const added: string[] = [];
  for (const item of here.items) {
    const other = theirs.get(item.id);
    if (other === undefined) added.push(item.id);
    else {
      const fields = itemFieldsDiffering(other, item);
      if (fields.length > 0) changed.push({ id: item.id, fields });
    }
  }
  const removed = batch.items.filter((item) => !ours.has(item.id)).map((item) => item.id);
  return { settings, added, removed, changed };
}

function itemFieldsDiffering(a: ManifestItem, b: ManifestItem): string[] {
  const same = (x: unknown, y: unknown) => canonicalJson(x ?? null) === canonicalJson(y ?? null);
  const keys = [...new Set([...Object.keys(a.input), ...Object.keys(b.input)])].sort();
  return [
    ...keys.filter((key) => !same(a.input[key], b.input[key])).map((key) => `input.${key}`),
    ...ITEM_FIELDS.filter(([, field]) => !same(a[field], b[field])).map(([name]) => name),
  ];
}
