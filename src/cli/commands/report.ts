import { report, UserError, writeGallery } from '../../index.js';
import { renderGalleryWritten, renderReportText } from '../../render.js';
import { openBatch } from '../batch-options.js';
import type { Command } from '../io.js';

/** `report`: every item with every attempt, as text or as the gallery page (docs/gallery.md). */
export const reportCommand: Command<'report'> = async ({ values, positionals }, io) => {
  const { manifest, options } = await openBatch({ values, positionals }, io, 'report');
  if (values.html === undefined) {
    if (values['url-lifetime'] !== undefined)
      throw new UserError('--url-lifetime goes with --html: only the gallery page links to the outputs');
    const { status, attempts, ledger, generatedAt } = await report(manifest, options);
    io.stdout.write(renderReportText(status, attempts, ledger, generatedAt));
    return 'done';
  }
  const page = await writeGallery(manifest, {
    ...options,
    to: values.html,
    ...(values['url-lifetime'] === undefined ? {} : { urlLifetimeSeconds: values['url-lifetime'] }),
    force: values.force,
    warn: ({ message }) => io.stderr.write(`warning: ${message}\n`),
  });
  io.stdout.write(renderGalleryWritten(manifest.name, page));
  return 'done';
};
