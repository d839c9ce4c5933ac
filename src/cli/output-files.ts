import { type Dirent, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const MAX_FILES = 200_000;

/**
 * Every file under the output folder (absolute paths), for `plan` to name the ones no item owns.
 * Null when the folder is the manifest's own or holds it: then every manifest, CSV and note would
 * read as stray. A missing folder has no files.
 */
export function filesUnder(outputDir: string, manifestFile: string): string[] | null {
  const rel = relative(outputDir, manifestFile);
  if (!rel.startsWith('..')) return null;
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // missing or unreadable: nothing to list
    }
    for (const entry of entries) {
      if (found.length >= MAX_FILES) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(path);
    }
  };
  walk(outputDir);
  return found;
}
