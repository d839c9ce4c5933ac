import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadManifest } from '../../src/manifest/index.js';
import { cases } from './fixtures/bad/cases.js';

const OPTIONS_A_FIELD_MAY_MEAN = ['ledger', 'format', 'redo', 'only', 'sandbox', 'baseUrl', 'pollInterval'];
const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'bad');
// Fixtures biome cannot parse as YAML (it lints *.yaml) carry a .yaml.txt name instead.
const isManifest = (name: string) => name.endsWith('.yaml') || name.endsWith('.yaml.txt');

describe('bad manifest corpus', () => {
  it('has at least 30 fixtures, each with expectations and each expectation with a fixture', () => {
    const fixtures = readdirSync(dir).filter(isManifest).sort();
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
    expect(Object.keys(cases).sort()).toEqual(fixtures);
  });

  for (const [fixture, expected] of Object.entries(cases)) {
    it(`${fixture}: reports exactly the expected problems`, () => {
      const file = join(dir, fixture);
      const result = loadManifest(file);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      const actual = result.problems.map((p) => {
        const where =
          basename(p.file) === fixture
            ? `${p.line}:${p.column}`
            : `${basename(p.file)}:${p.line}:${p.column}`;
        return [where, p.path];
      });
      expect(actual).toEqual(expected.map(([where, path]) => [where, path]));
      result.problems.forEach((problem, i) => {
        expect(problem.message).toContain(expected[i]![2]);
        // In the library's words a name in backticks is an option, which the CLI words as its
        // flag: a manifest problem quotes fields, ids and variables as 'name', and names an
        // option only to say that the field is one.
        for (const [, name] of problem.message.matchAll(/`(\w+)`/g))
          expect(OPTIONS_A_FIELD_MAY_MEAN, problem.message).toContain(name);
        expect(formatProblem(problem)).toMatch(/^.+:\d+:\d+: /);
        expect(problem.line).toBeGreaterThanOrEqual(1);
        expect(problem.column).toBeGreaterThanOrEqual(1);
      });
    });
  }

  it('reports every problem of a manifest with many, not only the first', () => {
    const result = loadManifest(join(dir, 'many-problems.yaml'));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.path)).toEqual([
      'budget_usd',
      'retries',
      'items[0].promt',
      'items[1].id',
      'items[1].input.seconds',
      'items[2].id',
      'items[2].max_cost_usd',
    ]);
  });

  it('formats problems as file:line:column: path: message', () => {
    const result = loadManifest(join(dir, 'promt-typo.yaml'));
    if (result.ok) throw new Error('expected problems');
    expect(formatProblem(result.problems[0]!)).toBe(
      `${join(dir, 'promt-typo.yaml')}:5:5: items[0].promt: unknown field 'promt', did you mean 'prompt'?`,
    );
    expect(formatProblem({ file: 'm.yaml', line: 1, column: 1, path: '', message: 'no items' })).toBe(
      'm.yaml:1:1: no items',
    );
  });

  it('turns an unreadable manifest into a problem instead of throwing', () => {
    const missing = join(dir, 'no-such-manifest.yaml');
    expect(loadManifest(missing)).toEqual({
      ok: false,
      problems: [
        { file: missing, line: 1, column: 1, path: '', message: 'cannot read the manifest: file not found' },
      ],
    });
    const folder = loadManifest(dir);
    expect(folder.ok).toBe(false);
    if (!folder.ok) expect(folder.problems[0]!.message).toContain('folder');
  });
});
