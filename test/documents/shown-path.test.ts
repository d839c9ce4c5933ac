import { isAbsolute, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shownFrom } from '../../src/documents/shown-path.js';

/** What status and plan showed before the direct path: path.relative, absolute when outside. */
function byRelative(manifestFile: string, path: string): string {
  const rel = relative(manifestFile.replace(/[/\\][^/\\]*$/, ''), path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

const segment = fc.constantFrom('out', 'a', '.', '..', '', '..x', 'x..', '.hidden', 'b c', 'v.mp4', 'é');
const pathOf = (segments: string[]) => `/${segments.join('/')}`;

describe('shownFrom', () => {
  it('shows every path as path.relative would', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 0, maxLength: 4 }),
        fc.array(segment, { minLength: 0, maxLength: 5 }),
        fc.boolean(),
        (base, rest, inside) => {
          const manifestFile = `${pathOf(base.filter((s) => s !== '' && s !== '.' && s !== '..'))}/batch.yaml`;
          const folder = manifestFile.replace(/\/batch\.yaml$/, '');
          const path = inside ? `${folder}/${rest.join('/')}` : pathOf(rest);
          expect(shownFrom(manifestFile)(path)).toBe(byRelative(manifestFile, path));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('shows a saved file inside the folder relative to it, and one outside absolute', () => {
    const shown = shownFrom('/work/batch.yaml');
    expect(shown('/work/out/batch/a.mp4')).toBe('out/batch/a.mp4');
    expect(shown('/elsewhere/a.mp4')).toBe('/elsewhere/a.mp4');
    expect(shown('/work/../work/out/a.mp4')).toBe('out/a.mp4');
    expect(shown('/work/..hidden/a.mp4')).toBe('/work/..hidden/a.mp4');
  });

  it('shows an object in a bucket as its s3:// URI, whatever the working folder', () => {
    for (const manifestFile of ['/work/batch.yaml', `${process.cwd()}/batch.yaml`, 'batch.yaml']) {
      const shown = shownFrom(manifestFile);
      expect(shown('s3://media-bucket/demo/beach.mp4')).toBe('s3://media-bucket/demo/beach.mp4');
      expect(shown('s3://media-bucket/demo/sub/a b.take1.json')).toBe(
        's3://media-bucket/demo/sub/a b.take1.json',
      );
    }
  });
});
