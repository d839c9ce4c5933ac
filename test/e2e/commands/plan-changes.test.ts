import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../../src/money.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

const BEFORE = manifestYaml(
  'diff',
  `items:
  - {id: beach, prompt: A beach at sunrise}
  - {id: city, prompt: A city at night}
  - {id: forest, prompt: A forest in fog}
`,
);
const AFTER = manifestYaml(
  'diff',
  `items:
  - {id: beach, prompt: A beach at sunset}
  - {id: city, prompt: A city at night}
  - {id: lake, prompt: A lake in winter, input: {style: noir}}
  - {id: hills, prompt: Green hills}
`,
);

let sandbox: SandboxHandle;
const p = project('diff', BEFORE);
beforeAll(async () => {
  sandbox = await startTestSandbox();
  const first = await runAgainst(sandbox, p);
  if (first.code !== 0) throw new Error(`the first run failed: ${first.stderr}`);
  writeFileSync(p.manifest, AFTER);
  writeFileSync(join(p.outDir, 'notes.txt'), 'left here by hand');
});
afterAll(async () => {
  await sandbox.close();
  rmSync(p.dir, { recursive: true, force: true });
});

/** Every job of the first run had the same shape (2 s, 480p), so one price. */
const price = () => sandbox.records().jobs[0]!.amountMicros;

describe('plan after editing one prompt, removing one item and adding two', () => {
  it('--json says exactly that, with the removed files and the stray file', async () => {
    const result = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    const each = formatUsd(price());
    expect(doc.items).toEqual([
      {
        id: 'beach',
        plan: 'changed',
        reason: 'changed since the last run: input.prompt',
        changed_fields: ['input.prompt'],
        estimate_usd: each,
      },
      { id: 'city', plan: 'done', estimate_usd: null },
      { id: 'lake', plan: 'new', estimate_usd: each },
      { id: 'hills', plan: 'new', estimate_usd: each },
    ]);
    expect(doc.removed).toEqual([{ id: 'forest', state: 'done', files: ['out/diff/forest.mp4'] }]);
    expect(doc.stray_files).toEqual(['out/diff/notes.txt']);
    expect(doc.totals).toMatchObject({ new: 2, changed: 1, done: 1, to_submit: 3, removed: 1 });
    expect(doc.totals.expected_usd).toBe(formatUsd(3 * price()));
    expect(doc.totals.at_most_usd).toBeNull();
    expect(doc.warnings).toEqual([
      expect.stringMatching(/batch\.yaml:7:50: items\[2\]\.input\.style: input field 'style' is not one/),
    ]);
  });

  it('as text: one row per item, the removed one last, the stray file, and the summary line', async () => {
    const result = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const money = (micros: number) => `$${(micros / 1e6).toFixed(2)}`;
    expect(lines.slice(0, 7).map((line) => line.replace(/\s+/g, ' '))).toEqual([
      'diff: 4 items',
      'ITEM PLAN EXPECTED DETAIL',
      `~ beach changed ${money(price())} input.prompt`,
      '= city unchanged (done)',
      `+ lake new ${money(price())}`,
      `+ hills new ${money(price())}`,
      '- forest removed files kept: out/diff/forest.mp4',
    ]);
    expect(result.stdout).toContain(
      'files in the output folder this ledger did not write (left as they are; run never overwrites them):\n  ? out/diff/notes.txt (no sidecar beside it names the job that made it)\n',
    );
    expect(lines.at(-2)).toBe(
      `Plan: 2 new, 1 changed, 1 unchanged, 1 removed from the manifest, 1 stray file; expected ${money(3 * price())} (based on 3 prices seen), no upper bound.`,
    );
  });

  it('run prints the same summary line before it submits anything', async () => {
    const plan = JSON.parse((await runCli(['plan', p.manifest, '--json'], { cwd: p.dir })).stdout);
    const result = await runAgainst(sandbox, p);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(plan.summary);
  });
});
