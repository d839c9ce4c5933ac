import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pageRelativeHref } from '../../documents/gallery/model.js';
import { isGalleryPage, type PageFacts } from '../../documents/gallery/page.js';
import { type StreamOptions, streamGallery } from '../../documents/gallery/page-stream.js';
import { writeFileAtomically } from '../../downloads/write-atomically.js';
import { UserError } from '../../errors.js';
import {
  describeService,
  ledgerFileOf,
  type ReadingLedger,
  type RecordReads,
  type TakeLedger,
} from '../../ledger/index.js';
import type { S3Objects } from '../../storage/s3-objects.js';
import { type LedgerRead, withLedger } from '../ledger/ledger-read.js';
import { refuseNamedTarget, type TargetKind, targetGuard } from '../named-files/named-target.js';
import { SavedNames, savedFilesNamed } from '../named-files/saved-names.js';
import type { Batch } from '../resolve/resolve-batch.js';
import type { Warn } from '../resolve/warnings.js';
import {
  type BucketGalleryPlan,
  bucketGalleryPlan,
  checkBucketTarget,
  linkSigner,
  openGalleryBucket,
  presign,
  uploadPage,
} from './gallery-s3.js';
import { type GallerySource, gallerySource } from './gallery-source.js';
import { GallerySpool } from './gallery-spool.js';

/** Where the page goes and how: the gallery's choices (docs/gallery.md). */
export interface GalleryRequest {
  /** A file (relative to the batch's cwd), an `s3://` key, or '' for `<output location>/index.html`. */
  to: string;
  /** How long a bucket's presigned links work; null: the longest S3 allows. */
  urlLifetimeSeconds: number | null;
  /** Replace a file that is not a gallery page (never a guarded one). */
  force: boolean;
}

/** What writing the gallery did. */
export interface GalleryWritten {
  /** The page's path, or its `s3://` URI. */
  written: string;
  items: number;
  /** When the page's video links stop working (a bucket's presigned URLs); null for local files. */
  linksExpireAt: string | null;
  /** A presigned URL of a page written into a bucket; null otherwise. */
  pageUrl: string | null;
}

/** The ledger a run holds open as it ends, and what it said of it: its last writes are seen there. */
export interface OpenLedger {
  ledger: RecordReads & ReadingLedger & TakeLedger;
  note: LedgerRead;
}

/**
 * The gallery page of a batch: its outputs side by side with what they cost, written where asked
 * but never over the manifest, the ledger, an output or its sidecar (docs/gallery.md). It is made
 * as the ledger streams past (src/documents/gallery/page-stream.ts, gallery-spool.ts), so a batch of
 * 100,000 items costs seconds and little memory (docs/performance.md, "The gallery page").
 */
export async function writeBatchGallery(
  batch: Batch,
  request: GalleryRequest,
  warn: Warn,
  open: OpenLedger | null = null,
): Promise<GalleryWritten> {
  if (open !== null) return galleryOf(batch, request, warn, open);
  return withLedger(batch, (ledger, note) => galleryOf(batch, request, warn, { ledger, note }));
}

async function galleryOf(
  batch: Batch,
  request: GalleryRequest,
  warn: Warn,
  { ledger, note }: { ledger: (RecordReads & ReadingLedger & TakeLedger) | null; note: LedgerRead },
): Promise<GalleryWritten> {
  const { manifest } = batch;
  const now = new Date();
  const bucket = bucketGalleryPlan(manifest.outputDir, request.to, request.urlLifetimeSeconds);
  const htmlPath = bucket === null || bucket.key === null ? pagePath(batch, request) : null;
  // Every refusal is decided before the page is made, in this order (but see checkTarget).
  if (htmlPath !== null)
    await refuseNamedTarget(htmlPath, targetGuard(batch), GALLERY_PAGE, {
      force: request.force,
      saved: (names) => savedFilesNamed(ledger, names),
    });
  const objects =
    bucket === null ? null : await openGalleryBucket(manifest.outputDir, batch.settings.storageEnv);
  const target = htmlPath !== null ? LOCAL_FILE : bucketTarget(objects!, bucket!.key!, request.force);
  if (htmlPath === null) await checkTarget(target, ledger);
  const saved = new SavedNames(target.names);
  const source = await gallerySource(
    ledger,
    manifest.items.map((item) => item.id),
  );
  const parts: PageParts = {
    source,
    now,
    saved,
    checked: async () => {
      if (saved.hits.length > 0) await target.check(saved.hits);
    },
    options: {
      manifestArg: pageManifestArg(batch),
      generatedAt: now.toISOString(),
      ledger: {
        path: note.path,
        exists: note.exists,
        service: note.service ? describeService(note.service, '--sandbox') : null,
      },
      keepers: source.keepers,
      ledgerArgs: ledgerArgs(batch),
    },
  };
  if (objects === null || bucket === null) {
    const href = pageRelativeHref(manifest.file, htmlPath!);
    return writeLocal(htmlPath!, await spooled(manifest, parts, href, null), null);
  }
  return bucketGallery(batch, request, { ...bucket, objects, htmlPath }, parts, warn);
}

/**
 * A local page as the door knows it (batch/named-files/named-target.ts): its own kind is a page whose head
 * says mediabatch wrote it, and it may stand in its batch's own output folder, at a .html name.
 */
const GALLERY_PAGE: TargetKind = {
  call: 'writeGallery',
  option: 'to',
  writes: 'the gallery',
  notOwn: 'is not a gallery page mediabatch wrote',
  isOwn: (head) => isGalleryPage(head.toString('utf8')),
  forceable: true,
  elsewhere: ' (or leave `to` out for <output dir>/index.html)',
  inOutputFolder: (path) => path.toLowerCase().endsWith('.html'),
};

/** Where a bucket's page goes, and its check (gallery-s3.ts) given the saved files that bear its names. */
interface Target {
  names: string[];
  check(saved: string[]): void | Promise<void>;
}

/** A local page: the door decided before the page was made, with the saved files it needed. */
const LOCAL_FILE: Target = { names: [], check: () => undefined };

function bucketTarget(objects: S3Objects, key: string, force: boolean): Target {
  return { names: [objects.uri(key)], check: (saved) => checkBucketTarget(objects, key, saved, force) };
}

/**
 * A bucket's check looks at the saved files only to refuse one that is there (a saved output or
 * its sidecar, refused even with `force`, and named as such). So it runs first with none; when it
 * refuses an object that is there as foreign, again with the saved files of that name, which may
 * say why better; and once the page is made, with those its entries held (PageParts.checked), so a
 * refresh over its own page reads no list of saved files.
 */
async function checkTarget(target: Target, ledger: RecordReads | null): Promise<void> {
  try {
    await target.check([]);
  } catch (error) {
    const foreign =
      error instanceof UserError && error.code === 'target_refused' && error.fields.guarded === null;
    if (foreign) await target.check(await savedFilesNamed(ledger, target.names));
    throw error;
  }
}

/** What every page is made from: the ledger's reads, the time, and what the page says around its data. */
interface PageParts {
  source: GallerySource;
  now: Date;
  options: Omit<StreamOptions, 'href' | 'links'>;
  /** Sees every saved file as the page is made; `checked` then refuses the target if one is there. */
  saved: SavedNames;
  checked: () => Promise<void>;
}

/**
 * The gallery of an `s3://` location (docs/gallery.md, "Review from the bucket"): every video is
 * a presigned URL, signed as its take comes past, and the page goes into the bucket or to a local
 * file. Every refusal is decided before anything is written.
 */
async function bucketGallery(
  batch: Batch,
  request: GalleryRequest,
  bucket: BucketGalleryPlan & { objects: S3Objects; htmlPath: string | null },
  parts: PageParts,
  warn: Warn,
): Promise<GalleryWritten> {
  const { objects, htmlPath, key, lifetimeSeconds } = bucket;
  const signer = await linkSigner(objects, lifetimeSeconds, parts.now);
  const expireAt = signer.expireAt.toISOString();
  if (signer.byCredentials)
    warn({
      code: 'links_expire_early',
      message: `the credentials that signed the links expire at ${expireAt}, before the lifetime asked for; the links stop working then`,
    });
  // A file recorded before the location moved to a bucket has no URL: the page names it.
  const local =
    htmlPath === null
      ? (path: string) => pathToFileURL(path).href
      : pageRelativeHref(batch.manifest.file, htmlPath);
  const href = async (path: string) => (await signer.sign(path)) ?? local(path);
  const links = { expireAt, refreshArgs: refreshArgs(batch, request) };
  const page = await spooled(batch.manifest, parts, href, links);
  if (htmlPath !== null) return writeLocal(htmlPath, page, expireAt);
  try {
    await uploadPage(objects, key!, page.spool.bytes(page.facts));
  } finally {
    page.spool.close();
  }
  const pageUrl = await presign(objects, objects.uri(key!), lifetimeSeconds, parts.now);
  return { written: objects.uri(key!), items: page.facts.totals.items, linksExpireAt: expireAt, pageUrl };
}

/** The page's data made as the ledger streams past, waiting in a spool to be written in order. */
async function spooled(
  manifest: Batch['manifest'],
  { source, now, options, saved, checked }: PageParts,
  href: StreamOptions['href'],
  links: StreamOptions['links'],
): Promise<{ spool: GallerySpool; facts: PageFacts }> {
  const spool = new GallerySpool(saved);
  try {
    const facts = await streamGallery(manifest, source, { ...options, href, links }, spool, now.getTime());
    await checked();
    return { spool, facts };
  } catch (error) {
    spool.close();
    throw error;
  }
}

async function writeLocal(
  htmlPath: string,
  { spool, facts }: { spool: GallerySpool; facts: PageFacts },
  linksExpireAt: string | null,
): Promise<GalleryWritten> {
  try {
    await writePage(htmlPath, spool.page(facts));
  } finally {
    spool.close();
  }
  return { written: htmlPath, items: facts.totals.items, linksExpireAt, pageUrl: null };
}

/** A local page's path: `<output dir>/index.html`, or the file named. */
const pagePath = (batch: Batch, request: GalleryRequest): string =>
  request.to === '' ? join(batch.manifest.outputDir, 'index.html') : resolve(batch.cwd, request.to);

/** The command that writes the same page again with fresh links, as the page shows it. */
function refreshArgs(batch: Batch, request: GalleryRequest): string[] {
  const lifetime = request.urlLifetimeSeconds;
  return [
    'report',
    pageManifestArg(batch),
    ...ledgerArgs(batch),
    ...(lifetime !== null ? ['--url-lifetime', durationWords(lifetime)] : []),
    ...(request.to ? ['--html', request.to] : ['--html']),
  ];
}

/**
 * The options that name the batch's ledger, as the commands the page offers need them. A database
 * is named by its address without the password (the page is a file anyone may be sent); the
 * reader adds it, or PGPASSWORD, as for any command.
 */
const ledgerArgs = (batch: Batch): string[] => {
  const named = ledgerFileOf(batch.ledger) !== null ? batch.named.ledger : batch.ledger.shown;
  return [...(batch.sandbox ? ['--sandbox'] : []), ...(named ? ['--ledger', named] : [])];
};

/** How the page names the manifest in the commands it offers: from the working folder. */
const pageManifestArg = (batch: Batch): string =>
  relative(batch.cwd, batch.manifest.file) || batch.manifest.file;

/** A lifetime as a person writes it: in days, else hours, else minutes. */
function durationWords(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600}h`;
  return `${Math.round(seconds / 60)}m`;
}

/** A reader (a browser reloading, a CI artifact upload) never sees half a page. */
async function writePage(path: string, content: Iterable<string | Buffer>): Promise<void> {
  try {
    await writeFileAtomically(path, content);
  } catch (error) {
    throw new UserError(`cannot write ${path}: ${(error as Error).message}`, 'write_failed');
  }
}
