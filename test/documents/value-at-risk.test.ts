import { describe, expect, it } from 'vitest';
import { formatTimeLeft, valueAtRisk, valueAtRiskText } from '../../src/documents/value-at-risk.js';

const NOW = Date.parse('2026-11-24T00:00:00.000Z');
const HOUR = 3600 * 1000;

const unsaved = (hoursLeft: number | null, amount: number, refunded = 0, more: object = {}) => ({
  jobStatus: 'succeeded' as const,
  filesSaved: false,
  expiresAt: hoursLeft === null ? null : new Date(NOW + hoursLeft * HOUR).toISOString(),
  amountMicros: amount,
  refundedMicros: refunded,
  ...more,
});

describe('valueAtRisk', () => {
  it('counts paid outputs not saved yet, their net cost and the earliest expiry', () => {
    const risk = valueAtRisk(
      [unsaved(30, 400_000), unsaved(5.2, 300_000, 100_000), unsaved(40, 500_000)],
      NOW,
    );
    expect(risk).toEqual({
      outputs: 3,
      cost_usd: '1.100000',
      earliest_expires_at: '2026-11-24T05:12:00.000Z',
      seconds_left: 5.2 * 3600,
      urgent: true,
    });
  });

  it('leaves out what is saved, not succeeded, without expiry, or already gone', () => {
    const risk = valueAtRisk(
      [
        unsaved(10, 1, 0, { filesSaved: true }),
        unsaved(10, 2, 0, { jobStatus: 'failed' }),
        unsaved(null, 4),
        unsaved(0, 8),
        unsaved(-1, 16),
        unsaved(7, 32),
      ],
      NOW,
    );
    expect(risk).toMatchObject({ outputs: 1, cost_usd: '0.000032', seconds_left: 7 * 3600, urgent: false });
  });

  it('is urgent at six hours left and not a second more', () => {
    expect(valueAtRisk([unsaved(6, 1)], NOW).urgent).toBe(true);
    expect(valueAtRisk([unsaved(6 + 1 / 3600, 1)], NOW).urgent).toBe(false);
  });

  it('is empty when nothing is at risk', () => {
    expect(valueAtRisk([], NOW)).toEqual({
      outputs: 0,
      cost_usd: '0.000000',
      earliest_expires_at: null,
      seconds_left: null,
      urgent: false,
    });
  });
});

describe('valueAtRiskText', () => {
  it('leads with AT RISK and the command under six hours, and is calm otherwise', () => {
    const save = 'mediabatch run batch.yaml';
    expect(valueAtRiskText(valueAtRisk([unsaved(5.2, 1_800_000), unsaved(9, 0)], NOW), save)).toBe(
      'AT RISK: 2 paid outputs are not saved yet ($1.80); the first expires in 5h12m (2026-11-24T05:12:00.000Z). Save them now: mediabatch run batch.yaml',
    );
    expect(valueAtRiskText(valueAtRisk([unsaved(30, 400_000)], NOW), save)).toBe(
      'at risk: 1 paid output is not saved yet ($0.40); the first expires in 30h00m (2026-11-25T06:00:00.000Z); `mediabatch run batch.yaml` saves them',
    );
    expect(valueAtRiskText(valueAtRisk([], NOW), save)).toBeNull();
  });

  it('formats time left in minutes, hours and days', () => {
    expect([59, 60, 3599, 3600, 47 * 3600 + 59 * 60, 48 * 3600, 50 * 3600, -5].map(formatTimeLeft)).toEqual([
      '0m',
      '1m',
      '59m',
      '1h00m',
      '47h59m',
      '2d00h',
      '2d02h',
      '0m',
    ]);
  });
});
