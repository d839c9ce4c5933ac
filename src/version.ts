import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * mediabatch's own version, from the package.json of the folder it ships in: the nearest one above
 * this module, whether it runs from src/, dist/ or the command's one bundled file (dist/cli/).
 */
export const MEDIABATCH_VERSION: string = readVersion(dirname(fileURLToPath(import.meta.url)));

function readVersion(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const found = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (found.name === 'mediabatch') return found.version;
    }
    if (dirname(dir) === dir) throw new Error('mediabatch: its package.json was not found');
  }
}
