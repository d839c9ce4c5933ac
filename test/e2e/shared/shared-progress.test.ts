import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, project, startTestSandbox, waitUntil } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';

/**
 * A runner of a batch several runners share counts the items it knows, while the spend it prints is
 * the batch's: its progress line says whose each number is ("this runner: 3/8 finished", "spent
 * $0.24 of $10.00 by the batch's runners"). A run that holds its batch alone says neither.
 */
const NAME = 'progress';
const ITEMS = Array.from({ length: 6 }, (_, i) => `  - {id: s${i}, prompt: "shot ${i} [[run:1.5]]"}`).join(
  '\n',
);
const YAML = `${manifestYaml(NAME, 'max_cost_usd: "0.05"\nbudget_usd: "1.00"\nconcurrency: 2\n')}items:\n${ITEMS}\n`;
const PROGRESS = /^\[\d\d:\d\d:\d\d\] (.*\d+\/6 finished.*)$/gm;

describe.skipIf(skipPostgresTests)("a shared batch's progress line", () => {
  const postgres = usePostgresServer();

  it("says the counts are this runner's and the spend the batch's runners'", async () => {
    const url = await postgres.server.createDatabase('progress');
    const sandbox = await startTestSandbox();
    try {
      const p = project(NAME, YAML);
      const env = cliEnv(sandbox);
      const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.1'];
      const first = spawnCli(args, { cwd: p.dir, env, timeoutMs: 90_000 });
      await waitUntil(() => allPosts(sandbox).length >= 1, 20_000, 'the first runner to submit');
      const second = await runCli(args, { cwd: p.dir, env, timeoutMs: 90_000 });
      const ended = await first.done;
      expect([ended.code, second.code], `${ended.stderr}\n${second.stderr}`).toEqual([0, 0]);
      for (const output of [ended.stdout, second.stdout]) {
        const lines = [...output.matchAll(PROGRESS)].map((match) => match[1]!);
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) {
          expect(line).toMatch(/^this runner: \d+\/6 finished, /);
          expect(line).toMatch(/, \d+\/2 slots in use by the batch's runners, \d+ by this one, /);
          // The pace and the time left follow once an item has finished (progress-text.ts).
          expect(line).toMatch(
            /spent \$\d+\.\d\d of \$1\.00 by the batch's runners(; [\d.]+ items\/s, ETA \S+)?$/,
          );
        }
      }

      // One run holding its batch alone: no runner to tell apart.
      const alone = project(`${NAME}-alone`, YAML.replace(`name: ${NAME}`, `name: ${NAME}-alone`));
      const single = await runCli(['run', alone.manifest, '--poll-interval', '0.1'], { cwd: alone.dir, env });
      expect(single.code, single.stderr).toBe(0);
      const lines = [...single.stdout.matchAll(PROGRESS)].map((match) => match[1]!);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line).toMatch(/^\d+\/6 finished, /);
        expect(line).not.toContain('runner');
      }
    } finally {
      await sandbox.close();
    }
  });
});
