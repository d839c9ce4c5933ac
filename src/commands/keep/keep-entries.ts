import { UserError } from '../../errors.js';
import type { KeeperChange, SavedTake } from '../../ledger/index.js';
import { itemGroup, type ManifestItem } from '../../manifest/index.js';
import { didYouMean } from '../../suggest.js';

/**
 * What `keep` was asked, checked against the manifest and the ledger's saved takes (pure): each
 * entry `ID:VARIANT[.TAKE]` becomes one keeper change, or the first bad entry refuses them all.
 */

/** An entry as given (`a:2`), or read from a list file with where it stands in it. */
export type KeepEntry = string | { entry: string; file: string; line: number };

/** One manifest item's keeper as asked: the take chosen (its files), or null to clear it. */
export interface KeepChoice {
  itemId: string;
  take: SavedTake | null;
  /** How the person wrote it, with its place, for a refusal found later (a missing file). */
  where: string;
}

/** `ID:N`, `ID:N.T` or `ID:none`; the id is everything before the last colon. */
const ENTRY = /^(?<id>.+):(?:(?<none>none)|(?<variant>[1-9]\d*)(?:\.(?<take>[1-9]\d*))?)$/;

/** The manifest's items by group (`variant.of`, or the item's id) and variant number. */
function variantsByGroup(items: readonly ManifestItem[]): Map<string, Map<number, string>> {
  const groups = new Map<string, Map<number, string>>();
  for (const item of items) {
    const group = itemGroup(item);
    if (!groups.has(group)) groups.set(group, new Map());
    groups.get(group)!.set(item.variant?.number ?? 1, item.id);
  }
  return groups;
}

/** The refusal of one entry: where it is, what is wrong, and that nothing was kept. */
export function keepRefusal(
  where: string,
  problem: string,
  code: 'keep_invalid' | 'keep_file_missing',
  fields = {},
): UserError {
  return new UserError(`${where}: ${problem}; nothing was kept`, code, fields);
}

function whereOf(entry: KeepEntry): { text: string; where: string; fields: Record<string, unknown> } {
  if (typeof entry === 'string')
    return { text: entry, where: entry.trim() === '' ? `'${entry}'` : entry, fields: { entry } };
  return {
    text: entry.entry,
    where: `${entry.file}:${entry.line}: ${entry.entry}`,
    fields: { entry: entry.entry, file: entry.file, line: entry.line },
  };
}

/** Every entry resolved, or the first bad one refused (keep_invalid): all of them or none. */
export function resolveKeeps(
  entries: readonly KeepEntry[],
  items: readonly ManifestItem[],
  saved: readonly SavedTake[],
): KeepChoice[] {
  const groups = variantsByGroup(items);
  const chosen = new Map<string, KeepChoice>();
  for (const entry of entries) {
    const { text, where, fields } = whereOf(entry);
    const refuse = (problem: string) => keepRefusal(where, problem, 'keep_invalid', fields);
    const match = ENTRY.exec(text.trim())?.groups;
    if (match === undefined) throw refuse('not ID:VARIANT[.TAKE] (N, N.T, or none to clear the keeper)');
    const id = match.id!;
    const variants = groups.get(id);
    if (variants === undefined) throw refuse(unknownItem(id, groups, items));
    const choice: KeepChoice = { itemId: id, take: null, where };
    if (match.none === undefined)
      choice.take = takeOf(id, variants, Number(match.variant), match.take, saved, refuse);
    const earlier = chosen.get(id);
    if (earlier !== undefined && earlier.take?.attemptId !== choice.take?.attemptId)
      throw refuse(`'${id}' is already kept otherwise by ${earlier.where}`);
    chosen.set(id, choice);
  }
  return [...chosen.values()];
}

function unknownItem(
  id: string,
  groups: ReadonlyMap<string, unknown>,
  items: readonly ManifestItem[],
): string {
  const variant = items.find((item) => item.id === id && item.variant !== undefined)?.variant;
  if (variant !== undefined)
    return `'${id}' is variant ${variant.number} of '${variant.of}': keep names the item and the variant, ${variant.of}:${variant.number}`;
  return `no item '${id}' in the manifest${didYouMean(id, [...groups.keys()])}`;
}

/** Variant `number`'s newest saved take, or its take `take`: refused when it saved no file. */
function takeOf(
  id: string,
  variants: ReadonlyMap<number, string>,
  number: number,
  take: string | undefined,
  saved: readonly SavedTake[],
  refuse: (problem: string) => UserError,
): SavedTake {
  const ledgerId = variants.get(number);
  if (ledgerId === undefined)
    throw refuse(
      variants.size === 1
        ? `'${id}' has no variants: its take is ${id}:1 (or ${id}:1.T for an earlier take)`
        : `'${id}' has variants 1 to ${variants.size}, not ${number}`,
    );
  const takes = saved.filter((each) => each.itemId === ledgerId);
  const what = variants.size === 1 ? `'${id}'` : `variant ${number} of '${id}'`;
  if (takes.length === 0) throw refuse(`${what} has no saved file yet`);
  if (take === undefined) return takes[takes.length - 1]!;
  const found = takes.filter((each) => each.take === Number(take)).pop();
  if (found === undefined)
    throw refuse(`${what} has no saved take ${take} (saved: ${takes.map((each) => each.take).join(', ')})`);
  return found;
}

/** The ledger's changes for these choices. */
export function keeperChanges(choices: readonly KeepChoice[]): KeeperChange[] {
  return choices.map((choice) => ({
    itemId: choice.itemId,
    kept: choice.take === null ? null : { itemId: choice.take.itemId, take: choice.take.take },
  }));
}
