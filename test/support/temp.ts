import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Every temporary folder a test file makes goes through `tempDir`, which removes it when the file's
 * tests are over, passed or failed (afterAll runs either way). A worker killed mid-file still
 * removes them on exit. Folders live for the whole file because some files share one across tests.
 */
const made = new Set<string>();

function removeAll(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}

afterAll(removeAll);
process.once('exit', removeAll);

export function tempDir(prefix = 'mediabatch-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes one folder now (a test that wants its space back early); afterAll skips it. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
}
