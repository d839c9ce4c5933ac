import { cleanText } from '../clean-text.js';
import type { AttemptRow } from '../render-text.js';
import { usd } from './escape.js';
import type { GalleryCard, GalleryGroup, GalleryModel, GalleryTake } from './model.js';

/**
 * The page's items as one JSON blob, which the page's script draws as tiles (script.ts). Ten
 * thousand pre-rendered cards, each with its <video>, took Chromium over two minutes to become
 * usable (docs/performance.md, "The gallery page"); one blob parses in milliseconds and the
 * script draws only small tiles, loading a video only near the viewport.
 *
 * The blob sits in a `<script type="application/json">` block: a data block, which the browser
 * never runs and the CSP needs no entry for. Every text is cleaned as the rest of the page's
 * (no control characters, no signed URL queries), and `<`, `>`, `&` and the two JavaScript line
 * separators are written as \u escapes, so no text can end the block or start markup.
 */

export interface TakeData {
  take: number;
  job: string | null;
  /** As a person reads it: "$0.20". */
  cost: string;
  secs: number | null;
  /** href null: the page names the file only (see GalleryTake.videos). */
  files: Array<{ href: string | null; label: string; video: boolean }>;
  /** Its check (docs/checks.md): the badge and the check filter; null when never checked. */
  check: { outcome: string; reason: string | null; score?: number } | null;
}

export interface TileData {
  id: string;
  state: string;
  prompt: string;
  /** The item's value on each filter axis (model.axes), '' when it has none. */
  axes: string[];
  matrix: Array<[string, string]>;
  /** The other input fields (those not on the matrix). */
  input: Array<[string, string]>;
  cost: string;
  clip: number | null;
  error: { code: string; message: string } | null;
  /** Newest first; for an item with variants, empty: each variant has its own. */
  takes: TakeData[];
  /** Each variant of an item that asked for several, side by side; null for an item asked once. */
  variants: VariantData[] | null;
  /** The ledger's keeper, as keep.txt writes it (`2`, `2.1`); null when none was chosen. */
  keeper: string | null;
}

/** One variant of an item: a ledger item of its own, with its own state, cost and takes. */
export interface VariantData {
  id: string;
  /** Its number, 1..count: the N of `keep ID:N`. */
  n: number;
  state: string;
  cost: string;
  error: { code: string; message: string } | null;
  /** Newest first. */
  takes: TakeData[];
}

const VIDEO_FILE = /\.(mp4|webm|mov|m4v|ogv|mkv)$/i;
const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g;

const clean = (text: string) => cleanText(text);
const pairs = (list: Array<[string, string]>): Array<[string, string]> =>
  list.map(([name, value]) => [clean(name), clean(value)]);

function takeData(take: GalleryTake): TakeData {
  return {
    take: take.take,
    job: take.jobId === null ? null : clean(take.jobId),
    cost: usd(take.costUsd),
    secs: take.generationSeconds,
    files: take.videos.map((file) => ({
      // A presigned link's query is what makes it work: it is kept, never shown as text.
      href: file.href,
      label: clean(file.label),
      video: VIDEO_FILE.test(file.label),
    })),
    check: take.check && {
      ...take.check,
      reason: take.check.reason === null ? null : clean(take.check.reason),
    },
  };
}

const errorData = (card: GalleryCard) =>
  card.error && { code: clean(card.error.code), message: clean(card.error.message) };

/**
 * One tile per manifest item. An item with variants shares its prompt and parameters with all of
 * them (they differ only in the variant number), so the tile carries them once, from variant 1.
 */
export function tileData(group: GalleryGroup, axes: readonly string[]): TileData {
  const [first] = group.cards as [GalleryCard];
  const tile = cardTile(first, axes);
  tile.keeper = group.keeper;
  if (first.variant === null) return tile;
  return {
    ...tile,
    id: clean(group.id),
    state: group.state,
    cost: usd(group.costUsd),
    error: null,
    takes: [],
    variants: group.cards.map((card) => ({
      id: clean(card.id),
      n: card.variant?.number ?? 1,
      state: card.state,
      cost: usd(card.costUsd),
      error: errorData(card),
      takes: card.takes.map(takeData),
    })),
  };
}

function cardTile(card: GalleryCard, axes: readonly string[]): TileData {
  return {
    id: clean(card.id),
    state: card.state,
    prompt: clean(card.prompt),
    axes: axes.map((axis) => clean(card.matrix.find(([name]) => name === axis)?.[1] ?? '')),
    matrix: pairs(card.matrix),
    input: pairs(card.input.filter(([field]) => !card.matrix.some(([axis]) => axis === field))),
    cost: usd(card.costUsd),
    clip: card.clipSeconds,
    error: errorData(card),
    takes: card.takes.map(takeData),
    variants: null,
    keeper: null,
  };
}

/** One row of the attempts table, cell by cell as the table shows them. */
function attemptCells(row: AttemptRow): string[] {
  return [
    clean(row.item_id),
    String(row.seq),
    clean(row.key_prefix),
    clean(row.job_id ?? ''),
    clean(row.status),
    usd(row.cost_usd),
    usd(row.refunded_usd),
    clean(row.sent_at),
    clean(row.completed_at ?? ''),
    clean(row.error ?? ''),
  ];
}

/** JSON text made safe inside a `<script type="application/json">` block (see above). */
export function scriptSafe(json: string): string {
  return json.replace(UNSAFE_IN_SCRIPT, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One tile's JSON text, safe in the data block: the page streams its tiles one by one. */
export function tileJson(group: GalleryGroup, axes: readonly string[]): string {
  return scriptSafe(JSON.stringify(tileData(group, axes)));
}

/** One row of the attempts table as JSON text, safe in the data block. */
export function attemptJson(row: AttemptRow): string {
  return scriptSafe(JSON.stringify(attemptCells(row)));
}

/**
 * The data block's text around its tiles and rows: `JSON.stringify({ tiles, attempts })` is these
 * with the elements joined by commas, so a page written piece by piece (page-stream.ts) is the
 * same text as one made whole.
 */
export const DATA_OPEN = '{"tiles":[';
export const DATA_MIDDLE = '],"attempts":[';
export const DATA_CLOSE = ']}';

/** The JSON text of every tile and attempt, safe inside a `<script type="application/json">` block. */
export function pageData(model: GalleryModel, attempts: readonly AttemptRow[]): string {
  const axes = model.axes.map(({ axis }) => axis);
  const tiles = model.groups.map((group) => tileJson(group, axes)).join(',');
  return `${DATA_OPEN}${tiles}${DATA_MIDDLE}${attempts.map(attemptJson).join(',')}${DATA_CLOSE}`;
}
