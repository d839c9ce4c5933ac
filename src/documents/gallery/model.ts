import { type AttemptRecord, type ItemState, type ShownCheck, shownCheck } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { formatUsd } from '../../money.js';
import type { StatusReport } from '../status-report.js';
import { type LedgerView, takesOf } from '../status-view.js';
import { fileHref, showValue } from './escape.js';
import { type CardGroup, type GalleryKeeper, groupCards, STATE_ORDER } from './groups.js';

/**
 * What the gallery shows, as plain data (pure): one card per ledger item, gathered in one group per
 * manifest item (its variants side by side), problems first.
 */

export interface GalleryTake {
  take: number;
  jobId: string | null;
  costUsd: string;
  /** Seconds from the committed request to the finished job, when both are known. */
  generationSeconds: number | null;
  completedAt: string | null;
  /**
   * As GalleryOptions.href maps each saved file: relative to the page, or a presigned URL; null
   * when a page that travels (presigned links) would otherwise name a local path: then the page
   * shows the file's name only.
   */
  videos: Array<{ href: string | null; label: string }>;
  /** The take's check against its request (docs/checks.md); null when it was never checked. */
  check: ShownCheck | null;
}

export interface GalleryCard {
  id: string;
  state: ItemState;
  prompt: string;
  matrix: Array<[axis: string, value: string]>;
  input: Array<[field: string, value: string]>;
  costUsd: string;
  clipSeconds: number | null;
  error: { code: string; message: string } | null;
  takes: GalleryTake[];
  /** Which variant of its manifest item this is (`variants: N`); null for an item asked once. */
  variant: { of: string; number: number; count: number } | null;
}

export type GalleryGroup = CardGroup<GalleryCard>;

export interface GalleryModel {
  manifest: string;
  /** The manifest path as the redo command should name it. */
  manifestArg: string;
  generatedAt: string;
  /** Which ledger the page was made from, as the page says it (see ledgerLine). */
  ledgerLine: string;
  totals: StatusReport['totals'];
  axes: Array<{ axis: string; values: string[] }>;
  states: ItemState[];
  /** The check outcomes of the items' current takes, in CHECK_ORDER: the check filter's choices. */
  checks: CheckFilter[];
  /** Every ledger item, in the groups' order. */
  cards: GalleryCard[];
  /** One per manifest item: what the page draws as one tile. */
  groups: GalleryGroup[];
  /** The options that name the batch's ledger (`--sandbox`, `--ledger X`), for the keep command. */
  ledgerArgs: string[];
  warnings: string[];
  /** Set when the hrefs are presigned URLs, which stop working: when, and how to get fresh ones. */
  links: ExpiringLinks | null;
}

export interface ExpiringLinks {
  /** ISO time after which the storage refuses the links. */
  expireAt: string;
  /** The mediabatch arguments that write this page again with fresh links. */
  refreshArgs: string[];
}

export interface GalleryOptions {
  /**
   * Where the page links each saved file (the ledger's path or s3:// URI). The model stays pure:
   * the caller decides whether that is a path relative to the page (pageRelativeHref) or a URL
   * it signed for a bucket.
   */
  href: (savedPath: string) => string;
  manifestArg: string;
  generatedAt: string;
  ledger: LedgerFacts;
  links?: ExpiringLinks | null;
  /** The ledger's keepers (docs/gallery.md, "Variants and keepers"); none when left out. */
  keepers?: readonly GalleryKeeper[];
  ledgerArgs?: string[];
}

export interface LedgerFacts {
  path: string;
  exists: boolean;
  /** The service the ledger is bound to, as a person reads it; null before the first run. */
  service: string | null;
}

/** Links to local files relative to the page at `htmlPath`, so the two can be moved together. */
export function pageRelativeHref(manifestFile: string, htmlPath: string): (savedPath: string) => string {
  const baseDir = manifestFile.replace(/[/\\][^/\\]*$/, '');
  return (savedPath) => fileHref(savedPath, baseDir, htmlPath);
}

export function buildGallery(
  manifest: Manifest,
  view: LedgerView,
  report: StatusReport,
  options: GalleryOptions,
): GalleryModel {
  const attemptsByItem = group(view.attempts, (attempt) => attempt.itemId);
  const filesByAttempt = group(view.files, (file) => file.attemptId);
  const statusById = new Map(report.items.map((item) => [item.id, item]));
  const checkOf = checksByAttempt(view);
  const travels = (options.links ?? null) !== null;
  // On a page that travels, a link that is not a URL would be a path of this machine.
  const hrefOf = (path: string): string | null => shownHref(options.href(path), travels);
  const cards = manifest.items.map((item): GalleryCard => {
    const takes = takesOf(attemptsByItem.get(item.id) ?? []).map((attempt) => {
      const paths = (filesByAttempt.get(attempt.id) ?? []).map((file) => file.path);
      return toTake({ ...attempt, check: checkOf.get(attempt.id) ?? null }, paths, paths.map(hrefOf));
    });
    return cardOf(item, statusById.get(item.id)!, takes);
  });
  // A stable sort: within a state, groups keep the manifest's order.
  const groups = groupCards(cards, options.keepers ?? []);
  groups.sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state]);
  return {
    ...pageNames(manifest, options),
    totals: report.totals,
    axes: filterAxes(manifest),
    states: [...new Set(cards.map((card) => card.state))].sort((a, b) => STATE_ORDER[a] - STATE_ORDER[b]),
    checks: checkOutcomes(cards),
    cards: groups.flatMap((entry) => entry.cards),
    groups,
    warnings: report.warnings,
  };
}

/** What the page says of the manifest, the ledger and its links: names only on a page that travels. */
export function pageNames(
  manifest: Pick<Manifest, 'name'>,
  options: Omit<GalleryOptions, 'href' | 'keepers'>,
): Pick<GalleryModel, 'manifest' | 'manifestArg' | 'generatedAt' | 'ledgerLine' | 'ledgerArgs' | 'links'> {
  const travels = (options.links ?? null) !== null;
  return {
    manifest: manifest.name,
    manifestArg: travels ? nameOnly(options.manifestArg) : options.manifestArg,
    generatedAt: options.generatedAt,
    ledgerLine: ledgerLine(options.ledger, travels),
    ledgerArgs: (options.ledgerArgs ?? []).map((word) => (travels ? nameOnly(word) : word)),
    links: travels ? { ...options.links!, refreshArgs: options.links!.refreshArgs.map(nameOnly) } : null,
  };
}

/** A saved file's link as the page holds it: null for a local one on a page that travels. */
export function shownHref(href: string, travels: boolean): string | null {
  return travels && !/^https?:\/\//i.test(href) ? null : href;
}

/** What an item's status shows on its card. */
export type CardStatus = Pick<StatusReport['items'][number], 'state' | 'cost_usd' | 'error'>;

/** One ledger item's card: the manifest's item, its status and its takes (newest first). */
export function cardOf(
  item: Manifest['items'][number],
  status: CardStatus,
  takes: GalleryTake[],
): GalleryCard {
  const { prompt, ...input } = item.input;
  const seconds = item.input.seconds;
  return {
    id: item.id,
    state: status.state,
    prompt: String(prompt ?? ''),
    matrix: axisValues(item),
    input: Object.entries(input).map(([field, value]) => [field, showValue(value)]),
    costUsd: status.cost_usd,
    clipSeconds: typeof seconds === 'number' ? seconds : null,
    error: status.error,
    takes,
    variant: item.variant ?? null,
  };
}

/**
 * A page with presigned links travels (it sits in a bucket, or is a file made to be sent), so it
 * names no local path: reviewers need not learn the writer's folders, and could not use them. A
 * path that would place a file on this machine (absolute, or climbing out with ..) is reduced to
 * its name; an s3:// URI, a relative name and anything else are kept.
 */
export function nameOnly(word: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(word) && !/^file:/i.test(word)) return word;
  const local = /^(\/|\\|[A-Za-z]:[\\/]|file:|\.\.([\\/]|$))/i.test(word);
  return local ? (word.split(/[/\\]/).filter(Boolean).pop() ?? '') : word;
}

/** The ledger as the page names it: its path, or only its file name on a page that travels. */
function ledgerLine(ledger: LedgerFacts, travels: boolean): string {
  const where = travels ? nameOnly(ledger.path) : ledger.path;
  return ledger.exists
    ? `Ledger: ${where}; service: ${ledger.service ?? 'none yet'}`
    : `No ledger yet at ${where}: nothing has run.`;
}

/**
 * A card's matrix values, then its template variables (a variable named like a matrix axis is
 * shown once, as the axis): both are what a person filters a campaign by.
 */
function axisValues(item: Manifest['items'][number]): Array<[string, string]> {
  const matrix = Object.entries(item.matrix ?? {});
  const vars = Object.entries(item.vars ?? {}).filter(([name]) => !Object.hasOwn(item.matrix ?? {}, name));
  return [...matrix, ...vars].map(([axis, value]) => [axis, showValue(value)]);
}

/** Every matrix axis, and each variable that takes more than one value across the items. */
export function filterAxes(manifest: Manifest): GalleryModel['axes'] {
  const matrixAxes = Object.keys(manifest.items[0]?.matrix ?? {});
  const values = new Map<string, Set<string>>(matrixAxes.map((axis) => [axis, new Set()]));
  for (const item of manifest.items) {
    for (const [axis, value] of axisValues(item)) {
      const seen = values.get(axis) ?? new Set<string>();
      values.set(axis, seen.add(value));
    }
  }
  return [...values]
    .filter(([axis, seen]) => matrixAxes.includes(axis) || seen.size > 1)
    .map(([axis, seen]) => ({ axis, values: [...seen] }));
}

/** What a take shows of the attempt that holds its files, and its check. */
export type TakeAttempt = Pick<
  AttemptRecord,
  'take' | 'jobId' | 'amountMicros' | 'refundedMicros' | 'createdAt' | 'completedAt'
> & { check?: ShownCheck | null };

/** A take: the attempt that holds its files, those files' paths in index order, and each one's link. */
export function toTake(
  attempt: TakeAttempt,
  paths: readonly string[],
  hrefs: ReadonlyArray<string | null>,
): GalleryTake {
  const started = Date.parse(attempt.createdAt);
  const finished = attempt.completedAt === null ? Number.NaN : Date.parse(attempt.completedAt);
  const elapsed = (finished - started) / 1000;
  return {
    take: attempt.take ?? 1,
    jobId: attempt.jobId,
    costUsd: formatUsd(attempt.amountMicros - attempt.refundedMicros),
    generationSeconds: Number.isFinite(elapsed) && elapsed >= 0 ? Math.round(elapsed * 10) / 10 : null,
    completedAt: attempt.completedAt,
    videos: paths.map((path, index) => ({ href: hrefs[index]!, label: path.split(/[/\\]/).pop() ?? path })),
    check: attempt.check ?? null,
  };
}

/** A take's check as the page filters by it: a take never checked is unchecked. */
export type CheckFilter = ShownCheck['outcome'];
export const CHECK_ORDER: readonly CheckFilter[] = ['failed', 'unchecked', 'passed'];

/** What the check filter matches on a card: its newest take's check; null for a card with no take. */
export function cardCheck(card: Pick<GalleryCard, 'takes'>): CheckFilter | null {
  const [newest] = card.takes;
  return newest === undefined ? null : (newest.check?.outcome ?? 'unchecked');
}

function checkOutcomes(cards: readonly GalleryCard[]): CheckFilter[] {
  const seen = new Set(cards.map(cardCheck));
  return CHECK_ORDER.filter((outcome) => seen.has(outcome));
}

/** The in-memory view's checks by attempt, shown as every document shows them. */
export function checksByAttempt(view: Pick<LedgerView, 'checks'>): Map<number, ShownCheck> {
  return new Map((view.checks ?? []).map((check) => [check.attemptId, shownCheck(check)]));
}

function group<T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}
