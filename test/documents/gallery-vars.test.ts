import { describe, expect, it } from 'vitest';
import { buildGallery, pageRelativeHref } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import { parseManifest } from '../../src/manifest/index.js';
import { galleryData } from '../support/gallery-data.js';

const YAML = `
version: 1
name: g
prompt: "A {animal} in {style}, {mood}"
vars: {style: [ink, watercolor], mood: calm}
matrix: {seconds: [4, 8]}
items:
  - {id: fox, vars: {animal: fox}}
  - {id: owl, vars: {animal: owl}}
`;

describe('the gallery of a manifest with template variables', () => {
  const parsed = parseManifest('/batches/g.yaml', YAML, (rel) => ({ file: rel, error: 'none' }));
  if (!parsed.ok) throw new Error(parsed.problems[0]!.message);
  const manifest = parsed.manifest;
  const view = { items: [], attempts: [], files: [] };
  const model = buildGallery(manifest, view, buildStatusReport(manifest, view, 0), {
    href: pageRelativeHref('/batches/g.yaml', '/batches/out/g/index.html'),
    manifestArg: 'g.yaml',
    generatedAt: '2026-01-01T00:00:00.000Z',
    ledger: { path: '/batches/g.sqlite', exists: false, service: null },
  });

  it('offers a filter for the matrix and for each variable with more than one value', () => {
    expect(model.axes).toEqual([
      { axis: 'seconds', values: ['4', '8'] },
      { axis: 'style', values: ['ink', 'watercolor'] },
      { axis: 'animal', values: ['fox', 'owl'] },
    ]);
    expect(model.cards[0]).toMatchObject({
      id: 'fox.ink.4',
      prompt: 'A fox in ink, calm',
      matrix: [
        ['seconds', '4'],
        ['style', 'ink'],
        ['mood', 'calm'],
        ['animal', 'fox'],
      ],
    });
  });

  it("gives each tile its value on every filter axis, so the page's script filters by them", () => {
    const html = renderGallery(model, []);
    expect(html).toContain('<label>style <select data-filter="data-axis-1">');
    const owl = galleryData(html).tiles.find((tile) => tile.id === 'owl.watercolor.8');
    expect(owl?.axes).toEqual(['8', 'watercolor', 'owl']);
    expect(html).toContain('No ledger yet at /batches/g.sqlite: nothing has run.');
  });
});
