import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../errors.js';
import type { ItemRecord } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { didYouMean } from '../suggest.js';

/**
 * `run --redo a b` or `--redo @redo.txt` (the file the gallery offers: ids separated by white
 * space, `#` comments). Ids are checked before anything is sent: each must be an item of the
 * manifest with a saved take, since a redo keeps that take and makes a new one.
 */
export function readRedoIds(values: readonly string[], cwd: string): string[] {
  const ids: string[] = [];
  for (const value of values) {
    if (!value.startsWith('@')) {
      ids.push(value);
      continue;
    }
    const file = resolve(cwd, value.slice(1));
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UserError(`--redo ${value}: cannot read ${file}: ${(error as Error).message}`);
    }
    for (const line of text.split(/\r?\n/)) ids.push(...line.replace(/#.*/, '').split(/\s+/).filter(Boolean));
  }
  return [...new Set(ids)];
}

/** Why the redo cannot start (nothing is sent then), or null. */
export function redoProblem(
  ids: readonly string[],
  manifest: Manifest,
  records: readonly ItemRecord[],
): string | null {
  const known = new Set(manifest.items.map((item) => item.id));
  const states = new Map(records.map((record) => [record.itemId, record.state]));
  for (const id of ids) {
    if (!known.has(id)) {
      const hint = didYouMean(id, [...known], (s) => `'${s}'`);
      return `--redo ${id}: no item '${id}' in ${manifest.name}${hint}`;
    }
    const state = states.get(id) ?? 'pending';
    if (state !== 'done') {
      return `--redo ${id}: the item is ${state.replace(/_/g, ' ')}, not done; a redo makes a new take of a done item (a plain run takes care of the others)`;
    }
  }
  return null;
}
