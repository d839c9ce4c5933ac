import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { galleryData } from '../../support/gallery-data.js';
import { fingerprint, LedgerBuilder, ledgerPath, noLedgerIn, project } from './fixtures.js';

const MANIFEST = `version: 1
name: rep
input: {seconds: 6, definition: 720p}
items:
  - {id: good, prompt: "A <b>bold</b> & sunny beach"}
  - {id: evil, prompt: "<script>alert('prompt')</script>"}
  - {id: retried, prompt: worked the second time}
`;

/** A done item, a failed one whose service message carries markup and a signed URL, a retried one. */
async function situation() {
  const { dir, manifest } = project(MANIFEST);
  const b = await LedgerBuilder.open(dir, manifest);
  await b.done('good', '0.30');
  await b.failed(
    'evil',
    '0.30',
    'content_rejected',
    '<script>alert(1)</script> see https://cdn.example/x.mp4?sig=TOPSECRET',
  );
  await b.failed('retried', '0.30', 'processing_failed', 'generation failed', 'pending');
  await b.done('retried', '0.30');
  await b.close();
  return { dir, manifest, ledger: ledgerPath(dir, manifest) };
}

describe('mediabatch report', () => {
  it('prints items and the per-attempt history with key prefixes only', async () => {
    const { dir, ledger } = await situation();
    const before = fingerprint(ledger);
    const result = await runCli(['report', 'batch.yaml'], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/^mediabatch report: rep \(generated \d{4}-\d\d-\d\dT/);
    expect(out).toContain('rep: 3 items: 2 done, 1 failed');
    expect(out).toContain('spent $0.60 net (charged $1.20, refunded $0.60)');
    expect(out).toMatch(/^ITEM\s+#\s+KEY\s+JOB\s+STATUS\s+COST\s+SENT\s+ERROR$/m);
    expect(out).toMatch(/^good\s+1\s+mb_00\d{3}…\s+job_good_1\s+succeeded\s+\$0\.30\s+\d{4}-/m);
    expect(out).toMatch(
      /^retried\s+1\s+mb_\d{5}…\s+job_retried_1\s+failed\s+\$0\.00\s+\S+\s+processing_failed: generation failed$/m,
    );
    expect(out).toMatch(/^retried\s+2\s+mb_\d{5}…\s+job_retried_2\s+succeeded\s+\$0\.30/m);
    // Whole keys and signed URL queries stay in the ledger.
    expect(out).not.toContain('secret-tail');
    expect(out).not.toContain('TOPSECRET');
    expect(fingerprint(ledger)).toEqual(before);
  });

  it('--html writes one self-contained, escaped gallery with relative video sources', async () => {
    const { dir, ledger } = await situation();
    const before = fingerprint(ledger);
    const result = await runCli(['report', 'batch.yaml', '--html', 'reports/today.html'], { cwd: dir });
    expect(result.code).toBe(0);
    const htmlPath = join(dir, 'reports', 'today.html');
    expect(result.stdout).toBe(`wrote the gallery of rep (3 items) to ${htmlPath}\n`);
    const html = readFileSync(htmlPath, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // Every value is escaped: the only tags are the page's own, its one script is its own and
    // the items are a JSON data block that holds no <, > or & at all.
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain('<script type="application/json" id="gallery-data">');
    expect(html).not.toContain('<b>bold');
    expect(html).not.toContain('alert(1)</script>');
    expect(html).not.toContain("alert('prompt')</script>");
    expect(html).not.toContain('TOPSECRET');
    expect(html).not.toContain('secret-tail');
    // No external asset: sources are relative to the page, no http(s) link or stylesheet.
    expect(html).not.toMatch(/src="https?:|<link|href="https?:|"href":"https?:/);
    const data = galleryData(html);
    const tile = (id: string) => data.tiles.find((entry) => entry.id === id)!;
    expect(tile('good').prompt).toBe('A <b>bold</b> & sunny beach');
    expect(tile('evil').prompt).toBe("<script>alert('prompt')</script>");
    expect(tile('evil').error?.message).toBe('<script>alert(1)</script> see https://cdn.example/x.mp4?…');
    expect(tile('good').takes[0]!.files).toEqual([
      { href: '../out/rep/good.mp4', label: 'good.mp4', video: true },
    ]);
    expect(tile('retried').takes[0]!.files[0]!.href).toBe('../out/rep/retried.mp4');
    expect(existsSync(join(dir, 'reports', 'today.html'))).toBe(true);
    expect(readdirSync(join(dir, 'reports'))).toEqual(['today.html']);
    expect(fingerprint(ledger)).toEqual(before);
  });

  it('reports a batch that never ran without creating a ledger', async () => {
    const { dir } = project(MANIFEST);
    const text = await runCli(['report', 'batch.yaml'], { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('no attempts yet');
    const html = await runCli(['report', 'batch.yaml', '--html', 'r.html'], { cwd: dir });
    expect(html.code).toBe(0);
    expect(readFileSync(join(dir, 'r.html'), 'utf8')).toContain('No attempts yet.');
    expect(noLedgerIn(dir)).toBe(true);
  });

  it('a bad manifest exits 2 and writes no page', async () => {
    const { dir } = project(MANIFEST);
    writeFileSync(join(dir, 'bad.yaml'), 'version: 2\nname: rep\nitems: []\n');
    const result = await runCli(['report', 'bad.yaml', '--html', 'r.html'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml:1:\d+/);
    expect(existsSync(join(dir, 'r.html'))).toBe(false);
  });
});
