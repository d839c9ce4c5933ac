import { parseDuration } from './duration.js';

/** Outputs live 48 hours after they complete, so older jobs have nothing left to save. */
const DEFAULT_SINCE_MS = 48 * 60 * 60 * 1000;

/** `--since 6h` / `2d` / `90m`: how far back import looks; 48 hours when absent. */
export function parseSince(text: string | undefined): number {
  return text === undefined ? DEFAULT_SINCE_MS : parseDuration(text, '--since');
}
