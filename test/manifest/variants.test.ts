import { describe, expect, it } from 'vitest';
import { selectItems } from '../../src/batch/run-settings/item-selection.js';
import { redoIds } from '../../src/batch/run-settings/redo-list.js';
import { manifestOf, parseText } from '../support/manifest-text.js';

const parse = parseText;

const ok = manifestOf;

function problems(text: string, files: Record<string, string> = {}): string[] {
  const result = parse(text, files);
  if (result.ok) throw new Error('expected problems');
  return result.problems.map((p) => `${p.file.replace('/batches/', '')}:${p.line}: ${p.path}: ${p.message}`);
}

const head = 'version: 1\nname: takes\n';

describe('variants: N takes of an item', () => {
  it('makes N items side by side: the first keeps the id, the others are <id>.v<n>', () => {
    const m = ok(
      `${head}variants: 3\nitems:\n  - {id: hero, prompt: A hero}\n  - {id: sky, prompt: A sky, variants: 2}\n`,
    );
    expect(m.items.map((item) => [item.id, item.variant])).toEqual([
      ['hero', { of: 'hero', number: 1, count: 3 }],
      ['hero.v2', { of: 'hero', number: 2, count: 3 }],
      ['hero.v3', { of: 'hero', number: 3, count: 3 }],
      ['sky', { of: 'sky', number: 1, count: 2 }],
      ['sky.v2', { of: 'sky', number: 2, count: 2 }],
    ]);
    // Without {variant}, the N requests are the same: still N items, N jobs.
    expect(new Set(m.items.slice(0, 3).map((item) => JSON.stringify(item.input))).size).toBe(1);
  });

  it('leaves an item without variants as it was: same id, no variant, its braces sent as written', () => {
    const m = ok(
      `${head}items:\n  - {id: one, prompt: "Braces {kept}"}\n  - {id: two, prompt: "A {variant}", variants: 1}\n`,
    );
    expect(m.items.map((item) => [item.id, item.variant, item.input.prompt])).toEqual([
      ['one', undefined, 'Braces {kept}'],
      ['two', undefined, 'A 1'],
    ]);
  });

  it('fills {variant} in the prompt and in input texts; a value that is the placeholder alone is a number', () => {
    const m = ok(
      `${head}variants: 2\ninput: {seed: "{variant}", note: "take {variant}", nested: {a: "{variant}"}}\n` +
        `items:\n  - {id: a, prompt: "A fox, take {variant}"}\n`,
    );
    expect(m.items.map((item) => item.input)).toEqual([
      { seed: 1, note: 'take 1', nested: { a: '{variant}' }, prompt: 'A fox, take 1' },
      { seed: 2, note: 'take 2', nested: { a: '{variant}' }, prompt: 'A fox, take 2' },
    ]);
    expect(m.items[0]!.vars).toBeUndefined();
  });

  it('lets a variable named variant win over the take number', () => {
    const m = ok(`${head}variants: 2\nvars: {variant: blue}\nprompt: "A {variant} kite"\n`);
    expect(m.items.map((item) => item.input.prompt)).toEqual(['A blue kite', 'A blue kite']);
  });

  it('crosses with variables and the matrix, the variants of one combination side by side', () => {
    const m = ok(
      `${head}variants: 2\nmatrix: {orientation: ["16:9", "9:16"]}\nitems:\n  - {id: b, prompt: "A {x}", vars: {x: [cat, dog]}}\n`,
    );
    expect(m.items.map((item) => [item.id, item.variant?.of])).toEqual([
      ['b.cat.16-9', 'b.cat.16-9'],
      ['b.cat.16-9.v2', 'b.cat.16-9'],
      ['b.cat.9-16', 'b.cat.9-16'],
      ['b.cat.9-16.v2', 'b.cat.9-16'],
      ['b.dog.16-9', 'b.dog.16-9'],
      ['b.dog.16-9.v2', 'b.dog.16-9'],
      ['b.dog.9-16', 'b.dog.9-16'],
      ['b.dog.9-16.v2', 'b.dog.9-16'],
    ]);
  });

  it('gives a clashing variant id a hashed one, still a take of its item', () => {
    const m = ok(`${head}items:\n  - {id: a, prompt: one, variants: 2}\n  - {id: a.v2, prompt: two}\n`);
    const [, second, other] = m.items;
    expect(second!.id).toMatch(/^a\.v2-[0-9a-f]{10}$/);
    expect(second!.variant).toEqual({ of: 'a', number: 2, count: 2 });
    expect(other!.id).toMatch(/^a\.v2-[0-9a-f]{10}$/);
    expect(other!.id).not.toBe(second!.id);
  });

  it('reads variants from CSV columns and JSONL fields', () => {
    const m = ok(`${head}items_from: rows.csv\n`, { 'rows.csv': 'id,prompt,variants\nx,one,2\ny,two,\n' });
    expect(m.items.map((item) => item.id)).toEqual(['x', 'x.v2', 'y']);
    const j = ok(`${head}variants: 2\nitems_from: rows.jsonl\n`, {
      'rows.jsonl': '{"id": "x", "prompt": "one", "variants": 3}\n{"id": "y", "prompt": "two"}\n',
    });
    expect(j.items.map((item) => item.id)).toEqual(['x', 'x.v2', 'x.v3', 'y', 'y.v2']);
  });

  it('refuses a count out of bounds where it is written, and a near miss of the key', () => {
    expect(problems(`${head}variants: 0\nitems:\n  - {prompt: a}\n`)).toEqual([
      'm.yaml:3: variants: must be at least 1 (one variant of each item)',
    ]);
    expect(problems(`${head}items:\n  - {prompt: a, variants: 101}\n`)).toEqual([
      'm.yaml:4: items[0].variants: must be at most 100: each variant is a paid job of every item it applies to',
    ]);
    expect(problems(`${head}items_from: rows.csv\n`, { 'rows.csv': 'prompt,variants\na,two\n' })[0]).toMatch(
      /^rows\.csv:2: .*variants: must be a whole number of variants from 1 to 100, not "two"$/,
    );
    expect(problems(`${head}variant: 3\nitems:\n  - {prompt: a}\n`)[0]).toContain("did you mean 'variants'");
    expect(problems(`${head}variants: 2\nprompt: "A {varaint}"\n`)[0]).toContain("did you mean 'variant'");
  });

  it('counts variants against the expansion bound', () => {
    expect(
      problems(
        `${head}variants: 100\nvars: {n: [${Array.from({ length: 10001 }, (_, i) => i).join(', ')}]}\nprompt: "{n}"\n`,
      )[0],
    ).toContain('expand 1 item to 1000100');
  });

  it('names a later variant by output.name without {id} as the first and its .v<n>', () => {
    const m = ok(
      `${head}output: {name: "{seconds}/shot"}\ninput: {seconds: 4}\nitems:\n  - {prompt: a, variants: 2}\n`,
    );
    expect(m.items.map((item) => item.name)).toEqual(['4/shot', '4/shot.v2']);
  });

  it('lets `only` and `redo` name an item for all its variants, <id>.v1 for the first alone', () => {
    const m = ok(`${head}items:\n  - {id: a, prompt: one, variants: 3}\n  - {id: b, prompt: two}\n`);
    expect([...selectItems(m, ['a'])!]).toEqual(['a', 'a.v2', 'a.v3']);
    expect([...selectItems(m, ['a.v1'])!]).toEqual(['a']);
    expect([...selectItems(m, ['a.v3', 'b'])!]).toEqual(['a.v3', 'b']);
    expect(redoIds(m, ['a', 'b'])).toEqual(['a', 'a.v2', 'a.v3', 'b']);
    expect(redoIds(m, ['a.v1', 'a.v2', 'zz'])).toEqual(['a', 'a.v2', 'zz']);
  });
});
