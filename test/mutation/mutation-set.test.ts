import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The mutation set cannot rot silently: every source file under the mutated folders is either
 * mutated or listed as not mutated with its reason (stryker.config.mjs), and no entry names a file
 * that is gone.
 */
const root = join(import.meta.dirname, '..', '..');
const config = (await import(pathToFileURL(join(root, 'stryker.config.mjs')).href)) as {
  default: { mutate: string[]; thresholds: { break: number } };
  mutated: string[];
  mutatedFolders: string[];
  notMutated: Record<string, string>;
};

function sourceFiles(path: string): string[] {
  if (!statSync(join(root, path)).isDirectory()) return [path];
  return readdirSync(join(root, path), { recursive: true, encoding: 'utf8' })
    .map((name) => `${path}${name.replaceAll('\\', '/')}`)
    .filter((name) => name.endsWith('.ts'));
}

describe('the mutation set', () => {
  const files = config.mutatedFolders.flatMap(sourceFiles).sort();

  it('names every file under the mutated folders, as mutated or as not mutated with a reason', () => {
    const listed = new Set([...config.mutated, ...Object.keys(config.notMutated)]);
    const missing = files.filter((file) => !listed.has(file));
    expect(missing, 'add these to `mutated` or `notMutated` in stryker.config.mjs').toEqual([]);
  });

  it('names each file once, only files that exist, and gives every exception a reason', () => {
    const both = config.mutated.filter((file) => file in config.notMutated);
    expect(both).toEqual([]);
    expect(new Set(config.mutated).size).toBe(config.mutated.length);
    const gone = [...config.mutated, ...Object.keys(config.notMutated)].filter(
      (file) => !existsSync(join(root, file)),
    );
    expect(gone, 'remove these from stryker.config.mjs').toEqual([]);
    const unexplained = Object.entries(config.notMutated).filter(([, why]) => why.trim().length < 20);
    expect(unexplained).toEqual([]);
  });

  it('is what Stryker mutates, and the run fails below 90%', () => {
    expect(config.default.mutate).toEqual(config.mutated);
    expect(config.default.thresholds.break).toBeGreaterThanOrEqual(90);
  });
});
