import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

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
    says: "unknown field 'budget_ud', did you mean 'budget_usd'?",
  },
  {
    what: 'an item typo',
    yaml: manifestYaml('typo', 'items:\n  - id: a\n    promt: A beach\n'),
    where: 'batch.yaml:6:5: items[0].promt:',
    says: "unknown field 'promt', did you mean 'prompt'?",
  },
  {
    what: 'an output typo',
    yaml: manifestYaml('typo', 'output: {dirr: out/x}\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:10: output.dirr:',
    says: "unknown field 'dirr', did you mean 'dir'?",
  },
  {
    what: 'an input near miss',
    yaml: manifestYaml('typo', 'items:\n  - prompt: a\n    input: {secnds: 8}\n'),
    where: 'batch.yaml:6:13: items[0].input.secnds:',
    says: "unknown input field 'secnds', did you mean 'seconds'?",
  },
  {
    what: "a command's setting written as a field (ledger)",
    yaml: manifestYaml('typo', 'ledger: other.sqlite\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:1: ledger:',
    says: "unknown field 'ledger': the ledger is chosen for each command with --ledger, not in the manifest",
  },
  {
    what: "export's format written as a field",
    yaml: manifestYaml('typo', 'format: csv\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:1: format:',
    says: "unknown field 'format': not a manifest field: --format chooses export's record format (jsonl or csv) when exporting",
  },
  {
    what: 'a redo written on an item',
    yaml: manifestYaml('typo', 'items:\n  - id: a\n    prompt: a\n    redo: true\n'),
    where: 'batch.yaml:7:5: items[0].redo:',
    says: "unknown field 'redo': a redo is asked for when running, with --redo and the item's id, not in the manifest",
  },
  {
    what: 'a field that is no option either',
    yaml: manifestYaml('typo', 'manifest: x\nitems:\n  - prompt: a\n'),
    where: 'batch.yaml:4:1: manifest:',
    says: "unknown field 'manifest' (expected one of: version, name, model,",
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
    // A field is quoted as a field; a flag appears only where the words name the flag to use.
    expect(result.stderr).not.toContain('`');
    expect(result.stderr).not.toMatch(/unknown (input )?field --/);
    expect(sandbox.records().requests.length).toBe(before);
  });
});

describe('plan reports every manifest problem at once, each where it is written', () => {
  const plan = (p: { manifest: string; dir: string }) =>
    runCli(['plan', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });

  it('a case clash of ids shows with five other mistakes, one of them in the clashing item', async () => {
    const yaml =
      'version: 1\nname: clash\nbudget_usd: 25\nconcurency: 2\nitems:\n' +
      '  - id: t1\n    promt: A beach\n' +
      '  - id: T1\n    prompt: A lake\n    input: {seconds: 0}\n' +
      '  - id: fox\n    prompt: "A {animl} in the snow"\n    vars: {animal: fox}\n';
    const p = project('clash', yaml);
    dirs.push(p.dir);
    const before = sandbox.records().requests.length;
    const result = await plan(p);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '6 problems in the manifest; run would refuse it too, and submit nothing',
    );
    const at = `${p.dir}/batch.yaml`;
    for (const line of [
      `${at}:3:13: budget_usd: amounts must be quoted strings`,
      `${at}:4:1: concurency: unknown field 'concurency', did you mean 'concurrency'?`,
      `${at}:7:5: items[0].promt: unknown field 'promt'`,
      `${at}:8:9: items[1].id: id 'T1' differs from 't1' (items[0] at batch.yaml:6) only in letter case`,
      `${at}:10:22: items[1].input.seconds: must be a positive whole number of seconds`,
      `${at}:12:13: items[2].prompt: placeholder {animl} has no variable, did you mean 'animal'?`,
    ])
      expect(result.stderr).toContain(line);
    expect(sandbox.records().requests.length).toBe(before);
  });

  it('an empty items list is reported at the list, not at the top of the file', async () => {
    const p = project('empty', 'version: 1\nname: empty\nitems: []\n');
    dirs.push(p.dir);
    const before = sandbox.records().requests.length;
    const result = await plan(p);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${p.dir}/batch.yaml:3:8: items: no items: list them under 'items'`);
    expect(sandbox.records().requests.length).toBe(before);
  });
});
