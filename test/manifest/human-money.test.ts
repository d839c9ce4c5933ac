import { describe, expect, it } from 'vitest';
import { formatUsdHuman, humanUsd } from '../../src/money.js';

describe('money for people', () => {
  it('shows two decimals, more only for sub-cent amounts, and groups thousands', () => {
    expect(formatUsdHuman(1_500_000)).toBe('$1.50');
    expect(formatUsdHuman(0)).toBe('$0.00');
    expect(formatUsdHuman(2_500)).toBe('$0.0025');
    expect(formatUsdHuman(1_234_567_891)).toBe('$1,234.567891');
    expect(formatUsdHuman(1_000_000_000_000)).toBe('$1,000,000.00');
    expect(formatUsdHuman(-400_000)).toBe('-$0.40');
  });

  it('reads the six-decimal strings of JSON documents', () => {
    expect(humanUsd('10.000000')).toBe('$10.00');
    expect(humanUsd('-0.250000')).toBe('-$0.25');
    expect(humanUsd(null)).toBe('-');
    expect(humanUsd('0.002500')).toBe('$0.0025');
  });

  it('shows a string that is not an amount as it came, rather than inventing one', () => {
    expect(humanUsd('unknown')).toBe('unknown');
    expect(humanUsd('-')).toBe('-');
    expect(humanUsd('1.5e3')).toBe('1.5e3');
  });
});
