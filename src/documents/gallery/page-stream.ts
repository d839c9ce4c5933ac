import type { AttemptRecord, ItemState, MoneyTotals } from '../../ledger/index.js';
import { itemGroup, type Manifest } from '../../manifest/index.js';
import { formatUsd } from '../../money.js';
import { attemptRow, historyOrder } from '../render-text.js';
import { shownError } from '../status-line.js';
import { expiryWarnings, statusTotals } from '../status-report.js';
import { takesOf } from '../status-view.js';
import type { GalleryAttempt, GalleryEntry } from './entries.js';
import { type CardGroup, cardGroup, latestKeepers, STATES_IN_ORDER } from './groups.js';
import {
  CHECK_ORDER,
  type CheckFilter,
  cardCheck,
  cardOf,
  filterAxes,
  type GalleryCard,
  type GalleryOptions,
  type GalleryTake,
  pageNames,
  shownHref,
  toTake,
} from './model.js';
import { addOrigins, PAGE_END, type PageFacts, pageStart } from './page.js';
import { attemptJson, DATA_CLOSE, DATA_MIDDLE, DATA_OPEN, tileJson } from './page-data.js';

/**
 * The gallery made as the ledger streams past (docs/performance.md, "The gallery page"): each
 * item's card, tile and attempt rows are built when its entry arrives and handed to a sink as
 * JSON text, then dropped, so memory holds one item (one group of variants) at a time, never the
 * ledger. What the page says above its data (totals, states, media origins) is counted on the way
 * and returned. The text is byte for byte what buildGallery and renderGallery make of the same
 * ledger held whole (test/documents/gallery-stream.test.ts).
 */

/** Where the data block's pieces go, in the order the page holds them within each part. */
export interface GallerySink {
  /** A tile's JSON text; the page shows tiles by their group's state (STATE_ORDER), then in this order. */
  tile(state: ItemState, json: string): void;
  /** A row of the attempts table, in the table's order. */
  attempt(json: string): void;
  /** Every file the ledger records, of every attempt: what a target's check looks for (src/batch/gallery/batch-gallery.ts). */
  file?(path: string): void;
}

export interface StreamReads {
  /** Every manifest item's entry in manifest order, then the ledger's other items (GalleryEntry). */
  entries: AsyncIterable<GalleryEntry>;
  money: MoneyTotals;
  /** Succeeded jobs whose files are not saved yet: the page's expiry warnings. */
  unsaved: readonly AttemptRecord[];
}

export interface StreamOptions extends Omit<GalleryOptions, 'href'> {
  /** As GalleryOptions.href; a bucket's presigned URL is signed as its take comes past. */
  href: (savedPath: string) => string | Promise<string>;
}

export async function streamGallery(
  manifest: Manifest,
  reads: StreamReads,
  options: StreamOptions,
  sink: GallerySink,
  now: number,
): Promise<PageFacts> {
  const page = new PageStream(manifest, options, sink);
  for await (const entry of reads.entries) await page.add(entry);
  return {
    ...(await page.end()),
    totals: page.totals(reads.money),
    warnings: expiryWarnings(reads.unsaved, now),
  };
}

/** The page's data as the entries come past, and what the page says of them. */
class PageStream {
  readonly #names;
  readonly #axes;
  readonly #groups: GroupQueue;
  /** The check outcomes of the cards' newest takes (the check filter's choices). */
  readonly #checks = new Set<CheckFilter | null>();
  readonly #counts: Record<ItemState, number> = {
    failed: 0,
    checks_failed: 0,
    expired: 0,
    budget_exceeded: 0,
    in_flight: 0,
    pending: 0,
    done: 0,
  };
  readonly #origins = new Set<string>();
  /** Attempts of items the manifest no longer lists: they close the table, as attemptHistory orders them. */
  readonly #others: GalleryAttempt[] = [];
  #rows = 0;
  /** The manifest's next item: entries come in its order, so a look at it finds each. */
  #next = 0;
  #position: Map<string, number> | null = null;

  constructor(
    private readonly manifest: Manifest,
    private readonly options: StreamOptions,
    private readonly sink: GallerySink,
  ) {
    this.#names = pageNames(manifest, options);
    this.#axes = filterAxes(manifest);
    const axes = this.#axes.map(({ axis }) => axis);
    this.#groups = new GroupQueue(manifest, options.keepers ?? [], (group) =>
      sink.tile(group.state, tileJson(group, axes)),
    );
  }

  async add(entry: GalleryEntry): Promise<void> {
    const { sink } = this;
    if (sink.file) for (const attempt of entry.attempts) for (const path of attempt.files) sink.file(path);
    const index = this.#indexOf(entry.itemId);
    if (index === undefined) {
      this.#others.push(...entry.attempts);
      return;
    }
    if (index < this.#next) throw new Error(`the ledger gave ${entry.itemId} out of the manifest's order`);
    // An item the ledger does not know yet may have no entry: it is pending, with no attempt.
    while (this.#next < index) await this.#card(emptyEntry(this.manifest.items[this.#next]!.id));
    await this.#card(entry);
  }

  #indexOf(itemId: string): number | undefined {
    if (this.manifest.items[this.#next]?.id === itemId) return this.#next;
    // Only when the stream leaves an item out, or has items the manifest does not list.
    this.#position ??= new Map(this.manifest.items.map((item, index) => [item.id, index]));
    return this.#position.get(itemId);
  }

  async #card(entry: GalleryEntry): Promise<void> {
    const item = this.manifest.items[this.#next]!;
    this.#next += 1;
    const state = entry.state ?? 'pending';
    this.#counts[state] += 1;
    const made = cardOf(item, cardStatus(entry, state), await this.#takes(entry.attempts));
    this.#checks.add(cardCheck(made));
    addOrigins(this.#origins, made.takes);
    this.#groups.add(this.#next - 1, made);
    for (const attempt of entry.attempts) this.sink.attempt(attemptJson(attemptRow(attempt)));
    this.#rows += entry.attempts.length;
  }

  /** The item's takes, newest first, their links resolved (signed, for a bucket) as they are made. */
  async #takes(attempts: readonly GalleryAttempt[]): Promise<GalleryTake[]> {
    // takesOf keeps each take's last saved attempt in attempt-id order, as the ledger lists attempts.
    const byId = isById(attempts) ? attempts : [...attempts].sort((a, b) => a.id - b.id);
    const travels = this.#names.links !== null;
    const made: GalleryTake[] = [];
    for (const attempt of takesOf(byId)) {
      const hrefs: Array<string | null> = [];
      for (const path of attempt.files) {
        const href = this.options.href(path);
        hrefs.push(shownHref(typeof href === 'string' ? href : await href, travels));
      }
      made.push(toTake(attempt, attempt.files, hrefs));
    }
    return made;
  }

  /** Once the stream has ended: the items it left out, then the other items' attempts. */
  async end(): Promise<Omit<PageFacts, 'totals' | 'warnings'>> {
    while (this.#next < this.manifest.items.length)
      await this.#card(emptyEntry(this.manifest.items[this.#next]!.id));
    for (const attempt of this.#others.sort(historyOrder))
      this.sink.attempt(attemptJson(attemptRow(attempt)));
    const counts = this.#counts;
    return {
      ...this.#names,
      axes: this.#axes,
      states: STATES_IN_ORDER.filter((state) => counts[state] > 0),
      checks: CHECK_ORDER.filter((outcome) => this.#checks.has(outcome)),
      tiles: this.#groups.count,
      attempts: this.#rows + this.#others.length,
      mediaOrigins: [...this.#origins].sort(),
    };
  }

  totals(money: MoneyTotals): PageFacts['totals'] {
    const noProblems = { files_missing: 0, files_altered: 0, files_touched: 0 };
    return statusTotals(this.manifest, this.#counts, money, noProblems);
  }
}

/** A part of the data block a sink kept: its elements joined by commas, and how many there are. */
export interface DataPart {
  count: number;
}

/**
 * The page in order, from its facts and the parts its sink kept (one per state, and the rows):
 * text to write as it is, and the parts to write whole in between. The tiles' parts follow the
 * states' order, so the page shows problems first, as buildGallery's sort does.
 */
export function* pageLayout<P extends DataPart>(
  facts: PageFacts,
  tiles: Readonly<Record<ItemState, P>>,
  rows: P,
): Generator<string | P> {
  yield `${pageStart(facts)}${DATA_OPEN}`;
  let first = true;
  for (const state of STATES_IN_ORDER) {
    const part = tiles[state];
    if (part.count === 0) continue;
    if (!first) yield ',';
    first = false;
    yield part;
  }
  yield DATA_MIDDLE;
  if (rows.count > 0) yield rows;
  yield `${DATA_CLOSE}${PAGE_END}`;
}

const emptyEntry = (itemId: string): GalleryEntry => ({
  itemId,
  state: null,
  errorCode: null,
  errorMessage: null,
  attempts: [],
});

/** As `status` shows the item (status-report.ts): its state, what its attempts cost net, its error. */
function cardStatus(entry: GalleryEntry, state: ItemState) {
  let net = 0;
  for (const attempt of entry.attempts) net += attempt.amountMicros - attempt.refundedMicros;
  return { state, cost_usd: formatUsd(net), error: shownError(state, entry.errorCode, entry.errorMessage) };
}

function isById(attempts: readonly GalleryAttempt[]): boolean {
  for (let i = 1; i < attempts.length; i += 1) if (attempts[i]!.id < attempts[i - 1]!.id) return false;
  return true;
}

/**
 * Cards gathered into their manifest item's group (its variants), each group handed on once all
 * its cards came, in the order of the groups' first cards, as groupCards orders them. Variants sit
 * next to each other in a manifest, so a group is rarely held for more than its own cards.
 */
class GroupQueue {
  count = 0;
  readonly #ids: string[] = [];
  readonly #sizes: number[] = [];
  readonly #groupOf: number[];
  readonly #waiting = new Map<number, GalleryCard[]>();
  readonly #keepers;
  #next = 0;

  constructor(
    manifest: Manifest,
    keepers: NonNullable<GalleryOptions['keepers']>,
    private readonly emit: (group: CardGroup<GalleryCard>) => void,
  ) {
    // Only an item with variants shares its group: the others need no lookup (a map of 100,000
    // ids is memory the page does not otherwise hold).
    const shared = new Set(manifest.items.flatMap((item) => (item.variant ? [item.variant.of] : [])));
    const index = new Map<string, number>();
    this.#groupOf = manifest.items.map((item) => {
      const id = itemGroup(item);
      let at = shared.has(id) ? index.get(id) : undefined;
      if (at === undefined) {
        at = this.#ids.push(id) - 1;
        if (shared.has(id)) index.set(id, at);
        this.#sizes.push(0);
      }
      this.#sizes[at]! += 1;
      return at;
    });
    this.#keepers = latestKeepers(keepers);
  }

  add(itemIndex: number, card: GalleryCard): void {
    const at = this.#groupOf[itemIndex]!;
    const joined = this.#waiting.get(at) ?? [];
    joined.push(card);
    this.#waiting.set(at, joined);
    let cards = this.#waiting.get(this.#next);
    while (cards !== undefined && cards.length === this.#sizes[this.#next]) {
      const id = this.#ids[this.#next]!;
      this.#waiting.delete(this.#next);
      this.#next += 1;
      this.count += 1;
      this.emit(cardGroup(id, cards, this.#keepers.get(id)));
      cards = this.#waiting.get(this.#next);
    }
  }
}
