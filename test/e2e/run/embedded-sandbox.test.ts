import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobVideo } from '../../../src/sandbox/mp4.js';
import { runCli } from '../../support/cli.js';
import { asSandboxRun, attemptRows, manifestYaml, project, statusJson } from '../../support/e2e.js';

describe('mediabatch run --sandbox', () => {
  it('runs a manifest end to end against the embedded sandbox, with no key or URL, and a re-run sends nothing', async () => {
    const ids = ['one', 'two', 'three'];
    const p = asSandboxRun(
      project(
        'offline',
        `${manifestYaml('offline')}items:\n${ids.map((id) => `  - {id: ${id}, prompt: "offline ${id}"}\n`).join('')}`,
      ),
      'offline',
    );
    // No MEDIAGEN_API_KEY and no MEDIAGEN_BASE_URL: --sandbox needs neither. No --poll-interval: the
    // embedded sandbox's Retry-After sets the pace.
    const first = await runCli(['run', p.manifest, '--sandbox'], { cwd: p.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^Running against the embedded sandbox at http:\/\/127\.0\.0\.1:\d+\/v1: placeholder videos, no real spend\.$/m,
    );

    const status = await statusJson(p);
    expect(status.items.map((item) => [item.id, item.state])).toEqual(ids.map((id) => [id, 'done']));
    // Two seconds of 480p at the embedded sandbox's 0.02 USD a second, once per item.
    expect(status.totals.spent_usd).toBe('0.120000');
    const rows = attemptRows(p);
    expect(rows.map((row) => [row.item_id, row.job_status, row.amount_micros])).toEqual(
      ids.map((id) => [id, 'succeeded', 40_000]),
    );
    for (const row of rows) {
      // Byte for byte what the sandbox makes for that job id: 2 s, landscape (the first orientation).
      const expected = jobVideo(row.job_id!, { orientation: '16:9', seconds: 2, definition: '480p' });
      expect(readFileSync(join(p.outDir, `${row.item_id}.mp4`)).equals(expected)).toBe(true);
    }

    const again = await runCli(['run', p.manifest, '--sandbox', '--json'], { cwd: p.dir });
    expect(again.code, again.stderr).toBe(0);
    expect(attemptRows(p)).toHaveLength(ids.length);
    expect(JSON.parse(again.stdout).totals).toMatchObject({ done: 3, spent_usd: '0.120000' });
  }, 60_000);
});
