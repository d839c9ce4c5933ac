import { formatUsdHuman } from '../money.js';
import { shownFromCwd } from './shown-path.js';

/** What `forget`, `copy-ledger`, `keep` and `report --html` say they did, for people. */

interface Looked {
  itemId: string;
  jobId: string;
  lost: boolean;
  paidMicros: number;
  why: string | null;
}

/** The jobs forget looked at, each forgotten or left as it was, and what paying for them again means. */
export function renderForgotten(
  name: string,
  ids: readonly string[],
  jobs: readonly Looked[],
  planCommand: string,
): string {
  if (jobs.length === 0)
    return `${name}: no job in flight${ids.length > 0 ? ` for ${ids.join(', ')}` : ''}; nothing to forget\n`;
  const lines = jobs.map(({ itemId, jobId, lost, paidMicros, why }) =>
    lost
      ? `  forgot ${itemId}: job ${jobId} is unknown to the service; it cost ${formatUsdHuman(paidMicros)}, and the item is pending again`
      : `  left ${itemId}: job ${jobId}: ${why}`,
  );
  const lost = jobs.filter((job) => job.lost);
  const paid = lost.reduce((sum, job) => sum + job.paidMicros, 0);
  const tail =
    lost.length === 0
      ? 'nothing was forgotten'
      : `${lost.length} job(s) forgotten, ${formatUsdHuman(paid)} paid for them stays in the spend. ` +
        `The next run submits their items again and pays again: ${planCommand} says how much at most`;
  return `${name}:\n${lines.join('\n')}\n${tail}\n`;
}

interface Copied {
  items: number;
  attempts: number;
  files: number;
  events: number;
  runs: number;
  from: string;
  to: string;
  outputPassed: boolean;
}

/** What copy-ledger copied, with both ledgers as the library shows them (a URL without its password). */
export function renderCopied(manifest: { name: string; outputDir: string }, copied: Copied): string {
  return (
    `${manifest.name}: copied ${copied.items} item(s), ${copied.attempts} attempt(s), ${copied.files} file(s), ` +
    `${copied.events} event(s) and ${copied.runs} run(s)\n  from ${copied.from}\n  to   ${copied.to}\n` +
    (copied.outputPassed ? `  the output folder ${manifest.outputDir} now belongs to the copy\n` : '')
  );
}

/** Where the gallery went and, for a bucket, when its links expire and where to open it. */
/**
 * The line a run ends with: where its gallery is, as a person in `cwd` would open it (for a page
 * in a bucket, its presigned URL too, since that is what opens it).
 */
export function renderRunGallery(
  result: {
    gallery: { written: string; linksExpireAt: string | null; pageUrl: string | null } | null;
    galleryLeftTo: number;
  },
  cwd: string,
): string {
  const page = result.gallery;
  if (page === null) return result.galleryLeftTo > 0 ? galleryLeftWords(result.galleryLeftTo) : '';
  const where = shownFromCwd(cwd, page.written);
  const expiry = page.linksExpireAt === null ? '' : ` (its links expire at ${page.linksExpireAt})`;
  return `gallery: ${where}${expiry}${page.pageUrl === null ? '' : `, open ${page.pageUrl}`}\n`;
}

/** A runner of a shared batch that ended before the others: the last of them writes the page. */
const galleryLeftWords = (others: number): string =>
  `gallery: left to the ${others === 1 ? 'other runner' : `${others} other runners`} of this batch still running; the last to end writes it\n`;

export function renderGalleryWritten(
  name: string,
  page: { written: string; items: number; linksExpireAt: string | null; pageUrl: string | null },
): string {
  const what = `the gallery of ${name} (${page.items} items)`;
  if (page.pageUrl !== null)
    return `wrote ${what} to ${page.written}\nits links expire at ${page.linksExpireAt}; open the page at:\n${page.pageUrl}\n`;
  if (page.linksExpireAt !== null)
    return `wrote ${what} to ${page.written}; its video links expire at ${page.linksExpireAt}\n`;
  return `wrote ${what} to ${page.written}\n`;
}

/** What `keep` recorded: one line per item kept or cleared, then the count and what is left to choose. */
export function renderKept(
  result: {
    kept: ReadonlyArray<{ itemId: string; keptItemId: string; take: number }>;
    cleared: readonly string[];
    withoutKeeper: readonly string[];
    gallery: { written: string } | null;
    galleryProblem: string | null;
  },
  cwd: string,
): string {
  const lines = [
    ...result.kept.map((each) => `${each.itemId}: keeps ${each.keptItemId}, take ${each.take}`),
    ...result.cleared.map((id) => `${id}: no keeper`),
  ];
  const items = (n: number) => `${n} item${n === 1 ? '' : 's'}`;
  const left = result.withoutKeeper.length;
  const summary =
    `kept ${items(result.kept.length)}` +
    (result.cleared.length > 0 ? `, cleared ${items(result.cleared.length)}` : '') +
    `; ${left === 0 ? 'every item with variants has a keeper' : `${items(left)} with variants still ${left === 1 ? 'has' : 'have'} no keeper`}`;
  const gallery = result.gallery
    ? `gallery: ${shownFromCwd(cwd, result.gallery.written)}`
    : `gallery not refreshed: ${result.galleryProblem ?? 'no page'}`;
  return `${[...lines, summary, gallery].join('\n')}\n`;
}
