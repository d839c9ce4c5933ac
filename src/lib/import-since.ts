import { UserError } from '../errors.js';

/** Outputs live 48 hours after they complete, so older jobs have nothing left to save. */
const DEFAULT_SINCE_MS = 48 * 60 * 60 * 1000;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since 6h` / `2d` / `90m`: how far back import looks; 48 hours when absent. */
export function parseSince(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SINCE_MS;
  const match = /^(\d{1,5})([mhd])$/.exec(text.trim());
  const amount = match ? Number(match[1]) * UNITS[match[2]!]! : 0;
  if (amount <= 0) throw new UserError(`--since must be a duration such as 90m, 6h or 2d, got '${text}'`);
  return amount;
}
