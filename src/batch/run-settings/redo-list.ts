import type { ItemRecord } from '../../ledger/index.js';
import { itemsNamed, type Manifest } from '../../manifest/index.js';
import { didYouMean } from '../../suggest.js';

/**
 * The ledger items a redo names: an item with variants by its id stands for all of them, `<id>.v1`
 * for its first alone (variants.ts); a name that stands for nothing is kept, for redoProblem to refuse.
 */
export function redoIds(manifest: Manifest, names: readonly string[]): string[] {
  const ids = names.flatMap((name) => {
    const named = itemsNamed(manifest.items, name);
    return named.length > 0 ? named.map((item) => item.id) : [name];
  });
  return [...new Set(ids)];
}

/** Why the redo cannot start (nothing is sent then): the words, and the item and its state; or null. */
export function redoProblem(
  ids: readonly string[],
  manifest: Manifest,
  records: readonly ItemRecord[],
): { message: string; fields: { option: 'redo'; ids: string[]; state: string | null } } | null {
  const known = new Set(manifest.items.map((item) => item.id));
  const states = new Map(records.map((record) => [record.itemId, record.state]));
  for (const id of ids) {
    if (!known.has(id)) {
      const hint = didYouMean(id, [...known]);
      const message = `\`redo\` ${id}: no item '${id}' in ${manifest.name}${hint}`;
      return { message, fields: { option: 'redo', ids: [id], state: null } };
    }
    const state = states.get(id) ?? 'pending';
    if (state !== 'done') {
      const message = `\`redo\` ${id}: the item is ${state.replace(/_/g, ' ')}, not done; a redo makes a new take of a done item (a plain run takes care of the others)`;
      return { message, fields: { option: 'redo', ids: [id], state } };
    }
  }
  return null;
}
