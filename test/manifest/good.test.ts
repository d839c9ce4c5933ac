import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifest, type Manifest, parseManifest } from '../../src/manifest/index.js';
import { manifestOf, parseText } from '../support/manifest-text.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'good');

function load(name: string): Manifest {
  const result = loadManifest(join(dir, name));
  if (!result.ok)
    throw new Error(result.problems.map((p) => `${p.line}:${p.column} ${p.message}`).join('\n'));
  return result.manifest;
}

const parse = parseText;

const ok = manifestOf;

describe('good manifests', () => {
  it('merges defaults, item overrides, CSV rows and the matrix, in manifest order', () => {
    const m = load('spring.yaml');
    expect(m).toMatchObject({
      file: join(dir, 'spring.yaml'),
      name: 'spring-campaign',
      budgetMicros: 30_000_000,
      concurrency: 3,
      retries: 0,
      outputDir: join(dir, 'out', 'spring'),
    });
    expect(m.items.map((i) => i.id)).toEqual([
      'beach-sunrise.16-9',
      'beach-sunrise.9-16',
      'item-a8aa59c6dd5d.16-9',
      'item-a8aa59c6dd5d.9-16',
      'forest.16-9',
      'forest.9-16',
      'item-124a2e8c3c7c.16-9',
      'item-124a2e8c3c7c.9-16',
    ]);
    expect(m.items[1]).toEqual({
      id: 'beach-sunrise.9-16',
      model: 'acme-video-3',
      input: {
        seconds: 8,
        definition: '720p',
        orientation: '9:16',
        prompt: 'A drone shot over a beach at sunrise',
      },
      metadata: { campaign: 'spring', shot: '1' },
      maxCostMicros: 2_000_000,
      matrix: { orientation: '9:16' },
    });
    expect(m.items[2]).toMatchObject({ model: 'acme-video-2', maxCostMicros: 1_200_000 });
    expect(m.items[2]!.input).toEqual({
      seconds: 6,
      definition: '720p',
      orientation: '16:9',
      prompt: 'City lights at night',
    });
    // CSV: seconds becomes a number, other columns are string input fields, empty cells are absent.
    expect(m.items[4]!.input).toEqual({
      seconds: 4,
      definition: '720p',
      orientation: '16:9',
      style: 'noir',
      prompt: 'Foggy pine forest, slow dolly',
    });
    expect(m.items[6]).toMatchObject({ model: 'acme-video-4', maxCostMicros: 500_000 });
    expect(m.items[6]!.input.prompt).toBe('A lake at dawn,\nmist rising');
    expect(m.items[6]!.input.seconds).toBe(6);
  });

  it('reads JSONL items with CRLF and blank lines, and keeps an absolute output dir', () => {
    const m = load('jsonl.yaml');
    expect(m.outputDir).toBe('/tmp/mediabatch-absolute-out');
    expect(m.items).toEqual([
      {
        id: 'ocean',
        model: null,
        input: { definition: '1080p', seconds: 5, camera: { lens: '35mm' }, prompt: 'Waves on black sand' },
        metadata: {},
        maxCostMicros: null,
      },
      {
        id: 'item-d2f14b2798ba',
        model: null,
        input: { definition: '1080p', prompt: 'Desert stars' },
        metadata: { take: 2 },
        maxCostMicros: 750_000,
      },
    ]);
  });

  it('applies defaults: retries 2, no budget, no concurrency, out/<name> beside the manifest', () => {
    const m = load('minimal.yaml');
    expect(m).toEqual({
      file: join(dir, 'minimal.yaml'),
      name: 'minimal',
      budgetMicros: null,
      concurrency: null,
      retries: 2,
      outputDir: join(dir, 'out', 'minimal'),
      items: [
        {
          id: 'item-14c81805e89b',
          model: null,
          input: { prompt: 'A drone shot over a beach' },
          metadata: {},
          maxCostMicros: null,
        },
      ],
      warnings: [],
    });
  });

  it('follows YAML anchors and gives each item its own input object', () => {
    const m = load('anchors.yaml');
    expect(m.items.map((i) => i.input)).toEqual([
      { orientation: '9:16', seconds: 3, prompt: 'Wide shot of a harbour' },
      { orientation: '9:16', seconds: 3, prompt: 'Close-up of a rope on a bollard' },
    ]);
    expect(m.items[0]!.input).not.toBe(m.items[1]!.input);
  });

  it('resolves output.dir against the manifest folder, also upwards', () => {
    const base = 'version: 1\nname: out-test\nitems:\n  - prompt: p\n';
    expect(ok(base).outputDir).toBe('/batches/out/out-test');
    expect(ok(`${base}output:\n  dir: renders/x\n`).outputDir).toBe('/batches/renders/x');
    expect(ok(`${base}output:\n  dir: ../shared\n`).outputDir).toBe('/shared');
    expect(ok(`${base}output: {}\n`).outputDir).toBe('/batches/out/out-test');
  });

  it('passes items_from exactly as written to the reader', () => {
    const asked: string[] = [];
    const result = parseManifest('/b/m.yaml', 'version: 1\nname: n\nitems_from: sub/list.jsonl\n', (rel) => {
      asked.push(rel);
      return { file: `/b/${rel}`, text: '{"prompt": "x"}\n' };
    });
    expect(asked).toEqual(['sub/list.jsonl']);
    expect(result.ok).toBe(true);
  });

  it('derives readable matrix ids, falling back to a hash on collisions and long ids', () => {
    const m = ok(
      'version: 1\nname: mx\nitems:\n  - id: a\n    prompt: p\nmatrix:\n  orientation: ["16:9", "4:3"]\n  seed: [1, 2]\n',
    );
    expect(m.items.map((i) => i.id)).toEqual(['a.16-9.1', 'a.16-9.2', 'a.4-3.1', 'a.4-3.2']);
    expect(m.items[3]!.input).toEqual({ orientation: '4:3', seed: 2, prompt: 'p' });

    const clash = ok(
      'version: 1\nname: mx\nitems:\n  - id: a\n    prompt: p\nmatrix:\n  style: ["x y", "x/y", z]\n',
    );
    expect(clash.items.map((i) => i.id)).toEqual([
      expect.stringMatching(/^a\.x-y-[0-9a-f]{10}$/),
      expect.any(String),
      'a.z',
    ]);
    expect(clash.items[0]!.id).not.toBe(clash.items[1]!.id);

    const long = 'l'.repeat(120);
    const longId = ok(
      `version: 1\nname: mx\nitems:\n  - id: ${long}\n    prompt: p\nmatrix:\n  style: [wide-angle]\n`,
    );
    expect(longId.items[0]!.id).toHaveLength(128);
    expect(longId.items[0]!.id).toMatch(/^l+-[0-9a-f]{10}$/);
  });

  it('accepts input fields the service leaves open, with any JSON value', () => {
    const m = ok(
      'version: 1\nname: open\nitems:\n  - prompt: p\n    input: {seed: 7, negative: [blur, noise], style: {tone: warm}, loop: true, extra: null}\n',
    );
    expect(m.items[0]!.input).toEqual({
      seed: 7,
      negative: ['blur', 'noise'],
      style: { tone: 'warm' },
      loop: true,
      extra: null,
      prompt: 'p',
    });
  });

  it('points CSV problems at the line where a multi-line row starts', () => {
    const csv = 'id,prompt,seconds\nok,"one\ntwo\nthree",4\nbad,"x\ny",0\n';
    const result = parse('version: 1\nname: csv\nitems_from: rows.csv\n', { 'rows.csv': csv });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      {
        file: '/batches/rows.csv',
        line: 5,
        column: 3,
        path: 'items_from[1].input.seconds',
        message: expect.stringContaining('positive whole number'),
      },
    ]);
  });
});
