import type { PlanItem } from './plan-walk.js';

/**
 * Items of one run asking for the very same request as another (plan-reuses.ts, a twin): they are
 * no paid result found again but copies, generated once. `plan` counts them apart from takes found
 * already paid for, and warns when the copies outnumber the distinct requests they copy: a manifest
 * that repeats a prompt most likely meant several different videos of it.
 */
export interface PlanCopies {
  /** Items that copy the take of another item of the run. */
  copies: number;
  /** The distinct requests they copy (the items submitted for them). */
  requests: number;
}

export function planCopies(items: Iterable<PlanItem>): PlanCopies {
  const count = new CopiesCount();
  for (const item of items) count.see(item);
  return count.result();
}

/** planCopies an item at a time, as a streamed plan's lines go past (plan-stream.ts). */
export class CopiesCount {
  readonly #firsts = new Set<string>();
  #copies = 0;

  see(item: PlanItem): void {
    if (item.plan !== 'reused' || item.reused_from?.take !== null) return;
    this.#copies += 1;
    this.#firsts.add(item.reused_from.item);
  }

  result(): PlanCopies {
    return { copies: this.#copies, requests: this.#firsts.size };
  }
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** `32 copies of 8 distinct requests, generated once`, for the summary line. */
export function copiesWords({ copies, requests }: PlanCopies): string {
  return `${plural(copies, 'copy', 'copies')} of ${plural(requests, 'distinct request')}, generated once`;
}

/** The warning when the copies outnumber the requests they copy; null otherwise. */
export function copiesWarning(found: PlanCopies, items: number): string | null {
  if (found.copies <= found.requests) return null;
  return (
    `${found.copies} of the ${items} items ask for the very same request as another item (the same model, ` +
    `input and prompt): only ${plural(found.requests, 'distinct request')} ${found.requests === 1 ? 'is' : 'are'} ` +
    'generated, once each, and the others get a copy of the same video. For several different videos of one ' +
    "prompt, set 'variants: N' on the item (each variant is generated on its own), or give each item a " +
    'variable its prompt uses, so that every request differs'
  );
}
