import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadManifest, parseManifest } from '../../../src/manifest/index.js';
import { tempProject } from '../../support/cli.js';
import { FILE, noSibling, siblingText, wellFormed } from './support.js';

const VALID = {
  version: 1,
  name: 'fuzz',
  model: 'acme-video-2',
  input: { seconds: 2, definition: '480p', orientation: '16:9' },
  metadata: { campaign: 'spring' },
  max_cost_usd: '1.20',
  budget_usd: '30.00',
  concurrency: 3,
  retries: 2,
  output: { dir: 'out/fuzz' },
  matrix: { orientation: ['16:9', '9:16'] },
  items: [
    {
      id: 'beach',
      prompt: 'a beach',
      input: { seconds: 3 },
      model: 'm',
      metadata: { shot: '1' },
      max_cost_usd: '2.00',
    },
    { prompt: 'a city' },
  ],
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path to a value inside `value`, the root excluded. */
function pathsOf(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((entry, index) => [index, entry])
    : Object.entries(value);
  return entries.flatMap(([key, entry]) => [[...prefix, key], ...pathsOf(entry, [...prefix, key])]);
}

const hostileValue = fc.oneof(
  fc.constantFrom(
    null,
    true,
    0,
    -1,
    1.5,
    1e308,
    '',
    ' ',
    '../..',
    '/etc/passwd',
    'CON',
    'nul.txt',
    '\0',
    '%2e%2e%2f',
  ),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer({ min: 1000, max: 200_000 }).map((n) => 'x'.repeat(n)),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

const mutation = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('delete', 'set', 'rename'),
  value: hostileValue,
  key: fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.constantFrom('__proto__', 'constructor', 'promt'),
  ),
});

function mutate(
  base: Json,
  mutations: ReadonlyArray<{ pick: number; op: string; value: Json; key: string }>,
): Json {
  const doc = structuredClone(base) as Json;
  for (const { pick, op, value, key } of mutations) {
    const paths = pathsOf(doc);
    if (paths.length === 0) break;
    const path = paths[pick % paths.length]!;
    let parent = doc as Record<string | number, Json>;
    for (const segment of path.slice(0, -1)) parent = parent[segment] as Record<string | number, Json>;
    const last = path[path.length - 1]!;
    if (op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (op === 'set') parent[last] = value;
    else if (!Array.isArray(parent)) {
      Object.defineProperty(parent, key, {
        value: parent[last],
        enumerable: true,
        writable: true,
        configurable: true,
      });
      if (key !== last) delete parent[last];
    }
  }
  return doc;
}

describe('manifest loader under fuzzing (in-process)', () => {
  it('random text: never throws, problems are located', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 500 }),
          fc.string({ unit: 'grapheme', maxLength: 500 }),
        ),
        (text) => {
          wellFormed(() => parseManifest(FILE, text, noSibling));
          wellFormed(() =>
            parseManifest(FILE, `version: 1\nname: t\nitems:\n  - prompt: ${text}\n`, noSibling),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('mutated valid manifests (deletions, type swaps, renamed keys, unicode, huge strings), as YAML and JSON', () => {
    expect(wellFormed(() => parseManifest(FILE, stringify(VALID), noSibling)).ok).toBe(true);
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 6 }), (mutations) => {
        const doc = mutate(VALID as unknown as Json, mutations);
        wellFormed(() => parseManifest(FILE, stringify(doc), noSibling));
        wellFormed(() => parseManifest(FILE, JSON.stringify(doc, null, 1), noSibling));
      }),
      // Found by CI: output.dir set to ../.. puts the output folder at the root.
      { numRuns: 300, examples: [[[{ pick: 1095277320, op: 'set', value: '../..', key: '__proto__' }]]] },
    );
  });

  it('10 MB documents: a huge prompt, a huge comment, 100,000 items', () => {
    const tenMb = 10 * 1024 * 1024;
    const head = 'version: 1\nname: huge\nitems:\n';
    expect(
      wellFormed(() => parseManifest(FILE, `${head}  - prompt: ${'p'.repeat(tenMb)}\n`, noSibling)).ok,
    ).toBe(true);
    wellFormed(() => parseManifest(FILE, `${head}  - prompt: x\n# ${'c'.repeat(tenMb)}\n`, noSibling));
    const rows = Array.from(
      { length: 100_000 },
      (_, i) => `  - {id: i${i}, prompt: "a drone shot over a beach, take ${i}, ${'w'.repeat(60)}"}\n`,
    );
    const many = wellFormed(() => parseManifest(FILE, `${head}${rows.join('')}`, noSibling));
    expect(many.ok && many.manifest.items.length).toBe(100_000);
  }, 60_000);

  it('maps with 100,000 keys, repeated or unknown, are reported in linear time', () => {
    // Each key was compared with every earlier one: 20,000 keys took 9 s, these would take hours.
    const head = 'version: 1\nname: keys\nitems:\n  - prompt: x\n';
    const repeated = wellFormed(() => parseManifest(FILE, `${head}${'zz: 1\n'.repeat(100_000)}`, noSibling));
    expect(
      !repeated.ok && repeated.problems.filter((p) => p.message.startsWith('duplicate key')).length,
    ).toBe(99_999);
    const unknown = Array.from({ length: 100_000 }, (_, i) => `k${i}: 1\n`).join('');
    const typos = wellFormed(() => parseManifest(FILE, `${head}${unknown}`, noSibling));
    expect(!typos.ok && typos.problems.length).toBe(100_000);
    if (!typos.ok) expect(typos.problems[99_999]).toMatchObject({ line: 100_004, column: 1, path: 'k99999' });
  }, 60_000);

  it('10,000 levels of nesting in flow sequences, flow maps and block sequences', () => {
    const depth = 10_000;
    const head = 'version: 1\nname: deep\nitems:\n  - prompt: x\n    input:\n      deep: ';
    for (const text of [
      `${head}${'['.repeat(depth)}${']'.repeat(depth)}\n`,
      `${head}${'{a: '.repeat(depth)}1${'}'.repeat(depth)}\n`,
      `version: 1\nname: deep\nitems:\n  - ${'- '.repeat(depth)}x\n`,
      `${'['.repeat(depth)}`,
    ]) {
      const result = wellFormed(() => parseManifest(FILE, text, noSibling));
      expect(result.ok).toBe(false);
    }
  }, 60_000);

  it('invalid UTF-8 anywhere in a real manifest file is a located problem', () => {
    const dir = tempProject({});
    const valid = Buffer.from(stringify(VALID));
    const bad = fc.constantFrom(
      [0xff],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xf4, 0x90, 0x80, 0x80],
      [0x80],
    );
    fc.assert(
      fc.property(fc.nat({ max: valid.length }), bad, (at, bytes) => {
        const file = join(dir, 'batch.yaml');
        writeFileSync(file, Buffer.concat([valid.subarray(0, at), Buffer.from(bytes), valid.subarray(at)]));
        const result = wellFormed(() => loadManifest(file));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.problems[0]!.message).toMatch(/UTF-8/);
      }),
      { numRuns: 150 },
    );
  });

  it('CSV and JSONL garbage through items_from, from memory and from real files', () => {
    const dir = tempProject({});
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc
            .array(
              fc.constantFrom(
                'id,prompt\n',
                'a,b\n',
                '"',
                ',',
                '\r\n',
                '\0',
                '../x,p\n',
                '{"prompt":',
                '}\n',
              ),
              {
                maxLength: 30,
              },
            )
            .map((parts) => parts.join('')),
        ),
        fc.uint8Array({ maxLength: 200 }),
        (text, bytes) => {
          for (const ext of ['csv', 'jsonl']) {
            const manifest = `version: 1\nname: rows\nitems_from: rows.${ext}\n`;
            wellFormed(() => parseManifest(FILE, manifest, siblingText(text)));
            writeFileSync(join(dir, `rows.${ext}`), bytes);
            writeFileSync(join(dir, 'batch.yaml'), manifest);
            wellFormed(() => loadManifest(join(dir, 'batch.yaml')));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
