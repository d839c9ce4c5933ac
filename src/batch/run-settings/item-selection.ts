import { UserError } from '../../errors.js';
import { itemsNamed, type Manifest } from '../../manifest/index.js';
import { didYouMean } from '../../suggest.js';

/**
 * `run --only`: item ids or globs (`*` any run of characters, `?` one), given as repeated flags or
 * separated by commas. Each also selects the children expanded from what it matches (`kayak`
 * selects `kayak.16-9`). Null when no `only` was given (every item); a pattern that matches no item
 * is a usage error, since running nothing on purpose is never what was meant.
 */
export function selectItems(manifest: Manifest, patterns: readonly string[]): ReadonlySet<string> | null {
  const wanted = patterns.flatMap((pattern) => pattern.split(',')).map((pattern) => pattern.trim());
  if (wanted.length === 0) return null;
  const ids = manifest.items.map((item) => item.id);
  const selected = new Set<string>();
  for (const pattern of wanted) {
    if (pattern === '')
      throw new UserError('`only` needs an item id or a glob, got an empty one', 'selection_empty', {
        option: 'only',
        pattern,
      });
    // An id selects itself and the items expanded from it (matrix and template children, `<id>.*`),
    // and an item's id all its variants (`<id>.v1` the first alone), whatever ids they were given.
    const matches = [
      ...ids.filter((id) => globMatches(pattern, id) || globMatches(`${pattern}.*`, id)),
      ...itemsNamed(manifest.items, pattern).map((item) => item.id),
    ];
    if (matches.length === 0)
      throw new UserError(
        `\`only\` ${pattern} matches no item of ${manifest.name}${didYouMean(pattern, ids)}; nothing was submitted`,
        'selection_empty',
        { option: 'only', pattern },
      );
    for (const id of matches) selected.add(id);
  }
  return selected;
}

export function globMatches(pattern: string, id: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(id);
}
