import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatUsd, MICROS_PER_USD, parseUsd, sumMicros } from '../../src/money.js';

/** Reference formatting in BigInt, independent of the number arithmetic under test. */
function bigFormat(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** Everything parseUsd accepts: nine whole digits and six decimals, all safe integers. */
const MAX_MICROS = 999_999_999_999_999;
const micros = fc.integer({ min: 0, max: MAX_MICROS });
/** Pairs whose sum is still a safe integer, as every real amount in a batch is. */
const pair = fc
  .tuple(micros, micros)
  .map(([a, b]) => [a % 2 ** 48, b % 2 ** 48] as const)
  .filter(([a, b]) => a + b <= MAX_MICROS);

describe('money (src/money.ts)', () => {
  it('refuses amounts whose micro-dollars would not be a safe integer', () => {
    expect(parseUsd('999999999.999999')).toBe(MAX_MICROS);
    expect(parseUsd('1000000000')).toBeNull();
    expect(Number.isSafeInteger(MAX_MICROS)).toBe(true);
  });

  it('round-trips: parse(format(m)) === m for any safe integer micros >= 0', () => {
    fc.assert(
      fc.property(micros, (m) => {
        expect(parseUsd(formatUsd(m))).toBe(m);
      }),
    );
  });

  it('always formats with exactly six decimals, matching a BigInt reference', () => {
    fc.assert(
      fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (m) => {
        const text = formatUsd(m);
        expect(text).toMatch(/^-?\d+\.\d{6}$/);
        expect(text).toBe(bigFormat(BigInt(m)));
      }),
    );
  });

  it('adds and subtracts exactly', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const sa = formatUsd(a);
        const sb = formatUsd(b);
        expect(parseUsd(sa)! + parseUsd(sb)!).toBe(a + b);
        expect(sumMicros([a, b])).toBe(a + b);
        expect(formatUsd(a + b)).toBe(bigFormat(BigInt(a) + BigInt(b)));
        expect(formatUsd(a - b)).toBe(bigFormat(BigInt(a) - BigInt(b)));
      }),
    );
  });

  it('parses decimal strings with up to six places exactly', () => {
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    fc.assert(
      fc.property(digits(1, 9), fc.option(digits(1, 6)), (whole, fraction) => {
        const text = fraction === null ? whole : `${whole}.${fraction}`;
        const expected = BigInt(whole) * 1_000_000n + BigInt((fraction ?? '').padEnd(6, '0'));
        expect(parseUsd(text)).toBe(Number(expected));
      }),
    );
    expect(parseUsd('1.2')).toBe(1_200_000);
    expect(parseUsd('0.000001')).toBe(1);
    expect(parseUsd('30')).toBe(30 * MICROS_PER_USD);
  });

  it('rejects more than six decimal places', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{1,6}$/),
        fc.stringMatching(/^[0-9]{7,12}$/),
        (whole, fraction) => {
          expect(parseUsd(`${whole}.${fraction}`)).toBeNull();
        },
      ),
    );
  });

  it('rejects anything that is not a plain non-negative decimal', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^[0-9]{1,12}(\.[0-9]{1,6})?$/.test(s)),
        (text) => {
          expect(parseUsd(text)).toBeNull();
        },
      ),
    );
    for (const bad of [
      '',
      '-1',
      '+1',
      '1.',
      '.5',
      '1e3',
      ' 1',
      '1 ',
      '1,50',
      '$1',
      'NaN',
      'Infinity',
      '0x10',
    ]) {
      expect(parseUsd(bad)).toBeNull();
    }
  });
});
