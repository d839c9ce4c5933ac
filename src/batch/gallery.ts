import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFileAtomically } from '../downloads/write-atomically.js';
import { ExitCode, UserError } from '../errors.js';
import { describeService } from '../ledger/service.js';
import { buildGallery, type GalleryOptions, pageRelativeHref } from '../report/gallery/model.js';
import { renderGallery } from '../report/gallery/page.js';
import { attemptHistory } from '../report/render-text.js';
import { buildStatusReport } from '../report/status-report.js';
import {
  type BucketGalleryPlan,
  bucketGalleryPlan,
  checkBucketTarget,
  openGalleryBucket,
  presign,
  signLinks,
  uploadPage,
} from './gallery-s3.js';
import { checkGalleryTarget } from './gallery-target.js';
import { type LedgerContents, readLedger } from './ledger-read.js';
import type { Batch } from './resolve-batch.js';
import type { Warn } from './warnings.js';

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

type LedgerView = LedgerContents;

/**
 * The gallery page of a batch: its outputs side by side with what they cost, written where asked
 * but never over the manifest, the ledger, an output or its sidecar (docs/gallery.md).
 */
export async function writeBatchGallery(
  batch: Batch,
  request: GalleryRequest,
  warn: Warn,
  contents: LedgerContents | null = null,
): Promise<GalleryWritten> {
  const { manifest } = batch;
  // A run passes what its open ledger holds; its last writes may not be committed for others yet.
  const ledger = contents ?? (await readLedger(batch));
  const now = new Date();
  const report = buildStatusReport(manifest, ledger.view, now.getTime());
  const order = new Map(manifest.items.map((item, index) => [item.id, index]));
  const history = attemptHistory(ledger.view.attempts, order);
  const bucket = bucketGalleryPlan(manifest.outputDir, request.to, request.urlLifetimeSeconds);
  const ledgerFacts = {
    path: ledger.path,
    exists: ledger.exists,
    service: ledger.service ? describeService(ledger.service, '--sandbox') : null,
  };
  // The model names the ledger by its file name only on a page that travels (docs/gallery.md).
  const fixed = { ledger: ledgerFacts, keepers: ledger.keepers, ledgerArgs: ledgerArgs(batch) };
  const page = (options: Omit<GalleryOptions, keyof typeof fixed>) =>
    renderGallery(buildGallery(manifest, ledger.view, report, { ...options, ...fixed }), history);
  const parts = { now, page, items: report.totals.items, ledger };
  if (bucket !== null) return bucketGallery(batch, request, bucket, parts, warn);
  const htmlPath =
    request.to === '' ? join(manifest.outputDir, 'index.html') : resolve(batch.cwd, request.to);
  checkLocalTarget(htmlPath, batch, ledger, request.force);
  const content = page({
    href: pageRelativeHref(manifest.file, htmlPath),
    manifestArg: pageManifestArg(batch),
    generatedAt: now.toISOString(),
  });
  await writePage(htmlPath, content);
  return { written: htmlPath, items: parts.items, linksExpireAt: null, pageUrl: null };
}

interface PageParts {
  now: Date;
  page: (options: Omit<GalleryOptions, 'ledger' | 'keepers' | 'ledgerArgs'>) => string;
  items: number;
  ledger: LedgerView;
}

/**
 * The gallery of an `s3://` location (docs/gallery.md, "Review from the bucket"): every video is
 * a presigned URL, and the page goes into the bucket or to a local file. Every refusal is decided
 * before anything is written.
 */
async function bucketGallery(
  batch: Batch,
  request: GalleryRequest,
  bucket: BucketGalleryPlan,
  parts: PageParts,
  warn: Warn,
): Promise<GalleryWritten> {
  const { manifest } = batch;
  const { key, lifetimeSeconds: lifetime } = bucket;
  const htmlPath = key === null ? resolve(batch.cwd, request.to) : null;
  if (htmlPath !== null) checkLocalTarget(htmlPath, batch, parts.ledger, request.force);
  const savedFiles = parts.ledger.view.files.map((file) => file.path);
  const objects = await openGalleryBucket(manifest.outputDir, batch.settings.storageEnv);
  if (key !== null) await checkBucketTarget(objects, key, savedFiles, request.force);

  const links = await signLinks(objects, savedFiles, lifetime, parts.now);
  const expireAt = links.expireAt.toISOString();
  if (links.byCredentials)
    warn({
      code: 'links_expire_early',
      message: `the credentials that signed the links expire at ${expireAt}, before the lifetime asked for; the links stop working then`,
    });
  // A file recorded before the location moved to a bucket has no URL: the page names it.
  const local =
    htmlPath === null
      ? (path: string) => pathToFileURL(path).href
      : pageRelativeHref(manifest.file, htmlPath);
  const content = parts.page({
    href: (path) => links.hrefs.get(path) ?? local(path),
    manifestArg: pageManifestArg(batch),
    generatedAt: parts.now.toISOString(),
    links: { expireAt, refreshArgs: refreshArgs(batch, request) },
  });
  if (htmlPath !== null) {
    await writePage(htmlPath, content);
    return { written: htmlPath, items: parts.items, linksExpireAt: expireAt, pageUrl: null };
  }
  await uploadPage(objects, key!, content);
  const pageUrl = await presign(objects, objects.uri(key!), lifetime, parts.now);
  return { written: objects.uri(key!), items: parts.items, linksExpireAt: expireAt, pageUrl };
}

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
  const named = batch.ledger.kind === 'sqlite' ? batch.named.ledger : batch.ledger.shown;
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

/** Only a new file or an earlier gallery is replaced; never the manifest, the ledger or an output. */
function checkLocalTarget(htmlPath: string, batch: Batch, ledger: LedgerView, force: boolean): void {
  checkGalleryTarget(
    htmlPath,
    {
      manifestFile: batch.manifest.file,
      ledgerPath: ledger.path,
      outputDir: batch.manifest.outputDir,
      savedFiles: ledger.view.files.map((file) => file.path),
      cwd: batch.cwd,
    },
    force,
  );
}

/** A reader (a browser reloading, a CI artifact upload) never sees half a page. */
async function writePage(path: string, content: string): Promise<void> {
  try {
    await writeFileAtomically(path, content);
  } catch (error) {
    throw new UserError(
      `cannot write ${path}: ${(error as Error).message}`,
      ExitCode.ItemsNotDone,
      'write_failed',
    );
  }
}
