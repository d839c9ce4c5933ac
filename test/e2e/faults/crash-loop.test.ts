import { describe, expect, it } from 'vitest';
import { spawnCli } from '../../support/cli.js';
import { cliEnv, jobsOfItem, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { crashLoop, KILL_MODES } from './crash-loop.js';
import { startKillProxy } from './kill-proxy.js';

const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const soak = process.env.SOAK === '1';

describe('mediabatch run under SIGKILL at random moments', () => {
  it('never pays twice, never passes the budget and never loses a result (20+ kills)', async () => {
    const figures = await crashLoop({ seed, items: 24, kills: 20 });
    console.log(`crash loop: ${JSON.stringify(figures)}`);
    expect(figures.kills).toBeGreaterThanOrEqual(20);
    // Kills landed on submissions (held and answered POSTs, fresh attempt rows) and downloads.
    const modes = KILL_MODES.filter((mode) => figures.killsByMode[mode] > 0);
    expect(modes.length).toBeGreaterThanOrEqual(4);
    expect(figures.killsByMode.held + figures.killsByMode.answered).toBeGreaterThan(0);
  }, 90_000);

  it('a 401 to a resend does not settle a send that went unanswered: the re-run replays it, no second job', async () => {
    const sandbox = await startTestSandbox({ running_seconds: { min: 0.5, max: 0.5 } });
    const proxy = await startKillProxy(sandbox.baseUrl);
    try {
      const key = { key: sandbox.apiKey, id: 1, workspace: 'ws_test' };
      const p = project('refused', `${manifestYaml('refused')}items:\n  - {id: only, prompt: one}\n`);
      // The first POST stores (and charges) the job, its answer is lost, and the key is revoked
      // before the runner resends it.
      proxy.arm({
        point: 'answered',
        nth: 1,
        fire: () => sandbox.update({ keys: [{ ...key, revoked: true }] }),
      });
      const env = { ...cliEnv(sandbox), MEDIAGEN_BASE_URL: proxy.baseUrl };
      const args = ['run', p.manifest, '--poll-interval', '0.05', '--json'];
      const refused = await spawnCli(args, { cwd: p.dir, env }).done;
      expect(refused.code).toBe(3);
      expect(jobsOfItem(sandbox, 'refused', 'only')).toHaveLength(1);

      sandbox.update({ keys: [key] });
      const rerun = await spawnCli(args, { cwd: p.dir, env }).done;
      expect(rerun.code).toBe(0);
      const jobs = jobsOfItem(sandbox, 'refused', 'only');
      expect(jobs.map((job) => job.status)).toEqual(['succeeded']);
    } finally {
      await proxy.close();
      await sandbox.close();
    }
  });

  // Long: runs only with SOAK=1, and npm test lists it as skipped so nobody forgets it exists.
  it.skipIf(!soak)(
    'soak: hundreds of kills over a larger manifest',
    async () => {
      const figures = await crashLoop({
        seed,
        items: Number(process.env.SOAK_ITEMS ?? 60),
        kills: Number(process.env.SOAK_KILLS ?? 300),
        log: (line) => console.log(`[soak] ${line}`),
      });
      console.log(`[soak] figures ${JSON.stringify(figures)}`);
      expect(figures.kills).toBeGreaterThanOrEqual(Number(process.env.SOAK_KILLS ?? 300));
    },
    3_600_000,
  );
});
