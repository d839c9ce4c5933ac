import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { fingerprint, finished, LedgerBuilder, ledgerPath, noLedgerIn, project } from './fixtures.js';

const MANIFEST = `version: 1
name: spring
input: {seconds: 6, definition: 720p}
budget_usd: "5.00"
items:
  - {id: beach-sunrise, prompt: A beach at sunrise}
  - {id: city-night, prompt: A city at night}
  - {id: late-save, prompt: Finished but not saved}
  - {id: not-yet, prompt: Never submitted}
`;

/** done, failed (refunded), succeeded-but-unsaved expiring in 3 h, and pending. */
async function situation() {
  const { dir, manifest } = project(MANIFEST);
  const builder = await LedgerBuilder.open(dir, manifest);
  await builder.done('beach-sunrise', '0.40');
  await builder.failed('city-night', '0.40', 'content_rejected', 'the provider rejected the prompt');
  await builder.put('late-save', 'pending');
  await builder.job(await builder.prepare('late-save'), '0.30', 'succeeded', finished(3));
  await builder.close();
  return { dir, manifest, ledger: ledgerPath(dir, manifest) };
}

describe('mediabatch status', () => {
  it('--json prints the status document from the ledger alone', async () => {
    const { dir } = await situation();
    const result = await runCli(['status', 'batch.yaml', '--json'], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.manifest).toBe('spring');
    expect(report.totals).toMatchObject({
      items: 4,
      done: 1,
      failed: 1,
      pending: 1,
      in_flight: 1,
      spent_usd: '0.700000',
      refunded_usd: '0.400000',
      budget_usd: '5.000000',
      budget_left_usd: '4.300000',
    });
    expect(report.items[0]).toEqual({
      id: 'beach-sunrise',
      state: 'done',
      job_id: 'job_beach-sunrise_1',
      attempts: 1,
      cost_usd: '0.400000',
      files: ['out/spring/beach-sunrise.mp4'],
      error: null,
    });
    expect(report.items[1]).toEqual({
      id: 'city-night',
      state: 'failed',
      job_id: 'job_city-night_1',
      attempts: 1,
      cost_usd: '0.000000',
      files: [],
      error: { code: 'content_rejected', message: 'the provider rejected the prompt' },
      // A final failure: only run --retry-failed sends it again.
      paid_only_by: 'retryFailed',
    });
    expect(report.items[2]).toMatchObject({
      id: 'late-save',
      state: 'in_flight',
      job_id: 'job_late-save_1',
      files: [],
    });
    expect(report.items[3]).toEqual({
      id: 'not-yet',
      state: 'pending',
      job_id: null,
      attempts: 0,
      cost_usd: '0.000000',
      files: [],
      error: null,
    });
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatch(/^late-save: finished output not saved yet expires in 1[78]\d min/);
  });

  it('prints a table, the totals and the expiry warning for people', async () => {
    const { dir, ledger } = await situation();
    const result = await runCli(['status', 'batch.yaml'], { cwd: dir });
    expect(result.code).toBe(0);
    const [risk, blank, ...lines] = result.stdout.split('\n');
    // Under six hours left, the paid output not saved yet comes first, with the command that saves it.
    expect(risk).toMatch(
      /^AT RISK: 1 paid output is not saved yet \(\$0\.30\); the first expires in 2h5\dm \(.+Z\)\. Save them now: mediabatch run batch\.yaml$/,
    );
    expect(blank).toBe('');
    expect(lines[0]).toMatch(/^ID\s+STATE\s+ATTEMPTS\s+COST\s+JOB\s+FILES \/ ERROR$/);
    expect(lines[1]).toMatch(
      /^beach-sunrise\s+done\s+1\s+\$0\.40\s+job_beach-sunrise_1\s+out\/spring\/beach-sunrise\.mp4$/,
    );
    expect(lines[2]).toMatch(
      /^city-night\s+failed\s+1\s+\$0\.00\s+job_city-night_1\s+content_rejected: the provider/,
    );
    expect(lines[3]).toMatch(/^late-save\s+in flight\s+1\s+\$0\.30\s+job_late-save_1$/);
    expect(lines[4]).toMatch(/^not-yet\s+pending\s+0\s+\$0\.00\s+-$/);
    expect(result.stdout).toContain(
      'spring: 4 items: 1 done, 1 failed, 0 budget exceeded, 0 expired, 1 in flight, 1 pending',
    );
    expect(result.stdout).toContain('spent $0.70 net (charged $1.10, refunded $0.40)');
    expect(result.stdout).toContain('budget left $4.30 of $5.00');
    expect(result.stdout).toMatch(/warning: late-save: finished output not saved yet expires in/);
    expect(result.stdout).toContain(`ledger: ${ledger}`);
  });

  it('never modifies an existing ledger', async () => {
    const { dir, ledger } = await situation();
    const before = fingerprint(ledger);
    await new Promise((resolve) => setTimeout(resolve, 20)); // an mtime change would be visible
    expect((await runCli(['status', 'batch.yaml'], { cwd: dir })).code).toBe(0);
    expect((await runCli(['status', 'batch.yaml', '--json'], { cwd: dir })).code).toBe(0);
    expect(fingerprint(ledger)).toEqual(before);
  });

  it('reads a missing ledger as empty and creates none', async () => {
    const dir = tempProject({ 'batch.yaml': MANIFEST });
    const result = await runCli(['status', 'batch.yaml', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.totals).toMatchObject({ items: 4, done: 0, failed: 0, pending: 4, spent_usd: '0.000000' });
    expect(report.items.map((item: { state: string }) => item.state)).toEqual([
      'pending',
      'pending',
      'pending',
      'pending',
    ]);
    const text = await runCli(['status', 'batch.yaml'], { cwd: dir });
    expect(text.stdout).toContain('(not created yet: nothing has run)');
    expect(noLedgerIn(dir)).toBe(true);
  });

  it('honours --ledger', async () => {
    const { dir } = await situation();
    const result = await runCli(['status', 'batch.yaml', '--ledger', 'elsewhere.sqlite', '--json'], {
      cwd: dir,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).totals.pending).toBe(4);
  });

  it('cleans control characters out of service messages', async () => {
    const { dir, manifest } = project(MANIFEST);
    const builder = await LedgerBuilder.open(dir, manifest);
    await builder.failed(
      'city-night',
      '0.40',
      'content_rejected',
      'bad\u001b[2J\rprompt https://cdn.example/f.mp4?sig=SECRET',
    );
    await builder.close();
    const result = await runCli(['status', 'batch.yaml'], { cwd: dir });
    expect(result.stdout).not.toContain('\u001b');
    expect(result.stdout).not.toContain('SECRET');
    expect(result.stdout).toContain('https://cdn.example/f.mp4?…');
  });

  it('a bad manifest exits 2 naming file:line:column', async () => {
    const dir = tempProject({
      'batch.yaml': 'version: 1\nname: spring\nitems:\n  - prompt: x\n    input: {seconds: -2}\n',
    });
    const result = await runCli(['status', 'batch.yaml'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/batch\.yaml:5:\d+: items\[0\]\.input\.seconds/);
    expect(noLedgerIn(dir)).toBe(true);
  });

  it('usage errors exit 2', async () => {
    const dir = tempProject({ 'batch.yaml': MANIFEST });
    expect((await runCli(['status'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['status', 'batch.yaml', '--nope'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['status', 'batch.yaml', 'other.yaml'], { cwd: dir })).code).toBe(2);
  });

  it('a ledger that cannot be opened is a clear error (exit 2, as for run), not a stack trace', async () => {
    const dir = tempProject({ 'batch.yaml': MANIFEST });
    writeFileSync(join(dir, 'junk.sqlite'), 'this is not a database at all, not even close to one......');
    const result = await runCli(['status', 'batch.yaml', '--ledger', 'junk.sqlite'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cannot read the ledger .*junk\.sqlite/);
  });
});
