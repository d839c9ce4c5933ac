import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { type LedgerLocation, ledgerFileOf } from '../../ledger/index.js';
import { isS3Uri } from '../../manifest/index.js';

/**
 * A command that refuses leaves no file behind (docs/manifest.md, "Who owns an output folder"): before `run` or `import` creates
 * anything, it notes what is not there yet (a new ledger with its journal, lock and sandbox state,
 * the folders above it, a new output folder), and a refusal before anything was recorded takes
 * exactly those away again. What was there before is never touched.
 */
export interface Trace {
  remove(): void;
}

/** `outputDir` null: the command makes no output folder (copy-ledger writes a ledger only). */
export function newBatchTrace(ledger: LedgerLocation, outputDir: string | null): Trace {
  // A shared database is no file of ours: a refused run there recorded nothing (no attempt).
  const ledgerPath = ledgerFileOf(ledger);
  // Only what is not there now: the sandbox's state of earlier runs, say, is evidence to keep.
  const files = ['', '-wal', '-shm', '-journal', '.lock', '.sandbox.jsonl']
    .flatMap((end) => (ledgerPath === null ? [] : [`${ledgerPath}${end}`]))
    .filter((file) => !existsSync(file));
  const folders = [
    ...(ledgerPath === null ? [] : missingFolders(dirname(ledgerPath))),
    ...(outputDir === null || isS3Uri(outputDir) ? [] : missingFolders(outputDir)),
  ];
  return {
    remove() {
      for (const file of files) rmSync(file, { force: true });
      removeFolders(folders);
    },
  };
}

/** The folders of `dir`'s path that a check is about to create (`plan`'s probe), to remove again. */
export function folderTrace(dir: string): Trace {
  const folders = missingFolders(dir);
  return { remove: () => removeFolders(folders) };
}

/** Deepest first; a folder that holds anything else is kept (rmdir refuses it). */
function removeFolders(folders: readonly string[]): void {
  for (const dir of folders) {
    try {
      rmdirSync(dir);
    } catch {
      // not empty, or already gone
    }
  }
}

/** The folders of `dir`'s path that do not exist yet, deepest first. */
function missingFolders(dir: string): string[] {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.push(at);
  return missing;
}
