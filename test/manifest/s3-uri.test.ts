import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isS3Uri,
  keyOfUri,
  keyUnder,
  outputChild,
  parseS3Uri,
  s3Beside,
  s3Uri,
  s3UriProblem,
} from '../../src/manifest/s3-uri.js';

describe('s3:// output locations', () => {
  it('reads a bucket and a prefix, the trailing slash dropped', () => {
    expect(parseS3Uri('s3://studio-renders/spring/2026')).toEqual({
      bucket: 'studio-renders',
      prefix: 'spring/2026',
    });
    expect(parseS3Uri('s3://studio-renders/spring/')).toEqual({ bucket: 'studio-renders', prefix: 'spring' });
    expect(parseS3Uri('s3://abc')).toEqual({ bucket: 'abc', prefix: '' });
    expect(parseS3Uri('s3://abc/')).toEqual({ bucket: 'abc', prefix: '' });
    expect(s3UriProblem('s3://my.bucket-1/x')).toBeNull();
  });

  it.each([
    ['S3://abc/x', 'must start with s3:// (lower case)'],
    ['s3://ab/x', 'invalid bucket name "ab"'],
    ['s3://Upper/x', 'invalid bucket name "Upper"'],
    ['s3://-abc/x', 'invalid bucket name "-abc"'],
    ['s3://abc-/x', 'invalid bucket name "abc-"'],
    ['s3://a..b/x', 'invalid bucket name "a..b"'],
    [`s3://${'a'.repeat(64)}/x`, 'invalid bucket name'],
    ['s3://abc//x', 'has an empty segment (two slashes in a row) in its prefix'],
    ['s3://abc/x/../y', 'may not hold a ".." segment'],
    ['s3://abc/./y', 'may not hold a "." segment'],
    ['s3://abc/x\\y', 'holds a control character or a backslash'],
    ['s3://abc/x\ty', 'holds a control character or a backslash'],
  ])('refuses %j: %s', (uri, problem) => {
    expect(s3UriProblem(uri)).toContain(problem);
  });

  it('accepts the longest and shortest bucket names S3 allows', () => {
    expect(s3UriProblem(`s3://${'a'.repeat(63)}`)).toBeNull();
    expect(s3UriProblem('s3://a1b')).toBeNull();
  });

  it('tells an s3:// location from a folder, in any case', () => {
    expect(isS3Uri('s3://x')).toBe(true);
    expect(isS3Uri('S3://x')).toBe(true);
    expect(isS3Uri('out/s3://x')).toBe(false);
    expect(isS3Uri('./s3')).toBe(false);
  });

  it('writes a location back as one canonical URI', () => {
    expect(s3Uri({ bucket: 'b12', prefix: 'p/q' })).toBe('s3://b12/p/q');
    expect(s3Uri({ bucket: 'b12', prefix: '' })).toBe('s3://b12');
    expect(s3Uri({ bucket: 'b12', prefix: 'p' }, 'p/a.mp4')).toBe('s3://b12/p/a.mp4');
  });

  it('builds keys below the prefix and refuses any name that would leave it', () => {
    const at = { bucket: 'b12', prefix: 'runs/x' };
    expect(keyUnder(at, 'a.mp4')).toBe('runs/x/a.mp4');
    expect(keyUnder(at, '9x16/a.mp4')).toBe('runs/x/9x16/a.mp4');
    expect(keyUnder({ bucket: 'b12', prefix: '' }, 'a.mp4')).toBe('a.mp4');
    for (const bad of ['../a.mp4', 'x/../../a', './a', 'a//b', '', 'a/', '/a', 'a\\b', 'a\u0000b'])
      expect(() => keyUnder(at, bad), bad).toThrow('refusing to build an object key outside the prefix');
  });

  it('finds the key of a URI only inside the location', () => {
    const at = { bucket: 'b12', prefix: 'runs/x' };
    expect(keyOfUri(at, 's3://b12/runs/x/a.mp4')).toBe('runs/x/a.mp4');
    expect(keyOfUri(at, 's3://b12/runs/xy/a.mp4')).toBeNull();
    expect(keyOfUri(at, 's3://other/runs/x/a.mp4')).toBeNull();
    expect(keyOfUri(at, '/runs/x/a.mp4')).toBeNull();
    expect(keyOfUri({ bucket: 'b12', prefix: '' }, 's3://b12/any/key')).toBe('any/key');
    expect(keyOfUri({ bucket: 'b12', prefix: '' }, 's3://b123/any/key')).toBeNull();
  });

  it('puts sandbox runs beside the real ones: s3://b/p -> s3://b/sandbox/p', () => {
    expect(s3Uri(s3Beside({ bucket: 'b12', prefix: 'runs/demo' }, 'sandbox'))).toBe(
      's3://b12/runs/sandbox/demo',
    );
    expect(s3Uri(s3Beside({ bucket: 'b12', prefix: 'demo' }, 'sandbox'))).toBe('s3://b12/sandbox/demo');
    expect(s3Uri(s3Beside({ bucket: 'b12', prefix: '' }, 'sandbox'))).toBe('s3://b12/sandbox');
  });

  it('names a child of a folder or of a location', () => {
    expect(outputChild('s3://b12/p', 'x/a')).toBe('s3://b12/p/x/a');
    expect(outputChild('/out/p', 'x/a')).toBe('/out/p/x/a');
  });

  it('never builds a key outside the prefix, whatever the name (property)', () => {
    const segment = fc.stringMatching(/^[a-z0-9._-]{1,12}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        const at = { bucket: 'b12', prefix: 'runs/x' };
        const name = segments.join('/');
        let key: string;
        try {
          key = keyUnder(at, name);
        } catch {
          return segments.some((part) => part === '.' || part === '..');
        }
        return key.startsWith('runs/x/') && !key.split('/').some((part) => part === '..' || part === '.');
      }),
    );
  });
});
