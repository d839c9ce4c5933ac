import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderMainHelp } from '../../src/cli/help.js';

const root = resolve(import.meta.dirname, '../..');
const userDocs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('the project stands alone', () => {
  it.each(userDocs)('%s points at nothing outside the repository', (path) => {
    const text = read(path);
    expect(text).not.toMatch(/runner-spec|interface-spec|\.\.\/shared/);
    // Markdown links go to files of the repository, never up and out of it.
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)/g)) {
      if (/^https?:/.test(target!)) continue;
      expect(existsSync(resolve(root, path, '..', target!)), `${path} links to ${target}`).toBe(true);
    }
  });

  it('every docs/ page that the README, the docs and --help name exists', () => {
    const texts = [...userDocs.map(read), renderMainHelp()];
    const named = new Set(
      texts.flatMap((text) => [...text.matchAll(/\bdocs\/[a-z-]+\.md\b/g)].map((m) => m[0])),
    );
    expect(named.size).toBeGreaterThan(3);
    for (const page of named) expect(existsSync(join(root, page)), page).toBe(true);
  });
});
