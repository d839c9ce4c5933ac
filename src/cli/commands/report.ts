import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExitCode, UserError } from '../../errors.js';
import { forSandbox, manifestOrExit } from '../../lib/common.js';
import {
  type BucketGalleryPlan,
  bucketGalleryPlan,
  checkBucketTarget,
  openGalleryBucket,
  presign,
  signLinks,
  uploadPage,
} from '../../lib/gallery-s3.js';
import { readLedger } from '../../lib/ledger-read.js';
import { describeService } from '../../lib/service.js';
import type { Manifest } from '../../manifest/index.js';
import { buildGallery, type GalleryOptions, pageRelativeHref } from '../../report/gallery/model.js';
import { renderGallery } from '../../report/gallery/page.js';
import { attemptHistory, renderReportText } from '../../report/render-text.js';
import { buildStatusReport } from '../../report/status-report.js';
import { checkGalleryTarget } from '../gallery-target.js';
import type { CliIo, Command } from '../io.js';
import type { CommandArgs } from '../parse-args.js';

type Values = CommandArgs<'report'>['values'];
type LedgerRead = ReturnType<typeof readLedger>;

export const reportCommand: Command<'report'> = async ({ values, positionals }, io) => {
  const manifest = forSandbox(manifestOrExit(positionals[0], io, 'no report was made'), values.sandbox);
  const ledger = readLedger(manifest, values.ledger, io, { sandbox: values.sandbox });
  const now = new Date();
  const report = buildStatusReport(manifest, ledger.view, now.getTime());
  const order = new Map(manifest.items.map((item, index) => [item.id, index]));
  const history = attemptHistory(ledger.view.attempts, order);
  const generatedAt = now.toISOString();

  if (values.html === undefined) {
    if (values['url-lifetime'] !== undefined)
      throw new UserError('--url-lifetime goes with --html: only the gallery page links to the outputs');
    io.stdout.write(renderReportText(report, history, ledger, generatedAt));
    return ExitCode.Ok;
  }
  const manifestArg = relative(io.cwd, manifest.file) || manifest.file;
  const ledgerFacts = {
    path: ledger.path,
    exists: ledger.exists,
    service: ledger.service ? describeService(ledger.service) : null,
  };
  // The model says the ledger by name only on a page that travels (docs/gallery.md).
  const page = (options: Omit<GalleryOptions, 'ledger'>) =>
    renderGallery(buildGallery(manifest, ledger.view, report, { ...options, ledger: ledgerFacts }), history);
  const items = `the gallery of ${manifest.name} (${report.totals.items} items)`;

  const bucket = bucketGalleryPlan(manifest.outputDir, values.html, values['url-lifetime']);
  if (bucket !== null)
    return bucketGallery(manifest, ledger, values, io, { now, manifestArg, page, items, bucket });
  const htmlPath = values.html === '' ? join(manifest.outputDir, 'index.html') : resolve(io.cwd, values.html);
  checkLocalTarget(htmlPath, manifest, ledger, values.force, io.cwd);
  writeAtomically(
    htmlPath,
    page({ href: pageRelativeHref(manifest.file, htmlPath), manifestArg, generatedAt }),
  );
  io.stdout.write(`wrote ${items} to ${htmlPath}\n`);
  return ExitCode.Ok;
};

interface PageParts {
  now: Date;
  manifestArg: string;
  page: (options: Omit<GalleryOptions, 'ledger'>) => string;
  items: string;
  bucket: BucketGalleryPlan;
}

/**
 * The gallery of an `s3://` location (docs/gallery.md, "Review from the bucket"): every video is
 * a presigned URL, and the page goes into the bucket (`--html` alone or `--html s3://...`) or to a
 * local file. Every refusal is decided before anything is written.
 */
async function bucketGallery(
  manifest: Manifest,
  ledger: LedgerRead,
  values: Values,
  io: CliIo,
  parts: PageParts,
): Promise<number> {
  const { key, lifetimeSeconds: lifetime } = parts.bucket;
  const htmlPath = key === null ? resolve(io.cwd, values.html ?? '') : null;
  if (htmlPath !== null) checkLocalTarget(htmlPath, manifest, ledger, values.force, io.cwd);
  const savedFiles = ledger.view.files.map((file) => file.path);
  const objects = await openGalleryBucket(manifest.outputDir, io.env);
  if (key !== null) await checkBucketTarget(objects, key, savedFiles, values.force);

  const links = await signLinks(objects, savedFiles, lifetime, parts.now);
  const expireAt = links.expireAt.toISOString();
  if (links.byCredentials)
    io.stderr.write(
      `warning: the credentials that signed the links expire at ${expireAt}, before the --url-lifetime asked for; the links stop working then\n`,
    );
  // A file recorded before the location moved to a bucket has no URL: the page names it.
  const local =
    htmlPath === null
      ? (path: string) => pathToFileURL(path).href
      : pageRelativeHref(manifest.file, htmlPath);
  const content = parts.page({
    href: (path) => links.hrefs.get(path) ?? local(path),
    manifestArg: parts.manifestArg,
    generatedAt: parts.now.toISOString(),
    links: { expireAt, refreshArgs: refreshArgs(parts.manifestArg, values) },
  });
  if (htmlPath !== null) {
    writeAtomically(htmlPath, content);
    io.stdout.write(`wrote ${parts.items} to ${htmlPath}; its video links expire at ${expireAt}\n`);
    return ExitCode.Ok;
  }
  await uploadPage(objects, key!, content);
  const pageUrl = await presign(objects, objects.uri(key!), lifetime, parts.now);
  io.stdout.write(
    `wrote ${parts.items} to ${objects.uri(key!)}\nits links expire at ${expireAt}; open the page at:\n${pageUrl}\n`,
  );
  return ExitCode.Ok;
}

/** The command that writes the same page again with fresh links, as the page shows it. */
function refreshArgs(manifestArg: string, values: Values): string[] {
  return [
    'report',
    manifestArg,
    ...(values.sandbox ? ['--sandbox'] : []),
    ...(values.ledger ? ['--ledger', values.ledger] : []),
    ...(values['url-lifetime'] ? ['--url-lifetime', values['url-lifetime']] : []),
    ...(values.html ? ['--html', values.html] : ['--html']),
  ];
}

/** Only a new file or an earlier gallery is replaced; never the manifest, the ledger or an output. */
function checkLocalTarget(
  htmlPath: string,
  manifest: Manifest,
  ledger: LedgerRead,
  force: boolean,
  cwd: string,
): void {
  checkGalleryTarget(
    htmlPath,
    {
      manifestFile: manifest.file,
      ledgerPath: ledger.path,
      outputDir: manifest.outputDir,
      savedFiles: ledger.view.files.map((file) => file.path),
      cwd,
    },
    force,
  );
}

/** A reader (a browser reloading, a CI artifact upload) never sees half a page. */
function writeAtomically(path: string, content: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temp, content);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new UserError(`cannot write ${path}: ${(error as Error).message}`, ExitCode.ItemsNotDone);
  }
}
