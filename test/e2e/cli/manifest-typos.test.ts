import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle;
const dirs: string[] = [];
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const CASES = [
  {
    what: 'a top-level typo',
    yaml: manifestYaml('typo', 'budget_ud: "5.00"\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:1: budget_ud:',
    says: 'unknown field `budget_ud`, did you mean `budget_usd`?',
  },
  {
    what: 'an item typo',
    yaml: manifestYaml('typo', 'items:\n  - id: a\n    promt: A beach\n'),
    where: 'batch.yaml:6:5: items[0].promt:',
    says: 'unknown field `promt`, did you mean `prompt`?',
  },
  {
    what: 'an output typo',
    yaml: manifestYaml('typo', 'output: {dirr: out/x}\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:10: output.dirr:',
    says: 'unknown field `dirr`, did you mean `dir`?',
  },
  {
    what: 'an input near miss',
    yaml: manifestYaml('typo', 'items:\n  - prompt: a\n    input: {secnds: 8}\n'),
    where: 'batch.yaml:6:13: items[0].input.secnds:',
    says: 'unknown input field `secnds`, did you mean `seconds`?',
  },
];

describe('a typo in the manifest stops run before anything is sent', () => {
  it.each(CASES)('$what: exit 2, file:line:column and the suggestion, no request', async (typo) => {
    const p = project('typo', typo.yaml);
    dirs.push(p.dir);
    const before = sandbox.records().requests.length;
    const result = await runAgainst(sandbox, p);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${p.dir}/${typo.where} ${typo.says}`);
    expect(result.stderr).toContain('nothing was submitted');
    expect(sandbox.records().requests.length).toBe(before);
  });
});
