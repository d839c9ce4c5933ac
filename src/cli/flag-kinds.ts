import { UserError } from '../errors.js';
import { brokenLifetimeBound } from '../link-lifetime.js';

/**
 * The kinds of value a flag takes, each parsed in one place: the flag table names a kind, and the
 * parser hands the command a number, checked, with the flag's name in every complaint. Nothing
 * else in mediabatch parses a flag's text.
 */
export type FlagKind = keyof typeof KINDS;

const DURATION_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A whole number of minutes, hours or days, in milliseconds: the units reviews are planned in. */
function duration(text: string, flag: string): number {
  const match = /^(\d{1,5})([mhd])$/.exec(text.trim());
  const amount = match ? Number(match[1]) * DURATION_UNITS[match[2]!]! : 0;
  if (amount <= 0) throw new UserError(`${flag} must be a duration such as 90m, 6h or 2d, got '${text}'`);
  return amount;
}

const KINDS = {
  /** A positive number of seconds (`--poll-interval 2.5`). */
  seconds: (text: string, flag: string): number => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value <= 0)
      throw new UserError(`${flag} must be a positive number of seconds, got '${text}'`);
    return value;
  },
  /** A duration in milliseconds (`--since 6h`). */
  duration,
  /** A presigned link's lifetime in seconds (`--url-lifetime 7d`), within src/link-lifetime.ts's bounds. */
  lifetime: (text: string, flag: string): number => {
    const seconds = duration(text, flag) / 1000;
    const broken = brokenLifetimeBound(seconds);
    if (broken === 'max')
      throw new UserError(
        `${flag} may be at most 7d (168h, 10080m), the longest a presigned S3 URL can live; got '${text}'`,
      );
    if (broken === 'min') throw new UserError(`${flag} must be at least 1m, got '${text}'`);
    return seconds;
  },
  /** A whole number from 1 (`--max-unsaved 500`). */
  count: (text: string, flag: string): number => {
    const value = /^\d{1,9}$/.test(text.trim()) ? Number(text) : 0;
    if (value < 1) throw new UserError(`${flag} must be a whole number from 1, got '${text}'`);
    return value;
  },
  /** A TCP port, 0 for any free one. */
  port: (text: string, flag: string): number => {
    const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
    if (!(port >= 0 && port <= 65535))
      throw new UserError(`${flag} must be an integer from 0 to 65535, got '${text}'`);
    return port;
  },
} as const satisfies Record<string, (text: string, flag: string) => number>;

/** The flag's text as its kind's value; undefined stays undefined (the flag was not given). */
export function parseKind(kind: FlagKind, text: string | undefined, flag: string): number | undefined {
  return text === undefined ? undefined : KINDS[kind](text, flag);
}
