import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../index.js';

/**
 * `run --redo a b` or `--redo @redo.txt` (the file the gallery offers: ids separated by white
 * space, `#` comments). The library checks the ids before anything is sent.
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
      throw new UserError(`--redo ${value}: cannot read ${file}: ${(error as Error).message}`);
    }
    for (const line of text.split(/\r?\n/)) ids.push(...line.replace(/#.*/, '').split(/\s+/).filter(Boolean));
  }
  return [...new Set(ids)];
}
