import { UserError } from '../../errors.js';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration flag (`--since 6h`, `--url-lifetime 7d`) in milliseconds: a whole number of minutes,
 * hours or days, the units a person plans reviews and look-backs in. One parser, so every flag
 * that takes a duration reads the same words.
 */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d{1,5})([mhd])$/.exec(text.trim());
  const amount = match ? Number(match[1]) * UNITS[match[2]!]! : 0;
  if (amount <= 0) throw new UserError(`${flag} must be a duration such as 90m, 6h or 2d, got '${text}'`);
  return amount;
}
