import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectRows } from '../../src/collect-rows.js';
import {
  type ExportFormat,
  type ExportRecord,
  type ExportState,
  exportChunks,
  selectedBy,
} from '../../src/documents/export-records.js';
import type { ItemState } from '../../src/ledger/records.js';

const COLUMNS = [
  'id',
  'state',
  'prompt',
  'vars',
  'input',
  'model',
  'job_id',
  'attempts',
  'net_cost_usd',
  'files',
  'completed_at',
  'expires_at',
  'error_code',
  'in_manifest',
  'take',
  'kept',
  'earlier_takes',
  'check',
] as const;

const STATES: ItemState[] = [
  'pending',
  'in_flight',
  'done',
  'failed',
  'budget_exceeded',
  'expired',
  'checks_failed',
];

/** Text that CSV and JSON must escape turns up often: delimiters, quotes, line breaks, surrogates. */
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(',', '"', '\n', '\r', '\\', '\u2028', '\ud83d', '\ude00', '\u0000', ' '),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
  ),
});
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const jsonText = fc.dictionary(fc.string(), fc.jsonValue()).map((value) => JSON.stringify(value));

// A score only where a check of your own gave one (its key absent otherwise, as the ledger's null is).
const checked = fc.record(
  {
    outcome: fc.constantFrom('passed' as const, 'failed' as const, 'unchecked' as const),
    reason: maybe(tricky),
    score: fc.double({ noNaN: true, noDefaultInfinity: true }),
  },
  { requiredKeys: ['outcome', 'reason'] },
);

const record: fc.Arbitrary<ExportRecord> = fc.record({
  id: tricky,
  state: fc.constantFrom(...STATES),
  prompt: tricky,
  vars: maybe(jsonText),
  input: jsonText,
  model: maybe(tricky),
  job_id: maybe(tricky),
  attempts: fc.nat(),
  net_cost_usd: fc.integer({ min: -5_000_000, max: 5_000_000 }).map((n) => (n / 1e6).toFixed(6)),
  files: fc.array(fc.record({ path: tricky, sha256: tricky, bytes: fc.nat() }), { maxLength: 3 }),
  completed_at: maybe(tricky),
  expires_at: maybe(tricky),
  error_code: maybe(tricky),
  in_manifest: fc.boolean(),
  take: maybe(fc.nat()),
  kept: maybe(fc.boolean()),
  earlier_takes: fc.array(
    fc.record({
      take: fc.nat(),
      kept: maybe(fc.boolean()),
      files: fc.array(fc.record({ path: tricky, sha256: tricky, bytes: fc.nat() }), { maxLength: 2 }),
      check: maybe(checked),
    }),
    { maxLength: 2 },
  ),
  check: maybe(checked),
});

const text = async (records: ExportRecord[], format: ExportFormat, perChunk?: number) =>
  (await collectRows(exportChunks(records, format, perChunk))).join('');

/** What the export wrote when csv-stringify (default options) quoted every record. */
function csvStringified(records: ExportRecord[]): string {
  const cells = (r: ExportRecord) =>
    COLUMNS.map((column) => {
      const value = r[column];
      if (column === 'files' || column === 'earlier_takes') return JSON.stringify(value);
      if (column === 'check') return value === null ? '' : JSON.stringify(value);
      if (column === 'in_manifest' || (column === 'kept' && value !== null)) return String(value);
      return value === null ? '' : (value as string | number);
    });
  return stringify([COLUMNS as readonly string[], ...records.map(cells)]);
}

/** What the export wrote when each record was one JSON.stringify of it, its JSON texts parsed. */
function jsonStringified(records: ExportRecord[]): string {
  return records
    .map((r) => {
      const vars = r.vars === null ? null : JSON.parse(r.vars);
      return `${JSON.stringify({ ...r, vars, input: JSON.parse(r.input) })}\n`;
    })
    .join('');
}

describe('exportChunks', () => {
  it('writes CSV that reads back cell for cell, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (records, perChunk) => {
          const rows = parse(await text(records, 'csv', perChunk), {
            relax_column_count: false,
          }) as string[][];
          expect(rows).toEqual(parse(csvStringified(records)));
          expect(rows[0]).toEqual(COLUMNS);
          expect(rows).toHaveLength(records.length + 1);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('writes JSON Lines byte for byte as JSON.stringify does, keys in column order, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (records, perChunk) => {
          const written = await text(records, 'jsonl', perChunk);
          expect(written).toBe(jsonStringified(records));
          for (const line of written.split('\n').filter((each) => each !== '')) {
            expect(Object.keys(JSON.parse(line))).toEqual(COLUMNS);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('writes the CSV header alone when there is no record, and nothing for JSON Lines', async () => {
    expect(await text([], 'csv')).toBe(`${COLUMNS.join(',')}\n`);
    expect(await text([], 'jsonl')).toBe('');
  });

  it('holds a few hundred records per chunk, never the whole export', async () => {
    const one: ExportRecord = {
      id: 'a',
      state: 'done',
      prompt: 'p, "q"\nr',
      vars: null,
      input: '{}',
      model: null,
      job_id: 'job_1',
      attempts: 1,
      net_cost_usd: '0.040000',
      files: [],
      completed_at: null,
      expires_at: null,
      error_code: null,
      in_manifest: true,
      take: 1,
      kept: null,
      earlier_takes: [],
      check: { outcome: 'passed', reason: null },
    };
    const records = Array.from({ length: 1_001 }, () => one);
    expect(await collectRows(exportChunks(records, 'jsonl'))).toHaveLength(5);
    expect(await collectRows(exportChunks(records, 'csv'))).toHaveLength(6);
  });
});

describe('selectedBy (--state)', () => {
  const of = (state: ItemState, in_manifest: boolean) => ({ state, in_manifest }) as ExportRecord;
  const picks = (states: ExportState[], record: ExportRecord) => selectedBy(new Set(states), record);

  it('keeps every record, removed ones too, when no state is given', () => {
    for (const state of STATES) {
      expect(picks([], of(state, true))).toBe(true);
      expect(picks([], of(state, false))).toBe(true);
    }
  });

  it('selects a removed item by `removed` alone, whatever its own state', () => {
    for (const state of STATES) {
      expect(picks([state], of(state, false))).toBe(false);
      expect(picks(['removed'], of(state, false))).toBe(true);
      expect(picks(['removed'], of(state, true))).toBe(false);
      expect(picks([state], of(state, true))).toBe(true);
    }
    expect(picks(['done', 'removed'], of('failed', true))).toBe(false);
    expect(picks(['done', 'removed'], of('failed', false))).toBe(true);
  });
});
