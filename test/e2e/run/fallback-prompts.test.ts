import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  expectRerunSendsNothing,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * Fallbacks past moderation (docs/manifest.md, "Fallback prompts"): a job rejected with
 * content_rejected sends the item's next prompt, and its request is never sent again by any item
 * of the batch unless `redo` asks. The sandbox's [[reject:content_rejected]] marker answers the
 * POST with a job moderation already rejected, refunded, as the spec's table 7.3 describes.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const REJECTED = 'a storm [[reject:content_rejected]]';
const MESSAGE = 'The provider rejected the input or output during moderation.';

/** The jobs the sandbox made for one prompt: each is one POST that created a job. */
const jobsFor = (prompt: string) => sandbox.records().jobs.filter((job) => job.input.prompt === prompt);

describe('mediabatch run: fallback prompts past moderation', () => {
  it('falls back, sends a rejected request once for the whole batch, and a re-run sends nothing', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'fb',
      `${manifestYaml('fb')}items:
  - {id: storm, prompt: "${REJECTED}", fallback_prompts: ["a calm sea"]}
  - {id: twin, prompt: "${REJECTED}", fallback_prompts: ["grey clouds"]}
  - {id: alone, prompt: "${REJECTED}"}
  - {id: plain, prompt: "a beach"}
`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toMatch(
      /storm: moderation rejected its request \(.*\); sending fallback prompt 1 of 1/,
    );
    // The rejected request went out once; the twin went straight to its own fallback, and the
    // item with none left was failed without a POST.
    expect(jobsFor(REJECTED)).toHaveLength(1);
    expect(jobsFor('a calm sea').map((job) => job.status)).toEqual(['succeeded']);
    expect(jobsFor('grey clouds').map((job) => job.status)).toEqual(['succeeded']);
    expect(allPosts(sandbox)).toHaveLength(4);
    const status = await statusJson(p);
    const byId = new Map(status.items.map((item) => [item.id, item]));
    expect(byId.get('storm')).toMatchObject({ state: 'done', attempts: 2 });
    expect(byId.get('twin')).toMatchObject({ state: 'done', attempts: 1 });
    expect(byId.get('alone')).toMatchObject({
      state: 'failed',
      attempts: 0,
      error: { code: 'content_rejected', message: expect.stringContaining(MESSAGE) },
    });
    // The sidecar of the fallback's take says which prompt made it.
    const sidecar = JSON.parse(readFileSync(join(p.outDir, 'storm.json'), 'utf8'));
    expect(sidecar.prompt).toBe('a calm sea');
    // status names the rejected request with the service's message.
    const text = await runCli(['status', p.manifest], { cwd: p.dir });
    expect(text.stdout).toContain(`storm: ${JSON.stringify(REJECTED)}: ${MESSAGE}`);
    await expectRerunSendsNothing(sandbox, p, 1);

    // export --rejected: YAML to edit and paste back, written through the door and again over itself.
    for (let time = 0; time < 2; time += 1) {
      const exported = await runCli(['export', p.manifest, '--rejected', '--out', 'rejected.yaml'], {
        cwd: p.dir,
      });
      expect(exported.code, exported.stderr).toBe(0);
    }
    const written = readFileSync(join(p.dir, 'rejected.yaml'), 'utf8');
    expect(written.split('\n')[0]).toBe(
      '# mediabatch export --rejected: requests the service moderation rejected',
    );
    expect(parse(written)).toEqual({
      rejected: [
        {
          id: 'storm',
          prompt: REJECTED,
          message: MESSAGE,
          job: jobsFor(REJECTED)[0]!.id,
          rejected_at: expect.any(String),
        },
      ],
    });

    // redo asks on purpose: the rejected request goes out again, then the fallback as a new take.
    const redo = await runAgainst(sandbox, p, ['--redo', 'storm']);
    expect(redo.code, redo.stderr).toBe(1);
    expect(jobsFor(REJECTED)).toHaveLength(2);
    expect(jobsFor('a calm sea')).toHaveLength(2);
    expect(jobsFor('grey clouds')).toHaveLength(1);
  }, 120_000);

  it('plan says which prompt an item sends next, and which it sends none of', async () => {
    sandbox = await startTestSandbox();
    const yaml = `${manifestYaml('plans')}items:
  - {id: first, prompt: "${REJECTED}"}
`;
    const p = project('plans', yaml);
    expect((await runAgainst(sandbox, p)).code).toBe(1);
    const posts = allPosts(sandbox).length;
    // A fallback listed since, another item with the same prompt and one, and one without.
    const edited = `${manifestYaml('plans')}items:
  - {id: first, prompt: "${REJECTED}", fallback_prompts: ["fog"]}
  - {id: second, prompt: "${REJECTED}", fallback_prompts: ["rain", "snow"]}
  - {id: third, prompt: "${REJECTED}"}
`;
    writeFileSync(p.manifest, edited);
    const plan = await runCli(['plan', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(
      /first\s+retry\s+.*moderation rejected its last request \(content_rejected\); sends fallback prompt 1 of 1/,
    );
    expect(plan.stdout).toMatch(/second\s+new\s+.*sends fallback prompt 1 of 2/);
    expect(plan.stdout).toMatch(
      /third\s+failed\s+.*content_rejected: moderation rejected the request of every prompt it lists: not sent/,
    );
    // plan sends nothing.
    expect(allPosts(sandbox)).toHaveLength(posts);
  }, 120_000);
});
