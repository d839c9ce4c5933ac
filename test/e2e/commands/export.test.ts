import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../src/ledger/migrations.js';
import { formatUsd } from '../../../src/money.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  asSandboxRun,
  filesBelow,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxMoney,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';

/** A value that CSV must quote: commas, double quotes and a line break. */
const TRICKY = 'a "quoted" word, a comma,\nand a second line';

const YAML = manifestYaml(
  'dataset',
  `prompt: "{subject} at {hour}"
vars:
  hour: [dawn, dusk]
items:
  - {id: lake, vars: {subject: A lake}}
  - {id: note, vars: {subject: ${JSON.stringify(TRICKY)}}, input: {style: noir}}
`,
);

interface Exported {
  id: string;
  state: string;
  prompt: string;
  vars: Record<string, string> | null;
  input: Record<string, unknown>;
  model: string | null;
  job_id: string | null;
  attempts: number;
  net_cost_usd: string;
  files: Array<{ path: string; sha256: string; bytes: number }>;
  completed_at: string | null;
  expires_at: string | null;
  error_code: string | null;
  in_manifest: boolean;
  take: number | null;
  kept: boolean | null;
  earlier_takes: Array<{ take: number; kept: boolean | null; files: unknown[] }>;
  check: { outcome: string; reason: string | null } | null;
}

const JSON_CELLS = ['vars', 'input', 'files', 'earlier_takes', 'check'];
const NUMBER_CELLS = ['attempts', 'take'];
const BOOLEAN_CELLS = ['in_manifest', 'kept'];

/** A CSV row back as the JSONL record it stands for: JSON cells parsed, empty cells null. */
function fromCsv(row: Record<string, string>): Exported {
  return Object.fromEntries(
    Object.entries(row).map(([key, cell]) => [
      key,
      cell === ''
        ? null
        : JSON_CELLS.includes(key)
          ? JSON.parse(cell)
          : NUMBER_CELLS.includes(key)
            ? Number(cell)
            : BOOLEAN_CELLS.includes(key)
              ? cell === 'true'
              : cell,
    ]),
  ) as unknown as Exported;
}

const jsonl = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Exported);

let sandbox: SandboxHandle;
const p = project('dataset', YAML);
beforeAll(async () => {
  sandbox = await startTestSandbox();
  const run = await runAgainst(sandbox, p);
  if (run.code !== 0) throw new Error(`the run failed: ${run.stderr}`);
});
afterAll(async () => {
  await sandbox.close();
});

async function exportOf(...args: string[]): Promise<string> {
  const result = await runCli(['export', p.manifest, ...args], { cwd: p.dir });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

describe('mediabatch export', () => {
  it('writes one JSON line per item, in manifest order, that agrees with the ledger and the files', async () => {
    const records = jsonl(await exportOf());
    expect(records.map((r) => r.id)).toEqual(['lake.dawn', 'lake.dusk', 'note.dawn', 'note.dusk']);
    const attempts = ledgerRows<{
      item_id: string;
      job_id: string;
      amount_micros: number;
      refunded_micros: number;
      completed_at: string;
      expires_at: string;
      vars: string | null;
    }>(
      p,
      'SELECT item_id, job_id, amount_micros, refunded_micros, completed_at, expires_at, vars FROM attempts',
    );
    const files = ledgerRows<{ item_id: string; path: string; sha256: string; bytes: number }>(
      p,
      'SELECT a.item_id, f.path, f.sha256, f.bytes FROM files f JOIN attempts a ON a.id = f.attempt_id',
    );
    for (const record of records) {
      const attempt = attempts.find((row) => row.item_id === record.id)!;
      const file = files.find((row) => row.item_id === record.id)!;
      const job = sandbox.records().jobs.find((j) => j.id === attempt.job_id)!;
      expect(record).toEqual({
        id: record.id,
        state: 'done',
        prompt: job.input.prompt,
        vars: attempt.vars === null ? null : JSON.parse(attempt.vars),
        input: { seconds: 2, definition: '480p', ...(record.id.startsWith('note') ? { style: 'noir' } : {}) },
        model: null,
        job_id: attempt.job_id,
        attempts: 1,
        net_cost_usd: formatUsd(attempt.amount_micros - attempt.refunded_micros),
        files: [{ path: join('out', 'dataset', `${record.id}.mp4`), sha256: file.sha256, bytes: file.bytes }],
        completed_at: attempt.completed_at,
        expires_at: attempt.expires_at,
        error_code: null,
        in_manifest: true,
        // One variant, one take: kept by itself (docs/gallery.md, Keepers).
        take: 1,
        kept: true,
        earlier_takes: [],
        // Each saved take is checked against its request (docs/checks.md).
        check: { outcome: 'passed', reason: null },
      });
      // Stored relative to the manifest's folder; the record gives it relative to the current folder.
      expect(sha256File(join(p.dir, file.path))).toBe(file.sha256);
    }
    expect(records[2]).toMatchObject({
      prompt: `${TRICKY} at dawn`,
      vars: { hour: 'dawn', subject: TRICKY },
    });
  });

  it('writes CSV that reads back, with csv-parse, to the same records; the tricky cell survives', async () => {
    const expected = jsonl(await exportOf());
    const csv = await exportOf('--format', 'csv');
    const rows = parseCsv(csv, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map(fromCsv)).toEqual(expected);
    expect(rows[3]!.prompt).toBe(`${TRICKY} at dusk`);
    expect(JSON.parse(rows[3]!.vars!).subject).toBe(TRICKY);
  });

  it('--state filters, repeatable; an item never sent shows what the manifest would send', async () => {
    writeFileSync(
      p.manifest,
      `${YAML}  - {id: later, prompt: "Not run yet at {hour}", vars: {hour: noon}}\n`,
    );
    const done = jsonl(await exportOf('--state', 'done'));
    expect(done.map((r) => r.id)).toEqual(['lake.dawn', 'lake.dusk', 'note.dawn', 'note.dusk']);
    const pending = jsonl(await exportOf('--state', 'pending'));
    expect(pending).toEqual([
      {
        id: 'later',
        state: 'pending',
        prompt: 'Not run yet at noon',
        vars: { hour: 'noon' },
        input: { seconds: 2, definition: '480p' },
        model: null,
        job_id: null,
        attempts: 0,
        net_cost_usd: '0.000000',
        files: [],
        completed_at: null,
        expires_at: null,
        error_code: null,
        in_manifest: true,
        take: null,
        kept: null,
        earlier_takes: [],
        check: null,
      },
    ]);
    const both = jsonl(await exportOf('--state', 'pending', '--state', 'done'));
    expect(both.map((r) => r.id)).toEqual([...done.map((r) => r.id), 'later']);
    const bad = await runCli(['export', p.manifest, '--state', 'finished'], { cwd: p.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "--state accepts pending, in_flight, done, failed, checks_failed, budget_exceeded, expired, removed, not 'finished'",
    );
  });

  it('--out writes the same text to a file, leaving no temporary file behind', async () => {
    const stdout = await exportOf('--format', 'csv');
    const quiet = await exportOf('--format', 'csv', '--out', 'results.csv');
    expect(quiet).toBe('');
    expect(readFileSync(join(p.dir, 'results.csv'), 'utf8')).toBe(stdout);
    expect(readdirSync(p.dir).filter((name) => name.includes('results.csv'))).toEqual(['results.csv']);
    const missing = await runCli(['export', p.manifest, '--out', 'no/such/folder/x.jsonl'], { cwd: p.dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot write');
  });

  it('reads a ledger written before variables were recorded (read-only: not migrated)', async () => {
    const old = project('older', `${manifestYaml('older')}items:\n  - {id: one, prompt: one}\n`);
    const run = await runAgainst(sandbox, old);
    expect(run.code, run.stderr).toBe(0);
    const db = new Database(old.ledger);
    db.exec('ALTER TABLE attempts DROP COLUMN vars');
    db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    const result = await runCli(['export', old.manifest], { cwd: old.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(jsonl(result.stdout)).toMatchObject([{ id: 'one', state: 'done', prompt: 'one', vars: null }]);
    const db2 = new Database(old.ledger, { readonly: true });
    expect(db2.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION - 1);
    db2.close();
  });

  it('stops quietly, exit 0, when the reader of its output goes away (export | head)', async () => {
    const values = Array.from({ length: 3000 }, (_, i) => i).join(', ');
    const big = project('many', manifestYaml('many', `prompt: "Take {n}"\nvars: {n: [${values}]}\n`));
    const { child, done } = spawnCli(['export', big.manifest], { cwd: big.dir });
    child.stdout!.once('data', () => child.stdout!.destroy());
    const result = await done;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBeLessThan(3000 * 200);
  });

  it('after a list value changed, adds the paid items no longer named: net costs add up, every file is in a record', async () => {
    const head = (hours: string) =>
      manifestYaml(
        'renamed',
        `prompt: "A {subject} at {hour}"\nvars:\n  subject: [kite, boat, fox]\n  hour: [${hours}]\n`,
      );
    const q = project('renamed', head('dawn, dusk'));
    expect((await runAgainst(sandbox, q)).code).toBe(0);
    // dusk -> noon: the three dusk items leave the manifest, paid for and saved; three noon items join.
    writeFileSync(q.manifest, head('dawn, noon'));
    const again = await runAgainst(sandbox, q);
    expect(again.code, again.stderr).toBe(0);
    const exportOfQ = async (...args: string[]) => {
      const result = await runCli(['export', q.manifest, ...args], { cwd: q.dir });
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };
    const records = jsonl(await exportOfQ());
    const named = ['kite.dawn', 'kite.noon', 'boat.dawn', 'boat.noon', 'fox.dawn', 'fox.noon'];
    const removed = ['boat.dusk', 'fox.dusk', 'kite.dusk'];
    expect(records.map((r) => [r.id, r.in_manifest])).toEqual([
      ...named.map((id) => [id, true]),
      ...removed.map((id) => [id, false]),
    ]);
    expect(records.find((r) => r.id === 'fox.dusk')).toMatchObject({
      state: 'done',
      prompt: 'A fox at dusk',
      vars: { subject: 'fox', hour: 'dusk' },
      attempts: 1,
    });
    // The export's net cost is the ledger's spend (status) and the sandbox's charges, to the micro-dollar.
    const micros = (usd: string) => Math.round(Number(usd) * 1e6);
    const exported = records.reduce((sum, r) => sum + micros(r.net_cost_usd), 0);
    const status = await runCli(['status', q.manifest, '--json'], { cwd: q.dir });
    expect(exported).toBe(micros(JSON.parse(status.stdout).totals.spent_usd));
    const charged = sandboxMoney(sandbox, 'renamed');
    expect(exported).toBe(charged.chargedMicros - charged.refundedMicros);
    expect(exported).toBeGreaterThan(0);
    // Every video on disk is in exactly one record, by path and SHA-256.
    const videos = filesBelow(q.outDir).filter((path) => path.endsWith('.mp4'));
    expect(videos).toHaveLength(9);
    const inRecords = records.flatMap((r) => r.files);
    for (const video of videos) {
      const path = join('out', 'renamed', video);
      expect(inRecords.filter((file) => file.path === path)).toEqual([
        { path, sha256: sha256File(join(q.outDir, video)), bytes: expect.any(Number) },
      ]);
    }
    // --state: `removed` selects them alone; a state alone selects the manifest's items only.
    expect(jsonl(await exportOfQ('--state', 'removed')).map((r) => r.id)).toEqual(removed);
    expect(jsonl(await exportOfQ('--state', 'done')).map((r) => r.id)).toEqual(named);
    const csv = parseCsv(await exportOfQ('--format', 'csv'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(csv.map(fromCsv)).toEqual(records);
    expect(csv.at(-1)!.in_manifest).toBe('false');
  });

  it('--sandbox reads the ledger of run --sandbox', async () => {
    const q = asSandboxRun(
      project('offline', `${manifestYaml('offline')}items:\n  - {id: one, prompt: one}\n`),
      'offline',
    );
    const run = await runCli(['run', q.manifest, '--sandbox'], { cwd: q.dir });
    expect(run.code, run.stderr).toBe(0);
    const real = await runCli(['export', q.manifest], { cwd: q.dir });
    expect(jsonl(real.stdout)).toMatchObject([{ id: 'one', state: 'pending' }]);
    const sandboxed = await runCli(['export', q.manifest, '--sandbox'], { cwd: q.dir });
    const [record] = jsonl(sandboxed.stdout);
    const [row] = ledgerRows<{ job_id: string }>(q, 'SELECT job_id FROM attempts');
    expect(record).toMatchObject({ id: 'one', state: 'done', job_id: row!.job_id });
  });
});
