import { createHash } from 'node:crypto';
import {
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, onTestFinished } from 'vitest';
import { runCli } from './cli.js';
import { asSandboxRun, type E2eProject, manifestYaml, project } from './e2e.js';

/**
 * A batch for the door for named files (docs/results.md, "The door for named files"): run with
 * `run --sandbox` by the built CLI, its items read from a CSV, and beside it every kind of file no
 * command may write over: the manifest and its items_from file, the ledger with a write held in
 * its journal (-wal), saved outputs and sidecars, the owner marker, a file of the user's inside
 * the owned output folder, a hard link to the ledger and a symbolic link to the manifest.
 */

const YAML = `${manifestYaml('door', 'max_cost_usd: "0.50"\n')}items_from: items.csv\n`;
const CSV = 'id,prompt\nsea,a calm sea\nfox,a red fox in the snow\n';

/** Each protected file of a doorProject (from its folder), with the words a refusal names it by. */
export const PROTECTED_FILES: ReadonlyArray<readonly [string, string]> = [
  ['batch.yaml', 'the manifest'],
  ['items.csv', "the manifest's items_from file"],
  ['.mediabatch/sandbox/door.sqlite', 'the ledger'],
  ['.mediabatch/sandbox/door.sqlite-wal', "the ledger's journal"],
  ['out/sandbox/door/sea.mp4', 'a saved output'],
  ['out/sandbox/door/sea.json', "a saved output's provenance sidecar"],
  ['out/sandbox/door/.mediabatch-owner.json', "an output folder's owner marker"],
  ['out/sandbox/door/mine.txt', 'a file in out/sandbox/door, the output folder of the batch door'],
  ['ledger-link.sqlite', 'the ledger'],
  ['manifest-link.yaml', 'the manifest'],
];

export async function doorProject(): Promise<E2eProject> {
  const p = asSandboxRun(project('door', YAML, { 'items.csv': CSV, 'notes.txt': 'my own notes\n' }), 'door');
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  const ran = await runCli(['run', p.manifest, '--sandbox'], { cwd: p.dir });
  expect(ran.code, ran.stderr).toBe(0);
  writeFileSync(join(p.outDir, 'mine.txt'), 'a file of mine the ledger did not write\n');
  linkSync(p.ledger, join(p.dir, 'ledger-link.sqlite'));
  symlinkSync('batch.yaml', join(p.dir, 'manifest-link.yaml'));
  holdJournal(p.ledger);
  return p;
}

/**
 * A write held in the ledger's journal, as a run that holds the ledger leaves it: the -wal file
 * holds a frame (the same user_version written again: the ledger's content does not change), and
 * the ledger file stays as it is until this connection closes at the end of the test.
 */
function holdJournal(ledger: string): void {
  const db = new Database(ledger);
  onTestFinished(() => {
    db.close();
  });
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`);
  expect(statSync(`${ledger}-wal`).size).toBeGreaterThan(0);
}

/**
 * Every file and link below `dir` with its SHA-256 (a link: where it points), dot files included:
 * the same before and after a refusal means nothing was written, moved or left behind.
 */
export function treeHashes(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel))) {
      const path = rel === '' ? entry : `${rel}/${entry}`;
      const full = join(dir, path);
      const stat = lstatSync(full);
      // SQLite's shared-memory index of the journal: every reader of the ledger writes its read
      // marks there (the door reads the ledger's saved files to name a refusal); it holds no data.
      if (path.endsWith('-shm')) continue;
      if (stat.isDirectory()) walk(path);
      else if (stat.isSymbolicLink()) found[path] = `-> ${readlinkSync(full)}`;
      else found[path] = createHash('sha256').update(readFileSync(full)).digest('hex');
    }
  };
  walk('');
  return found;
}
