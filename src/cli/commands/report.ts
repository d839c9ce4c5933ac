import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { renderHtmlReport } from '../../report/render-html.js';
import { attemptHistory, renderReportText } from '../../report/render-text.js';
import { buildStatusReport } from '../../report/status-report.js';
import { manifestOrExit } from '../common.js';
import type { Command } from '../io.js';
import { readLedger } from './status.js';

export const reportCommand: Command<'report'> = async ({ values, positionals }, io) => {
  if (values.html === '') throw new UserError('--html needs a file name');
  const manifest = manifestOrExit(positionals[0], io);
  const ledger = readLedger(manifest, values.ledger, io, { view: 'full' });
  const now = new Date();
  const report = buildStatusReport(manifest, ledger.view, now.getTime());
  const order = new Map(manifest.items.map((item, index) => [item.id, index]));
  const history = attemptHistory(ledger.view.attempts, order);
  const generatedAt = now.toISOString();

  if (values.html === undefined) {
    io.stdout.write(renderReportText(report, history, ledger, generatedAt));
    return ExitCode.Ok;
  }
  const htmlPath = resolve(io.cwd, values.html);
  const prompts = new Map(manifest.items.map((item) => [item.id, String(item.input.prompt ?? '')]));
  const page = renderHtmlReport(report, history, {
    htmlPath,
    baseDir: dirname(manifest.file),
    ledger,
    generatedAt,
    prompts,
  });
  writeAtomically(htmlPath, page);
  io.stdout.write(`wrote the report of ${manifest.name} (${report.totals.items} items) to ${htmlPath}\n`);
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
