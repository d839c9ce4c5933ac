import { describe, expect, it } from 'vitest';
import { formatProblem, namedOutputPath, parseManifest } from '../../src/manifest/index.js';

const FILE = '/batches/names.yaml';
const noSiblings = (path: string) => ({ file: path, error: 'not found' });
const parse = (text: string) => parseManifest(FILE, text, noSiblings);

function problems(text: string): string[] {
  const result = parse(text);
  if (result.ok) throw new Error('expected problems');
  return result.problems.map(formatProblem);
}

const HEAD = 'version: 1\nname: names\ninput: {seconds: 4}\n';

describe('output.name', () => {
  it('places items by input field, matrix axis and id', () => {
    const result = parse(
      `${HEAD}output: {name: "{orientation}/{matrix.style}-{id}"}\nmatrix:\n  orientation: ["16:9", "9:16"]\n  style: [noir]\nitems:\n  - {id: a, prompt: one}\n`,
    );
    if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
    expect(result.manifest.items.map((item) => item.name)).toEqual([
      '16-9/noir-a.16-9.noir',
      '9-16/noir-a.9-16.noir',
    ]);
    expect(namedOutputPath('/out', result.manifest.items[0]!.name!, 0, 1, 'mp4')).toBe(
      '/out/16-9/noir-a.16-9.noir.mp4',
    );
  });

  it('rejects two items mapping to one file, at the second item, naming the first', () => {
    const text = `${HEAD}output: {name: "{seconds}"}\nitems:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`;
    expect(problems(text)).toEqual([
      `${FILE}:7:5: items[1]: output.name gives this item the file name '4', already given to items[0] at names.yaml:6; add {id} or a matrix axis to the template`,
    ]);
  });

  it('rejects collisions that differ only in letter case', () => {
    const text = `${HEAD}output: {name: "{shot}"}\nitems:\n  - {id: a, prompt: one, input: {shot: Wide}}\n  - {id: b, prompt: two, input: {shot: wide}}\n`;
    expect(problems(text)[0]).toMatch(
      /names\.yaml:7:5: items\[1\]: output\.name gives this item the file name 'wide'/,
    );
  });

  it('rejects templates that could leave the output folder, at output.name', () => {
    for (const template of [
      '../{id}',
      '/abs/{id}',
      '{id}/../x',
      'a//{id}',
      '{matrix.nope}-{id}',
      '{id',
      '{a b}',
    ]) {
      const found = problems(`${HEAD}output: {name: "${template}"}\nitems:\n  - {id: a, prompt: one}\n`);
      expect(found, template).toHaveLength(1);
      expect(found[0], template).toMatch(/^\/batches\/names\.yaml:4:\d+: output\.name: /);
    }
  });

  it('rejects a value that makes an unsafe name, and a missing field, at the item', () => {
    const text = `${HEAD}output: {name: "{shot}/{id}"}\nitems:\n  - {id: a, prompt: one, input: {shot: ".."}}\n  - {id: b, prompt: two}\n`;
    const found = problems(text);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/names\.yaml:6:5: items\[0\]: output\.name gives/);
    expect(found[1]).toBe(
      `${FILE}:7:5: items[1]: output.name uses {shot}, but this item has no input field 'shot'`,
    );
  });

  it('output.sidecars: false turns provenance files off; they are on by default', () => {
    const on = parse(`${HEAD}items:\n  - {id: a, prompt: one}\n`);
    const off = parse(`${HEAD}output: {sidecars: false}\nitems:\n  - {id: a, prompt: one}\n`);
    expect(on.ok && on.manifest.sidecars).toBe(undefined);
    expect(off.ok && off.manifest.sidecars).toBe(false);
    expect(problems(`${HEAD}output: {sidecars: "no"}\nitems:\n  - {id: a, prompt: one}\n`)[0]).toMatch(
      /output\.sidecars: must be true or false/,
    );
  });
});
