import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputPathFor, parseManifest } from '../../../src/manifest/index.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import { cliEnv, startTestSandbox } from '../../support/e2e.js';
import {
  expectNoStackTrace,
  FILE,
  manifestOf,
  noSibling,
  problemsOf,
  siblingText,
  wellFormed,
} from './support.js';

const ESCAPES = [
  '../x',
  '..',
  '/abs',
  '%2e%2e%2f',
  'a\\b',
  'nul\0byte',
  'CON',
  'nul.txt',
  'a/../../b',
  '.hidden',
];

describe('ids that try to leave output.dir are refused wherever they come from', () => {
  it('in items, CSV rows and JSONL lines; hostile matrix values only ever give safe ids', () => {
    for (const id of ESCAPES) {
      const inYaml = parseManifest(
        FILE,
        `version: 1\nname: e\nitems:\n  - {id: ${JSON.stringify(id)}, prompt: p}\n`,
        noSibling,
      );
      const csv = parseManifest(
        FILE,
        'version: 1\nname: e\nitems_from: r.csv\n',
        siblingText(`id,prompt\n"${id}",p\n`),
      );
      const jsonl = parseManifest(
        FILE,
        'version: 1\nname: e\nitems_from: r.jsonl\n',
        siblingText(`${JSON.stringify({ id, prompt: 'p' })}\n`),
      );
      for (const result of [inYaml, csv, jsonl]) {
        expect(
          problemsOf(result)
            .map((p) => p.path)
            .join(' '),
          id,
        ).toMatch(/id/);
      }
      expect(() => outputPathFor('/out', id, 0, 1, 'mp4')).toThrow();
    }
    const matrix = `version: 1\nname: m\nmatrix:\n  style: ${JSON.stringify(ESCAPES)}\nitems:\n  - {id: base, prompt: p}\n  - {prompt: q}\n`;
    const expanded = manifestOf(wellFormed(() => parseManifest(FILE, matrix, noSibling)));
    expect(expanded.items).toHaveLength(2 * ESCAPES.length);
  });
});

describe('the CLI on hostile manifests', () => {
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  const cases: Record<string, Record<string, string | Buffer>> = {
    'escaping ids': {
      'batch.yaml': `version: 1\nname: esc\nitems:\n${ESCAPES.map((id) => `  - {id: ${JSON.stringify(id)}, prompt: p}\n`).join('')}`,
    },
    'invalid UTF-8': {
      'batch.yaml': Buffer.from('version: 1\nname: u\nitems:\n  - prompt: caf\xe9\n', 'latin1'),
    },
    '10,000 levels of nesting': {
      'batch.yaml': `version: 1\nname: d\nitems:\n  - prompt: x\n    input: {deep: ${'['.repeat(10_000)}}\n`,
    },
    'CSV rows escaping': {
      'batch.yaml': 'version: 1\nname: c\nitems_from: rows.csv\n',
      'rows.csv': 'id,prompt\n../x,p\n/abs,q\n"a\\b",r\n',
    },
    'JSONL garbage': {
      'batch.yaml': 'version: 1\nname: j\nitems_from: rows.jsonl\n',
      'rows.jsonl': '{"id": "..", "prompt": "p"}\n{"prompt": \0}\nnot json\n',
    },
    'wrong types everywhere': {
      'batch.yaml':
        'version: "1"\nname: BAD NAME\nretries: -1\nitems:\n  - {prompt: [1], input: {seconds: 1.5}}\n',
    },
  };

  for (const [label, files] of Object.entries(cases)) {
    it(`${label}: exit 2, file:line:col, no stack trace, nothing sent`, async () => {
      const dir = tempProject({});
      for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
      const before = sandbox.records().requests.length;
      const result = await runCli(['run', 'batch.yaml', '--poll-interval', '0.1'], {
        cwd: dir,
        env: cliEnv(sandbox),
      });
      expectNoStackTrace(result);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/(batch\.yaml|rows\.csv|rows\.jsonl):[1-9]\d*:[1-9]\d*: /);
      expect(result.stderr).toContain('nothing was submitted');
      expect(
        sandbox
          .records()
          .requests.slice(before)
          .filter((r) => r.method === 'POST'),
      ).toEqual([]);
    });
  }
});
