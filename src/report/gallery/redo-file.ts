import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';

/**
 * The ids a redo names, read back from what the gallery's page offers: ids as they are, or `@FILE`,
 * the redo.txt it saves (ids separated by white space, `#` comments), from `cwd`. Each id once;
 * the run checks them before anything is sent.
 */
export function readRedoIds(values: readonly string[], cwd: string): string[] {
  const ids: string[] = [];
  for (const value of values) {
    if (!value.startsWith('@')) {
      ids.push(value);
      continue;
    }
    const file = resolve(cwd, value.slice(1));
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const message = `\`redo\` ${value}: cannot read ${file}: ${(error as Error).message}`;
      throw new UserError(message, ExitCode.Usage, 'invalid_usage', { option: 'redo', file });
    }
    for (const line of text.split(/\r?\n/)) ids.push(...line.replace(/#.*/, '').split(/\s+/).filter(Boolean));
  }
  return [...new Set(ids)];
}
