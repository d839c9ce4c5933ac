import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Every whole manifest (a ```yaml block starting `version: 1`) in README.md and docs/*.md. */
function docExamples(): Array<{ where: string; yaml: string }> {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  return files.flatMap((file) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/```yaml\n(version: 1\n[\s\S]*?)```/g)].map(
      (match, index) => ({
        where: `${file}, example ${index + 1}`,
        yaml: match[1]!,
      }),
    ),
  );
}

interface PlanJson {
  warnings: string[];
}

async function planWarnings(dir: string, manifest: string): Promise<string[]> {
  const plan = await runCli(['plan', manifest, '--json'], { cwd: dir, env: {} });
  expect(plan.code, `${manifest}: ${plan.stderr}`).toBe(0);
  expect(plan.stderr).toBe('');
  return (JSON.parse(plan.stdout) as PlanJson).warnings;
}

/**
 * Issue 41, item 6: the docs' own example (`seed: "{variant}"`) warned on every command. Every
 * example manifest in the docs and in manifests/ plans with no warning.
 */
describe('the examples in the docs and manifests/', () => {
  it('each docs example plans with no warning', async () => {
    const examples = docExamples();
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const { where, yaml } of examples) {
      // An example's items_from names a file beside it: one row.
      const dir = tempProject({
        'batch.yaml': yaml,
        'prompts.csv': 'id,prompt\nfrom-csv,A kite over dunes\n',
      });
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      expect(await planWarnings(dir, 'batch.yaml'), where).toEqual([]);
    }
  });

  it('each manifest in manifests/ plans with no warning', async () => {
    const dir = tempProject({});
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(join(ROOT, 'manifests'), join(dir, 'manifests'), { recursive: true });
    const manifests = readdirSync(join(dir, 'manifests')).filter((name) => name.endsWith('.yaml'));
    expect(manifests.length).toBeGreaterThanOrEqual(5);
    for (const name of manifests) expect(await planWarnings(dir, `manifests/${name}`), name).toEqual([]);
  });
});
