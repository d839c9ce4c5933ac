/**
 * Money is integer micro-dollars everywhere inside mediabatch. Decimal strings exist only at the
 * edges (manifest, API bodies, output), so no amount ever passes through a float.
 */
export type Micros = number;

export const MICROS_PER_USD = 1_000_000;

const DECIMAL = /^(\d{1,9})(?:\.(\d{1,6}))?$/;

/**
 * Parses a non-negative decimal string with at most six decimal places; null when it is not one.
 * Nine whole digits at most keep every amount a safe integer of micro-dollars.
 */
export function parseUsd(text: string): Micros | null {
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? '').padEnd(6, '0'));
  return whole * MICROS_PER_USD + fraction;
}

/** Like parseUsd, for values a trusted source promised to be valid (throws otherwise). */
export function parseUsdStrict(text: string): Micros {
  const value = parseUsd(text);
  if (value === null) throw new RangeError(`not a decimal amount: ${JSON.stringify(text)}`);
  return value;
}

/** Formats micro-dollars as a decimal string with exactly six decimal places. */
export function formatUsd(micros: Micros): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not an integer amount: ${micros}`);
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD).padStart(6, '0');
  return `${sign}${whole}.${fraction}`;
}

export function sumMicros(values: Iterable<Micros>): Micros {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

/**
 * Money for people: `$1.50`, `$1,234.00`, `$0.0025`, `-$0.40`. Two decimals, and more only when a
 * sub-cent amount needs them, so nothing is ever rounded away. JSON and the ledger keep formatUsd.
 */
export function formatUsdHuman(micros: Micros): string {
  const [whole, fraction] = formatUsd(Math.abs(micros)).split('.') as [string, string];
  const cents = fraction.replace(/0+$/, '').padEnd(2, '0');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${micros < 0 ? '-' : ''}$${grouped}.${cents}`;
}

/** formatUsdHuman for a decimal string of a JSON document or the service (`"1.500000"`); null is '-'. */
export function humanUsd(decimal: string | null): string {
  if (decimal === null) return '-';
  const negative = decimal.startsWith('-');
  const micros = parseUsd(negative ? decimal.slice(1) : decimal);
  if (micros === null) return decimal;
  return formatUsdHuman(negative ? -micros : micros);
}
