import { closeSync, type Dirent, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isGalleryPage } from '../../documents/gallery/page.js';
import { OWNER_MARKER } from '../../downloads/output-owner.js';
import { isS3Uri } from '../../manifest/index.js';

const MAX_FILES = 200_000;
/** Enough of a page to hold its head, style sheet included. */
const PAGE_HEAD_BYTES = 16 * 1024;

/**
 * Every file under the output folder (absolute paths), for `plan` to name the ones no item owns.
 * mediabatch's own files are left out: the folder's owner marker and the gallery pages `report
 * --html` wrote (recognised by their first bytes). Null when the folder is the manifest's own or
 * holds it: then every manifest, CSV and note would read as stray. A missing folder has no files.
 */
export function filesUnder(outputDir: string, manifestFile: string): string[] | null {
  // A bucket is not walked: listing every object of a large prefix would slow every plan.
  if (isS3Uri(outputDir)) return null;
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
      else if (!ourOwnFile(path, entry.name, dir === outputDir)) found.push(path);
    }
  };
  walk(outputDir);
  return found;
}

function ourOwnFile(path: string, name: string, atTop: boolean): boolean {
  if (atTop && name === OWNER_MARKER) return true;
  return name.toLowerCase().endsWith('.html') && isGalleryPage(readHead(path));
}

/** The first bytes of a file as text; empty when it cannot be read. */
export function readHead(path: string, bytes = PAGE_HEAD_BYTES): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}
