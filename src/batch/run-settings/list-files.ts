import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../../errors.js';

/** An entry read from a list file: its text, and the file (as named) and line it stands on. */
export interface ListEntry {
  entry: string;
  file: string;
  line: number;
}

/**
 * The entries a redo or a keep names, read back from what the gallery's page offers: as they are,
 * or `@FILE`, the redo.txt or keep.txt it saves (entries separated by white space, `#` comments,
 * blank lines), from `cwd`; each from a file with its line, for a refusal to point at.
 */
export function readListEntries(
  values: readonly string[],
  cwd: string,
  option: 'redo' | 'keep',
): Array<string | ListEntry> {
  const entries: Array<string | ListEntry> = [];
  for (const value of values) {
    if (!value.startsWith('@')) {
      entries.push(value);
      continue;
    }
    const file = resolve(cwd, value.slice(1));
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const message = `\`${option}\` ${value}: cannot read ${file}: ${(error as Error).message}`;
      throw new UserError(message, 'invalid_usage', { option, file });
    }
    text.split(/\r?\n/).forEach((line, index) => {
      for (const entry of line.replace(/#.*/, '').split(/\s+/).filter(Boolean))
        entries.push({ entry, file: value.slice(1), line: index + 1 });
    });
  }
  return entries;
}

/** The ids a redo names (`readListEntries`), each once; the run checks them before anything is sent. */
export function readRedoIds(values: readonly string[], cwd: string): string[] {
  const ids = readListEntries(values, cwd, 'redo').map((each) =>
    typeof each === 'string' ? each : each.entry,
  );
  return [...new Set(ids)];
}
