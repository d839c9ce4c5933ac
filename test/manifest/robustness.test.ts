import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifest, type ManifestResult, parseManifest } from '../../src/manifest/index.js';

const noFiles = (rel: string) => ({ file: `/m/${rel}`, error: 'file not found' });
const scratch = mkdtempSync(join(tmpdir(), 'mediabatch-manifest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every result is a manifest or located problems; never a throw, never our own crash. */
function expectWellFormed(result: ManifestResult): void {
  if (result.ok) return;
  expect(result.problems.length).toBeGreaterThan(0);
  for (const p of result.problems) {
    expect(p.line).toBeGreaterThanOrEqual(1);
    expect(p.column).toBeGreaterThanOrEqual(1);
    expect(typeof p.path).toBe('string');
    expect(p.message).not.toContain('internal error');
  }
}

function problemsOf(result: ManifestResult) {
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

const yamlTokens = fc.constantFrom(
  'version: 1\n',
  'name: fuzz\n',
  'items:\n',
  '  - prompt: x\n',
  '  - id: ',
  '    input: ',
  'matrix:\n',
  '  seconds: ',
  'items_from: a.jsonl\n',
  'max_cost_usd: ',
  '"1.5"',
  '1.5',
  '[',
  ']',
  '{',
  '}',
  ', ',
  ': ',
  '- ',
  '&a ',
  '*a',
  '!tag ',
  '? ',
  '---\n',
  '...\n',
  '\t',
  '  ',
  '\n',
  '"',
  "'",
  '#',
  '|\n',
  '>-\n',
  '\0',
  '\uFEFF',
  '\uD800',
  '%YAML 1.1\n',
  '<<: *a\n',
  '__proto__: ',
  '.inf',
  '~',
);

describe('hostile input never throws', () => {
  it('arbitrary text, including lone surrogates and control characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expectWellFormed(parseManifest('/m/x.yaml', text, noFiles));
      }),
      { numRuns: 300 },
    );
  });

  it('YAML-shaped token soup', () => {
    fc.assert(
      fc.property(fc.array(yamlTokens, { maxLength: 40 }), (tokens) => {
        const files = (rel: string) => ({ file: `/m/${rel}`, text: tokens.join('') });
        expectWellFormed(parseManifest('/m/x.yaml', tokens.join(''), files));
      }),
      { numRuns: 500 },
    );
  });

  it('any JSON value as the document, and as an items_from line', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expectWellFormed(parseManifest('/m/x.yaml', text, noFiles));
        const manifest = 'version: 1\nname: j\nitems_from: a.jsonl\n';
        expectWellFormed(parseManifest('/m/x.yaml', manifest, () => ({ file: '/m/a.jsonl', text })));
        expectWellFormed(
          parseManifest('/m/x.yaml', manifest.replace('jsonl', 'csv'), () => ({ file: '/m/a.csv', text })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('binary garbage and invalid UTF-8 files on disk', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const file = join(scratch, 'garbage.yaml');
        writeFileSync(file, bytes);
        expectWellFormed(loadManifest(file));
      }),
      { numRuns: 100 },
    );
    const file = join(scratch, 'latin1.yaml');
    writeFileSync(file, 'version: 1\nname: x\nitems_from: rows.csv\n');
    writeFileSync(join(scratch, 'rows.csv'), Buffer.from('id,prompt\na,caf\xe9\n', 'latin1'));
    expect(problemsOf(loadManifest(file))).toEqual([
      {
        file,
        line: 3,
        column: 13,
        path: 'items_from',
        message: "cannot read 'rows.csv': not valid UTF-8 text (bad byte at line 2, column 6)",
      },
    ]);
  });

  it('huge nesting in YAML, JSONL and input values', () => {
    for (const text of ['['.repeat(100_000), '{a: '.repeat(20_000), `${'- '.repeat(5_000)}x`]) {
      expectWellFormed(parseManifest('/m/x.yaml', text, noFiles));
    }
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const jsonl = `{"prompt": "p", "input": {"deep": ${deep}}}\n`;
    const viaJsonl = parseManifest('/m/x.yaml', 'version: 1\nname: d\nitems_from: a.jsonl\n', () => ({
      file: '/m/a.jsonl',
      text: jsonl,
    }));
    expect(problemsOf(viaJsonl)[0]!.message).toContain('nested more than 32 levels');

    const nested = `${'{a: '.repeat(40)}1${'}'.repeat(40)}`;
    const viaYaml = parseManifest(
      '/m/x.yaml',
      `version: 1\nname: d\nitems:\n  - prompt: p\n    input: {x: ${nested}}\n`,
      noFiles,
    );
    const [problem] = problemsOf(viaYaml);
    expect(problem!.message).toContain('nested more than 32 levels');
    expect(problem!.path).toMatch(/^items\[0\]\.input\.x(\.a)+$/);
  });

  it('alias bombs are refused', () => {
    const rows = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++)
      rows.push(
        `${'abcdefgh'[i]}: &${'abcdefgh'[i]} [${Array(9)
          .fill(`*${'abcdefgh'[i - 1]}`)
          .join(', ')}]`,
      );
    const [problem] = problemsOf(parseManifest('/m/x.yaml', `${rows.join('\n')}\n`, noFiles));
    expect(problem!.message).toContain('alias');
  });

  it('__proto__ keys are refused and pollute nothing', () => {
    const text =
      'version: 1\nname: p\nitems:\n  - prompt: p\n    input: {__proto__: {polluted: 1}}\n    metadata: {__proto__: {polluted: 1}}\n';
    const problems = problemsOf(parseManifest('/m/x.yaml', text, noFiles));
    expect(problems.map((p) => [p.line, p.column, p.path])).toEqual([
      [5, 13, 'items[0].input.__proto__'],
      [6, 16, 'items[0].metadata.__proto__'],
    ]);
    const csv = parseManifest('/m/x.yaml', 'version: 1\nname: p\nitems_from: a.csv\n', () => ({
      file: '/m/a.csv',
      text: 'prompt,__proto__,constructor\np,x,y\n',
    }));
    expect(problemsOf(csv).map((p) => p.path)).toEqual(['items_from[0].input.__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('scale', () => {
  it('loads 100,000 JSONL items quickly (sanity bound, not a benchmark)', () => {
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const item = i % 2 === 0 ? { id: `clip-${i}` } : {};
      lines.push(
        JSON.stringify({
          ...item,
          prompt: `Shot ${i} of a beach`,
          input: { seconds: 1 + (i % 9) },
          metadata: { row: i },
        }),
      );
    }
    const text = `${lines.join('\n')}\n`;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = parseManifest(
      '/m/big.yaml',
      'version: 1\nname: big\ninput: {definition: 720p}\nitems_from: big.jsonl\n',
      () => ({
        file: '/m/big.jsonl',
        text,
      }),
    );
    const elapsed = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    // Wall time varies with the machine's load; CPU time says what this code costs.
    console.info(
      `100,000 JSONL items parsed, validated and expanded in ${elapsed.toFixed(0)} ms ` +
        `(${((user + system) / 1000).toFixed(0)} ms CPU)`,
    );
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.manifest.items).toHaveLength(100_000);
    expect(elapsed).toBeLessThan(10_000);
  });
});

describe('JSONL lines', () => {
  it('are split at \\r\\n, \\n or \\r after a BOM, blank lines skipped, each problem on its own line', () => {
    const text = [
      '\uFEFF{"prompt": "a", "input": {"seconds": 0}}',
      '\r\n',
      '\r\n',
      '{"prompt": "b"}\r',
      '{"prompt": "c", "prompt": "d"}\n',
      '   \n',
      '{"promt": "e"}\r',
      'not json\n',
      '{"prompt": "f", "input": {"seconds": -1}}',
    ].join('');
    const manifest = 'version: 1\nname: j\nitems_from: a.jsonl\n';
    const result = parseManifest('/m/x.yaml', manifest, () => ({ file: '/m/a.jsonl', text }));
    const where = problemsOf(result).map((p) => `${p.line}:${p.column} ${p.path}`);
    expect(where).toEqual([
      '1:27 items_from[0].input.seconds',
      '4:17 items_from[2].prompt',
      '6:2 items_from[3].promt',
      '7:1 items_from[4]',
      '8:27 items_from[5].input.seconds',
    ]);
  });
});
