import { describe, expect, it } from 'vitest';
import { formatUsd, parseUsd, parseUsdStrict } from '../../src/money.js';

describe('money at its edges', () => {
  it('parseUsdStrict answers micro-dollars, and refuses what is not an amount by name', () => {
    expect(parseUsdStrict('1.5')).toBe(1_500_000);
    expect(() => parseUsdStrict('1.2345678')).toThrow(new RangeError('not a decimal amount: "1.2345678"'));
  });
  it('formatUsd refuses a fraction of a micro-dollar or an unsafe number', () => {
    expect(() => formatUsd(1.5)).toThrow(new RangeError('not an integer amount: 1.5'));
    expect(() => formatUsd(2 ** 53)).toThrow(RangeError);
    expect(formatUsd(-1)).toBe('-0.000001');
    expect(formatUsd(0)).toBe('0.000000');
  });
  it('parseUsd takes up to nine whole digits and six decimals, nothing else', () => {
    expect(parseUsd('999999999.999999')).toBe(999_999_999_999_999);
    expect(parseUsd('0')).toBe(0);
    for (const bad of ['1000000000', '.5', '1.', '-1', '+1', '1e2', ' 1', '1 ', '0x10'])
      expect(parseUsd(bad), bad).toBeNull();
  });
});
