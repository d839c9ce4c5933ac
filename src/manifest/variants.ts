/**
 * `variants: N`: an item generated N times, as N independent paid jobs, so that a person can keep
 * the best take (docs/manifest.md, "Variants"). Each variant is an item of its own for the ledger,
 * the budget and the files: variant 1 keeps the item's id, so that asking for more variants later
 * pays nothing again for the take already made, and variant n's id is `<id>.v<n>`.
 */
import { z } from 'zod';
import type { ManifestItem } from './types.js';

/** Enough for any review by eye; a typo such as 1000 would otherwise buy a thousand jobs an item. */
export const MAX_VARIANTS = 100;

/** The placeholder that prints the variant's number (1..N) in a prompt or an input text. */
export const VARIANT_VAR = 'variant';

export const variantsSchema = z
  .int({
    error: (issue) =>
      `must be a whole number of variants from 1 to ${MAX_VARIANTS}, not ${JSON.stringify(issue.input)}`,
  })
  .min(1, { error: `must be at least 1 (one variant of each item)` })
  .max(MAX_VARIANTS, {
    error: `must be at most ${MAX_VARIANTS}: each variant is a paid job of every item it applies to`,
  });

/** The id segment variant n adds: none for variant 1, `v<n>` after it. */
export function variantSegment(variant: number): string | null {
  return variant > 1 ? `v${variant}` : null;
}

const PLACEHOLDER = `{${VARIANT_VAR}}`;

/**
 * The input with `{variant}` filled in its top-level text values: a value that is the placeholder
 * alone becomes the number (a model's `seed: "{variant}"` is sent as 1, 2, 3), any other text has it
 * replaced. Only where the item asks for variants, so that texts written before stay as they were.
 */
export function inputForVariant(input: Record<string, unknown>, variant: number): Record<string, unknown> {
  let filled: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(input)) {
    if (key === 'prompt' || typeof value !== 'string' || !value.includes(PLACEHOLDER)) continue;
    filled ??= { ...input };
    filled[key] = value === PLACEHOLDER ? variant : value.replaceAll(PLACEHOLDER, String(variant));
  }
  return filled ?? input;
}

/** Variant 1's id alias, `<id>.v1`, which names that variant alone where `<id>` names them all. */
const FIRST_ALIAS = /\.v1$/;

/**
 * The items a name given by a person stands for: an item with variants by its id stands for every
 * variant, `<id>.v1` for its first alone; any other id for itself. Empty when nothing matches.
 */
export function itemsNamed(items: readonly ManifestItem[], name: string): ManifestItem[] {
  const group = items.filter((item) => item.variant?.of === name);
  if (group.length > 0) return group;
  const exact = items.filter((item) => item.id === name);
  if (exact.length > 0 || !FIRST_ALIAS.test(name)) return exact;
  const of = name.replace(FIRST_ALIAS, '');
  return items.filter((item) => item.variant?.of === of && item.variant.number === 1);
}

/** The id of the manifest item a ledger item is a variant of: its own id when it has no variants. */
export function itemGroup(item: Pick<ManifestItem, 'id' | 'variant'>): string {
  return item.variant?.of ?? item.id;
}

/**
 * The order a run submits in and `plan` spends the budget in (docs/manifest.md, "Variants"):
 * breadth first, variant 1 of every item, then variant 2 of every item, and so on, each round in
 * manifest order; so a budget that fits only some variants buys one candidate of every item before a
 * second of any. Items without variants count as variant 1. Returns the positions, stable.
 */
export function submitOrder(items: ReadonlyArray<Pick<ManifestItem, 'variant'>>): number[] {
  const positions = items.map((_, index) => index);
  if (!items.some((item) => (item.variant?.number ?? 1) > 1)) return positions;
  const round = (index: number) => items[index]!.variant?.number ?? 1;
  return positions.sort((a, b) => round(a) - round(b) || a - b);
}
