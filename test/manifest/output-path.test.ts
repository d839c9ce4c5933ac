import { basename, dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extensionFor, outputPathFor } from '../../src/manifest/index.js';

const outDir = '/work/out/batch';

/** Strictly inside: a direct child of the output folder, never the folder itself or anything above. */
function expectInside(target: string, dir = outDir): void {
  expect(dirname(target)).toBe(dir);
  expect(relative(dir, target)).toBe(basename(target));
  expect(basename(target)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*\.[a-z0-9]{1,10}$/);
}

describe('outputPathFor', () => {
  it('names single and multi-file outputs', () => {
    expect(outputPathFor(outDir, 'beach-sunrise', 0, 1, 'mp4')).toBe(join(outDir, 'beach-sunrise.mp4'));
    expect([0, 1, 2].map((i) => outputPathFor(outDir, 'beach', i, 3, 'mp4'))).toEqual([
      join(outDir, 'beach-1.mp4'),
      join(outDir, 'beach-2.mp4'),
      join(outDir, 'beach-3.mp4'),
    ]);
    expect(outputPathFor('out/rel', 'a.16-9', 1, 2, 'webm')).toBe(join('out/rel', 'a.16-9-2.webm'));
  });

  it('lower-cases and sanitises the extension, falling back to bin', () => {
    expect(outputPathFor(outDir, 'a', 0, 1, 'MP4')).toBe(join(outDir, 'a.mp4'));
    expect(outputPathFor(outDir, 'a', 0, 1, '.png')).toBe(join(outDir, 'a.png'));
    for (const ext of [
      '',
      '../x',
      '..',
      '/etc/passwd',
      'mp4/../../x',
      'a\\b',
      'mp\u00004',
      '%2e%2e',
      'x'.repeat(11),
      'm p4',
    ]) {
      expect(outputPathFor(outDir, 'a', 0, 1, ext)).toBe(join(outDir, 'a.bin'));
    }
  });

  it('refuses hostile ids instead of leaving the folder', () => {
    const hostile = [
      '../x',
      '..',
      '.',
      '',
      'a/b',
      '/abs',
      'a\\b',
      '..\\x',
      '%2e%2e',
      '%2e%2e%2fx',
      'nul\0',
      'x\0/../y',
      'CON',
      'aux.mp4',
      '.hidden',
      'x'.repeat(129),
    ];
    for (const id of hostile) expect(() => outputPathFor(outDir, id, 0, 1, 'mp4')).toThrow(RangeError);
  });

  it('refuses file indexes outside the file count', () => {
    expect(() => outputPathFor(outDir, 'a', 1, 1, 'mp4')).toThrow(RangeError);
    expect(() => outputPathFor(outDir, 'a', -1, 2, 'mp4')).toThrow(RangeError);
    expect(() => outputPathFor(outDir, 'a', 0.5, 2, 'mp4')).toThrow(RangeError);
    expect(() => outputPathFor(outDir, 'a', 0, 0, 'mp4')).toThrow(RangeError);
  });

  it('never returns a path outside the output folder, whatever the id and extension', () => {
    const nasty = fc.constantFrom(
      '..',
      '.',
      '/',
      '\\',
      '\0',
      '%2e',
      '%2f',
      'CON',
      'a',
      'Z',
      '9',
      '-',
      '_',
      ':',
    );
    const hostileText = fc.oneof(
      fc.string(),
      fc.array(nasty, { maxLength: 8 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(hostileText, hostileText, fc.integer({ min: 1, max: 4 }), (id, ext, count) => {
        for (let index = 0; index < count; index++) {
          let target: string;
          try {
            target = outputPathFor(outDir, id, index, count, ext);
          } catch (error) {
            expect(error).toBeInstanceOf(RangeError);
            continue;
          }
          expectInside(target);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('extensionFor', () => {
  it('prefers the content type', () => {
    expect(extensionFor('video/mp4', 'https://x/y.bin')).toBe('mp4');
    expect(extensionFor('video/webm; codecs=vp9', 'https://x/y')).toBe('webm');
    expect(extensionFor('IMAGE/PNG', 'https://x/y')).toBe('png');
    expect(extensionFor('image/jpeg', 'https://x/y')).toBe('jpg');
    expect(extensionFor('video/quicktime', 'https://x/y')).toBe('mov');
  });

  it('falls back to the URL path, ignoring the query and fragment', () => {
    expect(extensionFor(null, 'https://cdn.example/files/clip.MP4?sig=abc.exe#frag.zip')).toBe('mp4');
    expect(extensionFor('application/octet-stream', 'https://cdn.example/a/b.webm?x=1')).toBe('webm');
    expect(extensionFor(null, 'files/out.mov?token=1')).toBe('mov');
    expect(extensionFor(null, 'https://cdn.example/files/clip')).toBe('bin');
    expect(extensionFor(null, 'https://cdn.example/files.d/clip')).toBe('bin');
    expect(extensionFor(null, 'https://cdn.example/.hidden')).toBe('bin');
    expect(extensionFor(null, 'not a url at all')).toBe('bin');
  });

  it('never yields anything but a short lower-case alphanumeric extension', () => {
    for (const url of [
      'https://x/a.%2e%2e',
      'https://x/a.mp4%2F..%2F..',
      'https://x/a.toolongextension',
      'https://x/a.m%00p4',
    ]) {
      expect(extensionFor(null, url)).toBe('bin');
    }
    fc.assert(
      fc.property(fc.option(fc.string()), fc.string(), (type, url) => {
        expect(extensionFor(type, url)).toMatch(/^[a-z0-9]{1,10}$/);
      }),
    );
  });
});
