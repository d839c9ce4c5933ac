import type { ItemState } from '../../ledger/index.js';
import { itemGroup, type ManifestItem } from '../../manifest/index.js';
import { formatUsd, parseUsd, sumMicros } from '../../money.js';

/**
 * An item asked for several variants (`variants: N`) is N ledger items; the gallery shows them as one
 * group, side by side, because the question a person answers there is "which of these do I keep?"
 * (docs/gallery.md, "Variants and keepers"). Pure: cards in, groups out.
 */

/** What a keeper is to the gallery: the same fields as the ledger's keepers table (KeeperRecord). */
export interface GalleryKeeper {
  /** The manifest item: `variant.of`, or the item's own id when it has no variants. */
  itemId: string;
  /** The ledger item (the variant) whose take is kept. */
  keptItemId: string;
  take: number;
  chosenAt: string;
}

/** The part of a card grouping needs (model.ts's GalleryCard has it all). */
export interface GroupableCard {
  id: string;
  state: ItemState;
  costUsd: string;
  variant: ManifestItem['variant'] | null;
  /** Newest first. */
  takes: ReadonlyArray<{ take: number }>;
}

export interface CardGroup<C extends GroupableCard> {
  /** The manifest item's id (variant 1 keeps it): what `keep` names. */
  id: string;
  /** The state that needs the person most: a failed variant makes the group sort with the failed. */
  state: ItemState;
  costUsd: string;
  /** Variant 1 first; one card for an item without variants. */
  cards: C[];
  /** The ledger's keeper as `keep` writes it, `N` (variant N's newest take) or `N.T`; null: none. */
  keeper: string | null;
}

/** Problems first, so a person sees what needs them before what went well. */
export const STATE_ORDER: Record<ItemState, number> = {
  failed: 0,
  checks_failed: 1,
  expired: 2,
  budget_exceeded: 3,
  in_flight: 4,
  pending: 5,
  done: 6,
};

/** Every state, problems first (STATE_ORDER). */
export const STATES_IN_ORDER = (Object.keys(STATE_ORDER) as ItemState[]).sort(
  (a, b) => STATE_ORDER[a] - STATE_ORDER[b],
);

/** The manifest item a card belongs to, by the manifest's own rule. */
const groupIdOf = (card: GroupableCard): string =>
  itemGroup({ id: card.id, variant: card.variant ?? undefined });

/** Cards (in manifest order) grouped by manifest item, in the order of each item's first card. */
export function groupCards<C extends GroupableCard>(
  cards: readonly C[],
  keepers: readonly GalleryKeeper[],
): Array<CardGroup<C>> {
  const byId = new Map<string, C[]>();
  for (const card of cards) {
    const id = groupIdOf(card);
    const list = byId.get(id);
    if (list) list.push(card);
    else byId.set(id, [card]);
  }
  const keeperOf = latestKeepers(keepers);
  return [...byId].map(([id, members]) => cardGroup(id, members, keeperOf.get(id)));
}

/** One manifest item's group, from all its cards (any order) and its keeper (latestKeepers). */
export function cardGroup<C extends GroupableCard>(
  id: string,
  members: C[],
  keeper: GalleryKeeper | undefined,
): CardGroup<C> {
  members.sort((a, b) => (a.variant?.number ?? 1) - (b.variant?.number ?? 1));
  return {
    id,
    state: worstState(members),
    costUsd: formatUsd(sumMicros(members.map((card) => parseUsd(card.costUsd) ?? 0))),
    cards: members,
    keeper: keeper ? keeperSpec(members, keeper) : null,
  };
}

/** The keeper of each manifest item: the one chosen last, should the list hold several. */
export function latestKeepers(keepers: readonly GalleryKeeper[]): Map<string, GalleryKeeper> {
  const latest = new Map<string, GalleryKeeper>();
  for (const keeper of keepers) {
    const seen = latest.get(keeper.itemId);
    if (!seen || seen.chosenAt <= keeper.chosenAt) latest.set(keeper.itemId, keeper);
  }
  return latest;
}

/**
 * A keeper in the words of `keep` and keep.txt: `N` while the kept take is its variant's newest,
 * `N.T` once a later take came; null when the kept item is no longer one of the group's.
 */
export function keeperSpec(cards: readonly GroupableCard[], keeper: GalleryKeeper): string | null {
  const card = cards.find((entry) => entry.id === keeper.keptItemId);
  if (!card) return null;
  const number = card.variant?.number ?? 1;
  return card.takes[0]?.take === keeper.take ? String(number) : `${number}.${keeper.take}`;
}

function worstState(cards: readonly GroupableCard[]): ItemState {
  return cards.reduce<ItemState>(
    (worst, card) => (STATE_ORDER[card.state] < STATE_ORDER[worst] ? card.state : worst),
    'done',
  );
}
