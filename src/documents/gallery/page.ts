import { createHash } from 'node:crypto';
import type { AttemptRow } from '../render-text.js';
import { h, usd } from './escape.js';
import type { ExpiringLinks, GalleryModel, GalleryTake } from './model.js';
import { pageData } from './page-data.js';
import { GALLERY_SCRIPT } from './script.js';
import { GALLERY_STYLE } from './style.js';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * Exactly what the page needs and nothing else: videos from its own folder (file: when opened
 * from disk) or, for outputs in a bucket, from the storage origins its presigned links name; its
 * own style and script by hash. No other network, no other script, no frames, no forms.
 */
export function galleryCsp(mediaOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    ["media-src 'self' file:", ...mediaOrigins].join(' '),
    `style-src ${sha256(GALLERY_STYLE)}`,
    `script-src ${sha256(GALLERY_SCRIPT)}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const WORDS: Record<string, string> = {
  done: 'done',
  failed: 'failed',
  checks_failed: 'failed checks',
  expired: 'expired',
  budget_exceeded: 'budget exceeded',
  in_flight: 'in flight',
  pending: 'pending',
};

function totals(model: Pick<PageFacts, 'totals'>): string {
  const t = model.totals;
  const rows: Array<[string, string]> = [
    ['items', String(t.items)],
    ['done', String(t.done)],
    ['failed', String(t.failed)],
    ...(t.checks_failed > 0 ? [['failed checks', String(t.checks_failed)] as [string, string]] : []),
    ['expired', String(t.expired)],
    ['over budget', String(t.budget_exceeded)],
    ['spent', usd(t.spent_usd)],
    ['refunds', usd(t.refunded_usd)],
    [
      'budget left',
      t.budget_left_usd === null ? 'no budget' : `${usd(t.budget_left_usd)} of ${usd(t.budget_usd ?? '0')}`,
    ],
  ];
  return `<ul class="totals" id="totals">${rows.map(([label, value]) => `<li>${h(label)} <b>${h(value)}</b></li>`).join('')}</ul>`;
}

/**
 * Past this many values a filter is a text field (the values containing what is typed), not a
 * drop-down: a variable that differs per item takes as many values as there are items.
 */
export const MOST_FILTER_CHOICES = 40;

/** The check filter's words for each outcome of an item's newest take. */
const CHECK_WORDS: Record<string, string> = { failed: 'failed', unchecked: 'not checked', passed: 'passed' };

function filters(model: Pick<PageFacts, 'states' | 'checks' | 'axes' | 'tiles'>): string {
  const select = (attr: string, label: string, values: Array<[string, string]>) =>
    values.length > MOST_FILTER_CHOICES
      ? `<label>${h(label)} <input type="search" data-filter="${h(attr)}" data-match="text" placeholder="any of ${values.length} values" aria-label="${h(label)} contains"></label>`
      : `<label>${h(label)} <select data-filter="${h(attr)}"><option value="">all</option>${values
          .map(([value, text]) => `<option value="${h(value)}">${h(text)}</option>`)
          .join('')}</select></label>`;
  const states = select(
    'data-state',
    'state',
    model.states.map((state) => [state, WORDS[state] ?? state]),
  );
  // Beside the state: only where some take was checked (a page from before checks has none).
  const checks = model.checks.some((outcome) => outcome !== 'unchecked')
    ? select(
        'data-check',
        'check',
        model.checks.map((outcome) => [outcome, CHECK_WORDS[outcome] ?? outcome]),
      )
    : '';
  const axes = model.axes.map(({ axis, values }, index) =>
    select(
      `data-axis-${index}`,
      axis,
      values.map((value) => [value, value]),
    ),
  );
  return `<nav class="toolbar" aria-label="filters">${[states, checks, ...axes].join('')}<span class="muted"><span id="shown-count">${model.tiles}</span> of ${model.tiles} shown</span></nav>`;
}

/** The origins (scheme, host, port) of the page's absolute http(s) links, for media-src. */
export function mediaOrigins(model: Pick<GalleryModel, 'cards'>): string[] {
  const origins = new Set<string>();
  for (const card of model.cards) addOrigins(origins, card.takes);
  return [...origins].sort();
}

/** Adds the origins of these takes' http(s) links (see mediaOrigins). */
export function addOrigins(origins: Set<string>, takes: readonly GalleryTake[]): void {
  for (const take of takes)
    for (const video of take.videos) {
      if (video.href === null || !/^https?:\/\//i.test(video.href)) continue;
      origins.add(new URL(video.href).origin);
    }
}

/**
 * Says near the top when the presigned links stop working and how to get fresh ones: after that
 * instant every video fails to load, and the page itself cannot tell why.
 */
export function linksNotice(links: ExpiringLinks): string {
  const command = ['mediabatch', ...links.refreshArgs].map(shellWord).join(' ');
  return `<p class="expiry" id="links-expire">The video links on this page are presigned and expire at <time datetime="${h(links.expireAt)}">${h(links.expireAt)}</time>. For fresh links, run <code>${h(command)}</code> again.</p>`;
}

/** Single-quoted for a POSIX shell unless it is plainly safe. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The two pickers at the bottom, usable together: the takes to redo (the `run --redo` command and
 * redo.txt) and the keeper of each item (the `keep` command and keep.txt), each a command to copy
 * and a file the script fills in as a data: URL.
 */
function pickerPanel(model: Pick<PageFacts, 'manifestArg' | 'ledgerArgs'>): string {
  const redoBase = `mediabatch run ${shellWord(model.manifestArg)}`;
  const keepBase = ['mediabatch', 'keep', model.manifestArg, ...model.ledgerArgs].map(shellWord).join(' ');
  return [
    '<footer class="redo-panel" aria-label="redo and keep">',
    `<div class="picker"><b>Redo</b><code id="redo-command" data-base="${h(redoBase)}">tick "redo" on the takes to generate again</code><button type="button" id="redo-copy" disabled>Copy</button><a id="redo-file" download="redo.txt" href="data:text/plain;charset=utf-8," aria-disabled="true">redo.txt</a><span class="muted">Add the same service options as your run (--base-url, or --sandbox for the demo).</span></div>`,
    `<div class="picker"><b>Keep</b><code id="keep-command" data-base="${h(keepBase)}">click "keep" on the take you keep of each item</code><button type="button" id="keep-copy" disabled>Copy</button><a id="keep-file" download="keep.txt" href="data:text/plain;charset=utf-8," aria-disabled="true">keep.txt</a></div>`,
    '</footer>',
  ].join('');
}

/** The table's head; its rows are in the data block, made when the table is opened (script-history.ts). */
function history(rows: number): string {
  if (rows === 0)
    return '<details class="history"><summary>Attempts</summary><p>No attempts yet.</p></details>';
  return `<details class="history" id="history"><summary>Attempts (${rows})</summary><table><thead><tr><th>Item</th><th>#</th><th>Key</th><th>Job</th><th>Status</th><th>Cost</th><th>Refunded</th><th>Sent</th><th>Completed</th><th>Error</th></tr></thead><tbody id="history-rows"></tbody></table><button type="button" id="history-more" hidden></button></details>`;
}

/**
 * Says in the page's first bytes that mediabatch wrote it: `report --html` replaces only such a
 * page (or a new file), and `plan` does not take one for a stray file.
 */
export const GALLERY_MARKER = '<meta name="generator" content="mediabatch gallery">';

/** Whether a file's first bytes are a gallery page mediabatch wrote (also one from before the marker). */
export function isGalleryPage(head: string): boolean {
  if (!head.startsWith('<!DOCTYPE html>')) return false;
  return (
    head.includes(GALLERY_MARKER) ||
    (head.includes(': mediabatch gallery</title>') &&
      head.includes('<p class="generated">mediabatch gallery, generated'))
  );
}

/**
 * The larger view of one item, filled by the script when a tile is opened: its takes as full
 * players, the prompt and what it cost. A <dialog>, so Escape and the close button dismiss it.
 */
const VIEWER = `<dialog id="viewer" aria-labelledby="viewer-id"><div class="viewer-head"><code id="viewer-id"></code><span class="badge" id="viewer-state"></span><button type="button" id="viewer-close" aria-label="close">Close</button></div><div id="viewer-body"></div><label class="redo"><input type="checkbox" id="viewer-redo"> redo this take</label></dialog>`;

/**
 * What the page shows around its data block: everything but the tiles and the attempts' rows, so
 * that a page whose data streams past (page-stream.ts) is written the same as one made whole.
 */
export interface PageFacts
  extends Pick<
    GalleryModel,
    | 'manifest'
    | 'manifestArg'
    | 'generatedAt'
    | 'ledgerLine'
    | 'totals'
    | 'axes'
    | 'states'
    | 'checks'
    | 'ledgerArgs'
    | 'warnings'
    | 'links'
  > {
  /** How many tiles (groups) and attempt rows the data block holds. */
  tiles: number;
  attempts: number;
  /** For media-src: see mediaOrigins. */
  mediaOrigins: string[];
}

/** The page up to its data block's first byte. */
export function pageStart(facts: PageFacts): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    GALLERY_MARKER,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="${h(galleryCsp(facts.mediaOrigins))}">`,
    '<meta name="referrer" content="no-referrer">',
    `<title>${h(facts.manifest)}: mediabatch gallery</title><style>${GALLERY_STYLE}</style></head><body>`,
    `<header class="page"><h1>${h(facts.manifest)}</h1><p class="generated">mediabatch gallery, generated ${h(facts.generatedAt)}. ${h(facts.ledgerLine)}</p>`,
    facts.links === null ? '' : linksNotice(facts.links),
    ...facts.warnings.map((warning) => `<p class="warning">${h(warning)}</p>`),
    totals(facts),
    '</header>',
    filters(facts),
    `<main class="sheet" id="cards" aria-label="items"></main>`,
    '<noscript><p class="warning">The tiles are drawn by the page&#39;s own script: allow JavaScript for this file.</p></noscript>',
    VIEWER,
    history(facts.attempts),
    pickerPanel(facts),
    '<script type="application/json" id="gallery-data">',
  ].join('\n');
}

/** The page from its data block's last byte on. */
export const PAGE_END = ['</script>', `<script>${GALLERY_SCRIPT}</script>`, '</body></html>', ''].join('\n');

/** The whole self-contained page: works opened from disk, with no server and no network. */
export function renderGallery(model: GalleryModel, attempts: readonly AttemptRow[]): string {
  const facts: PageFacts = {
    ...model,
    tiles: model.groups.length,
    attempts: attempts.length,
    mediaOrigins: mediaOrigins(model),
  };
  return `${pageStart(facts)}${pageData(model, attempts)}${PAGE_END}`;
}
