import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import {
  type E2eProject,
  expectRerunSendsNothing,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

const CAMPAIGN = readFileSync(join(import.meta.dirname, '../../../manifests/campaign.yaml'), 'utf8');
const PRODUCTS = [
  'red sneaker',
  'leather handbag',
  'steel watch',
  'ceramic mug',
  'wool scarf',
  'glass perfume bottle',
  'denim jacket',
  'wireless earbuds',
  'silk tie',
  'canvas backpack',
  'bamboo sunglasses',
  'copper kettle',
];
const SURFACES = ['marble counter', 'oak table', 'linen sheet'];
const slug = (text: string) => text.replaceAll(' ', '-');

/** What the campaign must send, in manifest order: product slowest, light fastest. */
function expectedCampaign(lights: readonly string[]): Array<[string, string]> {
  return PRODUCTS.flatMap((product) =>
    SURFACES.flatMap((surface) =>
      lights.map((light): [string, string] => [
        `${slug(product)}.${slug(surface)}.${light}`,
        `A ${product} on a ${surface}, ${light} light, slow turntable shot`,
      ]),
    ),
  );
}

/** The sandbox's jobs of one manifest as [item id, prompt sent], in creation order. */
function jobsSent(sandbox: SandboxHandle, name: string, since = 0): Array<[string, string]> {
  return sandbox
    .records()
    .jobs.filter((job) => job.metadata['mediabatch.manifest'] === name)
    .slice(since)
    .map((job) => [String(job.metadata['mediabatch.item']), String(job.input.prompt)]);
}

const sorted = (pairs: Array<[string, string]>) => [...pairs].sort((a, b) => a[0].localeCompare(b[0]));

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startTestSandbox({
    workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 12 }],
  });
});
afterAll(async () => {
  await sandbox.close();
});

describe('the campaign example (12 products x 3 surfaces x 2 lights)', () => {
  // The example's output folder is ../out beside manifests/, as in the repository.
  const dir = tempProject({ 'manifests/campaign.yaml': CAMPAIGN });
  const p: E2eProject = {
    dir,
    manifest: join(dir, 'manifests/campaign.yaml'),
    ledger: join(dir, 'manifests/.mediabatch/campaign.sqlite'),
    outDir: join(dir, 'out/campaign'),
  };

  it('plan shows 72 new items with their prompts; run sends exactly those; a re-run sends nothing', async () => {
    const plan = await runCli(['plan', p.manifest], { cwd: dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^campaign: 72 items$/m);
    expect(plan.stdout).toMatch(
      /^\+ red-sneaker\.marble-counter\.soft +new +\$0\.40 +"A red sneaker on a marble counter, soft light, slow turntable shot"$/m,
    );

    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(sorted(jobsSent(sandbox, 'campaign'))).toEqual(sorted(expectedCampaign(['soft', 'hard'])));
    const vars = ledgerRows<{ item_id: string; vars: string }>(
      p,
      "SELECT item_id, vars FROM attempts WHERE item_id = 'steel-watch.oak-table.hard'",
    );
    expect(vars.map((row) => JSON.parse(row.vars))).toEqual([
      { product: 'steel watch', surface: 'oak table', light: 'hard' },
    ]);
    const sidecar = JSON.parse(readFileSync(join(p.outDir, 'steel-watch.oak-table.hard.json'), 'utf8'));
    expect(sidecar).toMatchObject({
      prompt: 'A steel watch on a oak table, hard light, slow turntable shot',
      vars: { product: 'steel watch', surface: 'oak table', light: 'hard' },
    });
    await expectRerunSendsNothing(sandbox, p, 0);
  });

  it('changing one value of a list ("soft" to "golden") makes exactly the 36 items in that light', async () => {
    writeFileSync(p.manifest, CAMPAIGN.replace('light: [soft, hard]', 'light: [golden, hard]'));
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: dir });
    const doc = JSON.parse(plan.stdout);
    expect(doc.totals).toMatchObject({ items: 72, new: 36, done: 36, removed: 36, to_submit: 36 });
    const before = jobsSent(sandbox, 'campaign').length;
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    const golden = expectedCampaign(['golden', 'hard']).filter(([id]) => id.endsWith('.golden'));
    expect(sorted(jobsSent(sandbox, 'campaign', before))).toEqual(sorted(golden));
  });
});

describe('changing a variable that is not a list', () => {
  const head = (style: string) =>
    manifestYaml(
      'styles',
      `prompt: "A {animal} in the {place}, {style}"
vars: {style: ${style}}
items:
  - {id: fox, vars: {animal: fox, place: [snow, forest]}}
  - {id: owl, vars: {animal: owl, place: snow, style: charcoal}}
`,
    );
  const p = project('styles', head('ink'));

  it('re-runs exactly the items it reaches, and plan says which variable changed', async () => {
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(p.manifest, head('watercolor'));
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    const doc = JSON.parse(plan.stdout);
    const changed = {
      plan: 'changed',
      changed_fields: ['input.prompt'],
      changed_vars: ['style "ink" -> "watercolor"'],
    };
    expect(doc.items).toMatchObject([
      { id: 'fox.snow', ...changed, prompt: 'A fox in the snow, watercolor' },
      { id: 'fox.forest', ...changed, prompt: 'A fox in the forest, watercolor' },
      { id: 'owl', plan: 'done', prompt: 'A owl in the snow, charcoal' },
    ]);
    const text = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(text.stdout).toMatch(
      /^~ fox\.snow +changed .*input\.prompt \(variable style "ink" -> "watercolor"\)$/m,
    );

    const before = jobsSent(sandbox, 'styles').length;
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(jobsSent(sandbox, 'styles', before)).toEqual([
      ['fox.snow', 'A fox in the snow, watercolor'],
      ['fox.forest', 'A fox in the forest, watercolor'],
    ]);
  });
});

describe('a variable no prompt uses', () => {
  it('is a warning in plan, at the variable, and not a mistake', async () => {
    const p = project(
      'unused',
      manifestYaml('unused', 'prompt: "A {animal}"\nvars: {animal: [fox, owl], spare: x}\n'),
    );
    const plan = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(
      /^warning: .*batch\.yaml:5:28: vars\.spare: variable 'spare' is not used by any prompt$/m,
    );
    expect(plan.stdout).toMatch(/^\+ fox +new .*"A fox"$/m);
  });
});

describe('a template mistake stops everything before a request', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      'a placeholder with no variable',
      'prompt: "A {prodcut} on oak"\nvars: {product: [mug, hat]}\n',
      /batch\.yaml:4:9: prompt: placeholder \{prodcut\} has no variable, did you mean 'product'\?/,
    ],
    [
      'an unclosed brace',
      'vars: {animal: fox}\nitems:\n  - {id: a, prompt: "A {animal in snow"}\n',
      /batch\.yaml:6:21: items\[0\]\.prompt: unclosed brace/,
    ],
    [
      'a variable that is a map',
      'prompt: "A {animal}"\nvars:\n  animal: {name: fox}\n',
      /batch\.yaml:6:11: vars\.animal: a variable cannot be a map/,
    ],
    [
      'an expansion past 1,000,000 items',
      `prompt: "{a}{b}{c}"\nvars:\n  a: &k [${Array.from({ length: 101 }, (_, i) => i).join(', ')}]\n  b: *k\n  c: *k\n`,
      /batch\.yaml:5:1: vars: the variables expand 1 item to 1030301; at most 1000000 are allowed/,
    ],
  ];
  it.each(cases)(
    '%s: exit 2 with file, line and column, from plan and run, and no request',
    async (_, body, message) => {
      const p = project('bad', manifestYaml('bad', body));
      const requests = sandbox.records().requests.length;
      for (const command of ['plan', 'run']) {
        const result =
          command === 'run'
            ? await runAgainst(sandbox, p)
            : await runCli(['plan', p.manifest], { cwd: p.dir });
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toMatch(message);
        // plan never submits: it says that run would refuse the manifest too.
        expect(result.stderr).toContain(command === 'run' ? 'nothing was submitted' : 'submit nothing');
        expect(result.stderr).not.toMatch(/\n\s+at /);
      }
      expect(sandbox.records().requests).toHaveLength(requests);
    },
  );
});
