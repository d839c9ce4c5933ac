import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { forSandbox, manifestOrExit } from '../../lib/common.js';
import { readLedger } from '../../lib/ledger-read.js';
import { describeService } from '../../lib/service.js';
import { buildGallery } from '../../report/gallery/model.js';
import { renderGallery } from '../../report/gallery/page.js';
import { attemptHistory, renderReportText } from '../../report/render-text.js';
import { buildStatusReport } from '../../report/status-report.js';
import { checkGalleryTarget } from '../gallery-target.js';
import type { Command } from '../io.js';

export const reportCommand: Command<'report'> = async ({ values, positionals }, io) => {
  const manifest = forSandbox(manifestOrExit(positionals[0], io, 'no report was made'), values.sandbox);
  const ledger = readLedger(manifest, values.ledger, io, { sandbox: values.sandbox });
  const now = new Date();
  const report = buildStatusReport(manifest, ledger.view, now.getTime());
  const order = new Map(manifest.items.map((item, index) => [item.id, index]));
  const history = attemptHistory(ledger.view.attempts, order);
  const generatedAt = now.toISOString();

  if (values.html === undefined) {
    io.stdout.write(renderReportText(report, history, ledger, generatedAt));
    return ExitCode.Ok;
  }
  const htmlPath = values.html === '' ? join(manifest.outputDir, 'index.html') : resolve(io.cwd, values.html);
  // Only a new file or an earlier gallery is replaced; never the manifest, the ledger or an output.
  checkGalleryTarget(
    htmlPath,
    {
      manifestFile: manifest.file,
      ledgerPath: ledger.path,
      outputDir: manifest.outputDir,
      savedFiles: ledger.view.files.map((file) => file.path),
      cwd: io.cwd,
    },
    values.force,
  );
  const model = buildGallery(manifest, ledger.view, report, {
    htmlPath,
    manifestArg: relative(io.cwd, manifest.file) || manifest.file,
    generatedAt,
  });
  const ledgerLine = ledger.exists
    ? `Ledger: ${ledger.path}; service: ${ledger.service ? describeService(ledger.service) : 'none yet'}`
    : `No ledger yet at ${ledger.path}: nothing has run.`;
  writeAtomically(htmlPath, renderGallery(model, history, ledgerLine));
  io.stdout.write(`wrote the gallery of ${manifest.name} (${report.totals.items} items) to ${htmlPath}\n`);
  return ExitCode.Ok;
};

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
