import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  fastConfig,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

/** A second key of the same workspace: another client, whose jobs carry other metadata. */
const OTHER_KEY = 'mg_other_team_0000000000';
const MAIN_KEY = fastConfig().keys![0]!.key;

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

function startTwoClientSandbox() {
  return startTestSandbox({
    keys: [
      { key: MAIN_KEY, id: 1, workspace: 'ws_test' },
      { key: OTHER_KEY, id: 2, workspace: 'ws_test' },
    ],
  });
}

/** A job submitted past mediabatch, straight to the service, with this key and metadata. */
async function submitOutside(key: string, prompt: string, metadata: Record<string, string>): Promise<string> {
  const response = await fetch(`${sandbox.baseUrl}/videos/generation`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': `outside-${prompt}`,
    },
    body: JSON.stringify({ input: { prompt, seconds: 2, definition: '480p' }, metadata }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

function audit(p: E2eProject, extra: string[] = []) {
  return runCli(['audit', p.manifest, ...extra], { cwd: p.dir, env: cliEnv(sandbox) });
}

interface AuditJson {
  agrees: boolean;
  net_spend: { service_usd: string; ledger_usd: string; difference_usd: string };
  owed_usd: string;
  others: { jobs: number; net_usd: string };
  problems: Array<{ kind: string; item: string; job_id: string; amount_usd: string; status: string }>;
}

const MANIFEST = `${manifestYaml('audited')}items:
  - {id: fine, prompt: "a calm sea"}
  - {id: refunded, prompt: "refused [[fail:content_rejected]]"}
  - {id: stuck, prompt: "left charged [[fail:content_rejected]] [[no-refund]]"}
`;

describe('mediabatch audit', () => {
  it('finds exactly the failed job left charged, with its amount, and leaves refunded failures and other clients alone', async () => {
    sandbox = await startTwoClientSandbox();
    const p = project('audited', MANIFEST);
    const ran = await runAgainst(sandbox, p);
    expect(ran.code).toBe(1);
    // The run says at its end that it saw a failed job without its refund.
    expect(ran.stderr).toContain('1 failed job was not refunded by the service: $0.04 owed');
    // Another client of the workspace: a failed job left charged too, but not this batch's.
    await submitOutside(OTHER_KEY, 'theirs [[fail:content_rejected]] [[no-refund]]', { team: 'other' });
    const stuck = ledgerRows<{ job_id: string }>(
      p,
      "SELECT job_id FROM attempts WHERE item_id = 'stuck'",
    )[0]!;
    const postsBefore = allPosts(sandbox).length;

    const result = await audit(p, ['--json']);
    expect(result.code, result.stderr).toBe(4);
    const doc = JSON.parse(result.stdout) as AuditJson;
    expect(
      doc.problems.map(({ kind, item, job_id, amount_usd }) => ({ kind, item, job_id, amount_usd })),
    ).toEqual([{ kind: 'refund_missing', item: 'stuck', job_id: stuck.job_id, amount_usd: '0.040000' }]);
    expect(doc.owed_usd).toBe('0.040000');
    expect(doc.others).toEqual({ jobs: 1, net_usd: '0.040000' });
    // The ledger recorded the charge as the service shows it: the net spends agree to the micro-dollar.
    expect(doc.net_spend).toEqual({
      service_usd: '0.080000',
      ledger_usd: '0.080000',
      difference_usd: '0.000000',
    });
    // It sends no POST, and records the audit in the ledger.
    expect(allPosts(sandbox).length).toBe(postsBefore);
    expect(ledgerRows(p, "SELECT kind FROM events WHERE kind = 'audit'")).toHaveLength(1);

    const text = await audit(p);
    expect(text.code).toBe(4);
    expect(text.stdout).toContain(`refund missing: stuck ${stuck.job_id}: failed, content_rejected`);
    expect(text.stdout).toMatch(/: \$0\.04\n/);
  });

  it('writes a dispute bundle: problems.csv, the job as the service returned it, the ledger record, no key', async () => {
    sandbox = await startTwoClientSandbox();
    const p = project('audited', MANIFEST);
    await runAgainst(sandbox, p);
    const stuck = ledgerRows<{ job_id: string; idempotency_key: string }>(
      p,
      "SELECT job_id, idempotency_key FROM attempts WHERE item_id = 'stuck'",
    )[0]!;
    const out = join(p.dir, 'dispute');
    const result = await audit(p, ['--out', 'dispute']);
    expect(result.code).toBe(4);
    expect(result.stdout).toContain(`dispute bundle: ${out}`);
    expect(readdirSync(out).sort()).toEqual(['audit.json', 'jobs', 'ledger', 'problems.csv']);
    const csv = readFileSync(join(out, 'problems.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe(
      'kind,item,job_id,idempotency_key,request_id,status,error_code,created_at,completed_at,amount_usd,charged_usd,refunded_usd,max_cost_usd,message',
    );
    expect(csv).toHaveLength(2);
    expect(csv[1]).toMatch(
      new RegExp(
        `^refund_missing,stuck,${stuck.job_id},${stuck.idempotency_key},[^,]+,failed,content_rejected,`,
      ),
    );
    expect(csv[1]).toContain(',0.040000,0.040000,0.000000,');
    const job = JSON.parse(readFileSync(join(out, 'jobs', `${stuck.job_id}.json`), 'utf8'));
    expect(job).toMatchObject({
      id: stuck.job_id,
      status: 'failed',
      cost: { amount_usd: '0.040000', refunded_usd: '0.000000' },
    });
    const recorded = JSON.parse(readFileSync(join(out, 'ledger', `${stuck.job_id}.json`), 'utf8'));
    expect(recorded).toMatchObject({ jobId: stuck.job_id, idempotencyKey: stuck.idempotency_key });
    for (const file of [
      'problems.csv',
      'audit.json',
      `jobs/${stuck.job_id}.json`,
      `ledger/${stuck.job_id}.json`,
    ])
      expect(readFileSync(join(out, file), 'utf8')).not.toContain(MAIN_KEY);
    // A folder that is not empty is refused before anything is read.
    const again = await audit(p, ['--out', 'dispute']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--out');
  });

  it("finds a job with the batch's metadata that the ledger never recorded, and agrees on a clean batch", async () => {
    sandbox = await startTwoClientSandbox();
    const p = project(
      'clean',
      `${manifestYaml('clean')}items:\n  - {id: one, prompt: "one"}\n  - {id: two, prompt: "two"}\n`,
    );
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    await submitOutside(OTHER_KEY, 'not ours', { team: 'other' });
    const clean = await audit(p);
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).toContain('net spend: the service $0.08, the ledger $0.08, they agree');
    expect(clean.stdout).toContain('1 job of other clients');

    const stray = await submitOutside(MAIN_KEY, 'one', {
      'mediabatch.manifest': 'clean',
      'mediabatch.item': 'one',
    });
    const result = await audit(p, ['--json']);
    expect(result.code).toBe(4);
    const doc = JSON.parse(result.stdout) as AuditJson;
    expect(
      doc.problems.map(({ kind, item, job_id, amount_usd }) => ({ kind, item, job_id, amount_usd })),
    ).toEqual([{ kind: 'not_in_ledger', item: 'one', job_id: stray, amount_usd: '0.040000' }]);
    expect(doc.net_spend).toEqual({
      service_usd: '0.120000',
      ledger_usd: '0.080000',
      difference_usd: '0.040000',
    });
  });
});
