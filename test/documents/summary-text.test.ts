import { describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/documents/status-report.js';
import {
  firstLines,
  groupLines,
  statusSummaryChunks,
  wantsSummary,
} from '../../src/documents/summary-text.js';

/** A status document of `n` items: most done, some failed with two codes, some pending, files missing. */
function statusOf(n: number): StatusReport {
  const items = Array.from({ length: n }, (_, i) => {
    const state = i % 10 === 0 ? 'failed' : i % 7 === 0 ? 'pending' : 'done';
    return {
      id: `clip-${i}`,
      state,
      job_id: null,
      attempts: 1,
      cost_usd: '0.450000',
      files: [],
      error: state === 'failed' ? { code: i % 20 === 0 ? 'content_policy' : 'timeout', message: 'm' } : null,
      ...(i % 3 === 0 && state === 'done'
        ? {
            file_problems: [
              { path: `out/clip-${i}.mp4`, problem: 'missing' as const, detail: 'not on disk' },
            ],
          }
        : {}),
    };
  }) as StatusReport['items'];
  const failed = items.filter((item) => item.state === 'failed').length;
  const pending = items.filter((item) => item.state === 'pending').length;
  const missing = items.filter((item) => item.file_problems).length;
  return {
    manifest: 'big',
    totals: {
      items: n,
      done: n - failed - pending,
      failed,
      pending,
      in_flight: 0,
      budget_exceeded: 0,
      expired: 0,
      checks_failed: 0,
      spent_usd: '1.000000',
      refunded_usd: '0.000000',
      charged_usd: '1.000000',
      reserved_usd: '0.000000',
      budget_usd: null,
      budget_left_usd: null,
      files_missing: missing,
      files_altered: 0,
      files_touched: 0,
    },
    file_check: 'stat',
    value_at_risk: { outputs: 0, value_usd: '0.000000', earliest_expiry: null, urgent: false },
    items,
    warnings: Array.from({ length: 9 }, (_, i) => `warning ${i}`),
  } as unknown as StatusReport;
}

describe('the summary form of status', () => {
  it('prints a 40,000-item batch in under 40 lines: counts, money, each problem with a few examples', () => {
    const report = statusOf(40_000);
    const text = [...statusSummaryChunks(report, { path: 'ledger.db', exists: true, service: null })].join(
      '',
    );
    const lines = text.split('\n');
    expect(lines.length).toBeLessThan(40);
    expect(text).toContain('big: 40000 items: ');
    expect(text).toContain(
      'failed: timeout: 2000, e.g. clip-10 (timeout), clip-30 (timeout), clip-50 (timeout), ...',
    );
    expect(text).toContain('failed: content_policy: 2000, e.g. clip-0 (content_policy)');
    expect(text).toMatch(/ {2}pending: \d+, e\.g\. clip-7, clip-14, clip-21, \.\.\./);
    expect(text).toContain(`saved files not as saved: ${report.totals.files_missing} (`);
    expect(text).toContain(`... and ${report.totals.files_missing - 3} more`);
    expect(text).toContain('warning: warning 2');
    expect(text).not.toContain('warning: warning 3');
    expect(text).toContain('40000 items summarised: --full lists every one');
  });

  it('is the default above 1,000 items; --full and --summary choose', () => {
    expect(wantsSummary(1_000, {})).toBe(false);
    expect(wantsSummary(1_001, {})).toBe(true);
    expect(wantsSummary(1_001, { full: true })).toBe(false);
    expect(wantsSummary(3, { summary: true })).toBe(true);
    expect(wantsSummary(3, { summary: true, full: true })).toBe(false);
  });

  it('groups largest first, names a few of each, and cuts lists with a count of the rest', () => {
    const words = ['a', 'b', 'b', 'c', 'b', 'a', 'b'];
    expect(
      groupLines(
        words,
        (w) => (w === 'c' ? null : `group ${w}`),
        (w) => w.toUpperCase(),
      ),
    ).toEqual(['  group b: 4, e.g. B, B, B, ...', '  group a: 2, e.g. A, A']);
    expect(firstLines(['1', '2'], 3)).toEqual(['1', '2']);
    expect(firstLines(['1', '2', '3', '4'], 2)).toEqual([
      '1',
      '2',
      '  ... and 2 more (--full or --json lists all)',
    ]);
  });
});
