import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifest, type Manifest } from '../../src/manifest/index.js';
import {
  combinationCount,
  isTemplateError,
  parseTemplate,
  renderTemplate,
  type Template,
  varCombinations,
  varText,
} from '../../src/manifest/template.js';
import { manifestOf, parseText } from '../support/manifest-text.js';

const parse = parseText;

const ok = manifestOf;

function template(text: string): Template {
  const parsed = parseTemplate(text);
  if (isTemplateError(parsed)) throw new Error(parsed.message);
  return parsed;
}

const idsAndPrompts = (m: Manifest) => m.items.map((item) => [item.id, item.input.prompt]);

describe('prompt templates', () => {
  it('fills placeholders and writes {{ and }} as literal braces', () => {
    const t = template('A {animal} in {{braces}} and }}{style}{{');
    expect(t.names).toEqual(['animal', 'style']);
    expect(renderTemplate(t, { animal: 'fox', style: 'ink' })).toBe('A fox in {braces} and }ink{');
    expect(renderTemplate(template('{n} apples, {ok}'), { n: 3, ok: true })).toBe('3 apples, true');
  });

  it('names the first mistake and where it is', () => {
    expect(parseTemplate('A {animal')).toMatchObject({
      message: expect.stringContaining('unclosed brace'),
      offset: 2,
    });
    expect(parseTemplate('A {a {b}')).toMatchObject({
      message: expect.stringContaining('unclosed brace'),
      offset: 2,
    });
    expect(parseTemplate('x } y')).toMatchObject({
      message: expect.stringContaining("'}' closes no"),
      offset: 2,
    });
    expect(parseTemplate('{two words}')).toMatchObject({
      message: expect.stringContaining('not a placeholder'),
    });
    expect(parseTemplate('{}')).toMatchObject({ offset: 0 });
  });

  it('parses into literal pieces and placeholders, no empty piece, each variable named once', () => {
    // Parsed once and rendered for every item that shares the prompt: an empty piece would be
    // appended 100,000 times for nothing, and a name listed twice checked twice.
    expect(parseTemplate('{a}{b}-{a}')).toEqual({
      parts: [{ name: 'a' }, { name: 'b' }, '-', { name: 'a' }],
      names: ['a', 'b'],
    });
    expect(parseTemplate('x {a} y')).toEqual({ parts: ['x ', { name: 'a' }, ' y'], names: ['a'] });
    expect(parseTemplate('')).toEqual({ parts: [], names: [] });
  });

  it('tells a mistake from a template', () => {
    expect(isTemplateError(parseTemplate('A {animal'))).toBe(true);
    expect(isTemplateError(parseTemplate('A {animal}'))).toBe(false);
    expect(isTemplateError(parseTemplate('no placeholder'))).toBe(false);
  });

  it('refuses a manifest whose prompt has a stray brace, at the prompt and the character', () => {
    const bad = parse('version: 1\nname: t\nprompt: "A {animal"\nvars: {animal: fox}\nitems:\n  - {id: a}\n');
    expect(bad.ok ? [] : bad.problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [
        3,
        'prompt',
        "unclosed brace: a '{' has no '}' (write '{{' for a literal brace) (at character 3 of the prompt)",
      ],
    ]);
  });

  it('prints numbers and booleans as YAML shows them, and strings as written', () => {
    expect(varText(1.5)).toBe('1.5');
    expect(varText(3)).toBe('3');
    expect(varText(false)).toBe('false');
    expect(varText('007')).toBe('007');
  });

  it('counts the combinations without making them: lists multiply, scalars count once', () => {
    expect(combinationCount({})).toBe(1);
    // A string has a length too: only lists multiply.
    expect(combinationCount({ mood: 'calm', n: 5, ok: true })).toBe(1);
    const vars = { a: [1, 2, 3], fixed: 'xy', b: ['p', 'q'] };
    expect(combinationCount(vars)).toBe(6);
    expect(combinationCount(vars)).toBe(varCombinations(vars).length);
    expect(combinationCount({ a: [1, 2], none: [] })).toBe(0);
  });

  it('expands every combination, the first list varying slowest, scalars in each', () => {
    const combos = varCombinations({ a: [1, 2], fixed: 'x', b: ['p', 'q', 'r'] });
    expect(combos.map((c) => c.listed)).toEqual([
      [1, 'p'],
      [1, 'q'],
      [1, 'r'],
      [2, 'p'],
      [2, 'q'],
      [2, 'r'],
    ]);
    expect(combos[4]!.vars).toEqual({ a: 2, fixed: 'x', b: 'q' });
  });

  it('makes the campaign example: 72 items, readable ids, the right prompts', () => {
    const result = loadManifest(join(import.meta.dirname, '../../manifests/campaign.yaml'));
    if (!result.ok) throw new Error(result.problems[0]!.message);
    const { items, warnings } = result.manifest;
    expect(items).toHaveLength(72);
    expect(warnings).toEqual([]);
    expect(items[0]).toMatchObject({
      id: 'red-sneaker.marble-counter.soft',
      vars: { product: 'red sneaker', surface: 'marble counter', light: 'soft' },
    });
    expect(items[0]!.input.prompt).toBe('A red sneaker on a marble counter, soft light, slow turntable shot');
    expect(items[1]!.id).toBe('red-sneaker.marble-counter.hard');
    expect(items[71]!.id).toBe('copper-kettle.linen-sheet.hard');
    expect(new Set(items.map((item) => item.input.prompt)).size).toBe(72);
  });

  it('crosses item variables with the matrix, the item id first, and inherits the prompt', () => {
    const m = ok(`
version: 1
name: t
prompt: "A {animal}, {style}"
vars: {style: [watercolor, ink]}
matrix: {seconds: [4, 8]}
items:
  - {id: fox, vars: {animal: fox}}
  - {id: owl, prompt: "An {animal} at night, {style}", vars: {animal: owl, style: charcoal}}
`);
    expect(m.items.map((item) => [item.id, item.input.prompt, item.input.seconds])).toEqual([
      ['fox.watercolor.4', 'A fox, watercolor', 4],
      ['fox.watercolor.8', 'A fox, watercolor', 8],
      ['fox.ink.4', 'A fox, ink', 4],
      ['fox.ink.8', 'A fox, ink', 8],
      ['owl.4', 'An owl at night, charcoal', 4],
      ['owl.8', 'An owl at night, charcoal', 8],
    ]);
    expect(m.items[4]!.vars).toEqual({ style: 'charcoal', animal: 'owl' });
  });

  it('keeps ids stable: a scalar edit keeps every id, a list edit renames only its values', () => {
    const base = (light: string, extra: string) => `
version: 1
name: t
prompt: "A {thing} in {light} light{extra}"
vars: {thing: [fox, owl], light: ${light}, extra: "${extra}"}
`;
    const before = ok(base('[soft, hard]', ''));
    const scalar = ok(base('[soft, hard]', ', 4k'));
    expect(scalar.items.map((i) => i.id)).toEqual(before.items.map((i) => i.id));
    expect(scalar.items.map((i) => i.input.prompt)).not.toEqual(before.items.map((i) => i.input.prompt));
    const list = ok(base('[golden, hard]', ''));
    expect(idsAndPrompts(list)).toEqual([
      ['fox.golden', 'A fox in golden light'],
      ['fox.hard', 'A fox in hard light'],
      ['owl.golden', 'A owl in golden light'],
      ['owl.hard', 'A owl in hard light'],
    ]);
    expect(before.items.map((i) => i.id)).toEqual(['fox.soft', 'fox.hard', 'owl.soft', 'owl.hard']);
  });

  it('leaves prompts without variables as written, braces included, with the ids they had', () => {
    const m = ok(`
version: 1
name: t
items:
  - {prompt: "JSON like {this} stays"}
`);
    // sha256 of {"input":{},"max_cost_micros":null,"metadata":{},"model":null,"prompt":"JSON like {this} stays"}
    expect(idsAndPrompts(m)).toEqual([['item-d1bcbfcccbd6', 'JSON like {this} stays']]);
  });

  it('reads vars.NAME columns of a CSV as text variables; an empty cell inherits', () => {
    const m = ok(
      `
version: 1
name: t
prompt: "A {product} on {surface}"
vars: {surface: [oak, slate]}
items_from: rows.csv
`,
      { 'rows.csv': 'id,vars.product,vars.surface,seconds\nmug,"mug, blue",,4\nhat,hat,felt,\n' },
    );
    expect(idsAndPrompts(m)).toEqual([
      ['mug.oak', 'A mug, blue on oak'],
      ['mug.slate', 'A mug, blue on slate'],
      ['hat', 'A hat on felt'],
    ]);
    expect(m.items[0]!.input.seconds).toBe(4);
  });

  it('reads vars of JSONL lines, and locates a placeholder with no variable at the line', () => {
    const head = 'version: 1\nname: t\nitems_from: rows.jsonl\n';
    const m = ok(head, {
      'rows.jsonl': '{"id": "a", "prompt": "{x} and {y}", "vars": {"x": [1, 2], "y": true}}\n',
    });
    expect(idsAndPrompts(m)).toEqual([
      ['a.1', '1 and true'],
      ['a.2', '2 and true'],
    ]);
    const bad = parse(head, { 'rows.jsonl': '\n{"id": "b", "prompt": "{z}", "vars": {"x": 1}}\n' });
    expect(bad.ok ? [] : bad.problems.map((p) => [p.file, p.line, p.column, p.path, p.message])).toEqual([
      [
        '/batches/rows.jsonl',
        2,
        13,
        'items_from[0].prompt',
        "placeholder {z} has no variable, did you mean 'x'?",
      ],
    ]);
  });

  it('warns about a variable no prompt uses, at the variable', () => {
    const m = ok(`
version: 1
name: t
prompt: "A {animal}"
vars: {animal: fox, unused: x}
items:
  - {id: a, vars: {mood: calm}}
`);
    expect(m.warnings.map((w) => [w.line, w.path, w.message])).toEqual([
      [5, 'vars.unused', "variable 'unused' is not used by any prompt"],
      [7, 'items[0].vars.mood', "variable 'mood' is not used by this item's prompt"],
    ]);
  });
});

describe('the manifests in manifests/', () => {
  const folder = join(import.meta.dirname, '../../manifests');
  const names = readdirSync(folder).filter((name) => name.endsWith('.yaml'));
  it.each(names)('%s loads without problems', (name) => {
    const result = loadManifest(join(folder, name));
    expect(result.ok ? [] : result.problems.map((p) => p.message)).toEqual([]);
  });
});
