import { describe, expect, it } from 'vitest';
import { formatProblem, parseManifest } from '../../src/manifest/index.js';

const HEAD = 'version: 1\nname: typos\n';
const files: Record<string, string> = {
  'rows.csv': 'id,prompt,secnds,style\na,First,4,noir\n',
  'rows.jsonl': '{"id":"a","prompt":"First","input":{"orientaton":"16:9"}}\n',
};
const reader = (rel: string) => ({ file: rel, text: files[rel] ?? '' });
const problems = (yaml: string) => {
  const result = parseManifest('m.yaml', HEAD + yaml, reader);
  if (result.ok) throw new Error('expected problems');
  return result.problems.map(formatProblem);
};
const warnings = (yaml: string) => {
  const result = parseManifest('m.yaml', HEAD + yaml, reader);
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  return result.manifest.warnings.map(formatProblem);
};

describe('unknown fields are errors with a suggestion', () => {
  it('at the top level', () => {
    expect(problems('modle: acme\nitems: [{prompt: a}]\n')).toEqual([
      "m.yaml:3:1: modle: unknown field 'modle', did you mean 'model'?",
    ]);
  });

  it('in an item and in output', () => {
    expect(problems('output: {dri: out}\nitems:\n  - promt: a\n')).toEqual([
      "m.yaml:3:10: output.dri: unknown field 'dri', did you mean 'dir'?",
      "m.yaml:5:5: items[0].promt: unknown field 'promt', did you mean 'prompt'?",
    ]);
  });

  it('inside input, for a near miss of a known field, wherever input is written', () => {
    const near = "'secnds', did you mean 'seconds'?";
    expect(problems('input: {secnds: 4}\nitems:\n  - prompt: a\n    input: {defintion: 720p}\n')).toEqual([
      `m.yaml:3:9: input.secnds: unknown input field ${near} (other unknown input fields are sent as written)`,
      "m.yaml:6:13: items[0].input.defintion: unknown input field 'defintion', did you mean 'definition'? (other unknown input fields are sent as written)",
    ]);
    expect(problems('matrix: {secnds: [4, 8]}\nitems: [{prompt: a}]\n')).toEqual([
      `m.yaml:3:10: matrix.secnds: unknown input field ${near} (other unknown input fields are sent as written)`,
    ]);
  });

  it('in CSV columns and JSONL items', () => {
    expect(problems('items_from: rows.csv\n')).toEqual([
      "rows.csv:2:3: items_from[0].input.secnds: unknown input field 'secnds', did you mean 'seconds'? (other unknown input fields are sent as written)",
    ]);
    expect(problems('items_from: rows.jsonl\n')[0]).toMatch(
      /^rows\.jsonl:1:\d+: items_from\[0\]\.input\.orientaton: unknown input field 'orientaton', did you mean 'orientation'\?/,
    );
  });
});

describe('what passes', () => {
  it('top-level keys starting with x- are ignored, so they can hold YAML anchors', () => {
    const result = parseManifest(
      'm.yaml',
      `${HEAD}x-defaults: &d {seconds: 4}\nx-note: anything\nitems:\n  - prompt: a\n    input: *d\n`,
      reader,
    );
    expect(result.ok && result.manifest.items[0]!.input).toEqual({ seconds: 4, prompt: 'a' });
  });

  it('unknown input fields far from every known one are sent, and noted once per field', () => {
    expect(
      warnings('input: {style: noir}\nitems:\n  - prompt: a\n    input: {style: pop, seed: 3}\n'),
    ).toEqual([
      "m.yaml:3:9: input.style: input field 'style' is not one mediabatch knows; it is sent to the service as written (written in 2 places)",
      "m.yaml:6:25: items[0].input.seed: input field 'seed' is not one mediabatch knows; it is sent to the service as written",
    ]);
  });
});
