import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Every file below `dir` (relative path -> SHA-256), leaving out the folders named in `skip`. */
export function fileHashes(dir: string, skip: readonly string[] = []): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (skip.includes(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) found.set(path, sha256Of(join(dir, path)));
    }
  };
  if (existsSync(dir)) walk('');
  return found;
}

export function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * The ledger's content, table by table, as text: equal dumps mean the same rows, whatever the
 * journal (WAL) or the page layout. Null when there is no ledger file; a file that is not a
 * readable ledger gives its error instead, so a ledger overwritten by some other file differs.
 */
export function ledgerDump(path: string): string | null {
  if (!existsSync(path)) return null;
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all() as Array<{ name: string }>;
    const dump: Record<string, string[]> = {};
    for (const { name } of tables) {
      const rows = db.prepare(`SELECT * FROM "${name}"`).all();
      dump[name] = rows.map((row) => JSON.stringify(row)).sort();
    }
    return JSON.stringify(dump);
  } catch (error) {
    return `unreadable ledger: ${(error as Error).message}`;
  } finally {
    db?.close();
  }
}

/** How many files hold each content, among the paths `keep` accepts. */
export function contentCounts(
  hashes: Map<string, string>,
  keep: (path: string) => boolean,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [path, sha] of hashes) if (keep(path)) counts.set(sha, (counts.get(sha) ?? 0) + 1);
  return counts;
}

/** The differences between two snapshots, as "path: what happened" lines, `allowed` paths left out. */
export function changedFiles(
  before: Map<string, string>,
  after: Map<string, string>,
  allowed: (path: string) => boolean,
): string[] {
  const changes: string[] = [];
  for (const [path, sha] of before) {
    if (allowed(path)) continue;
    const now = after.get(path);
    if (now === undefined) changes.push(`${path}: removed`);
    else if (now !== sha) changes.push(`${path}: bytes changed`);
  }
  for (const path of after.keys()) if (!before.has(path) && !allowed(path)) changes.push(`${path}: created`);
  return changes;
}
