import { describe, expect, it } from 'vitest';
import { bucketPageKey, guardedObject } from '../../../src/batch/gallery/gallery-s3.js';
import { UserError } from '../../../src/errors.js';
import { ExitCode, exitCodeOfError } from '../../../src/exit-codes.js';

/** The pure rules of a gallery page written into a bucket; the e2e test writes one for real. */

const location = { bucket: 'media-bucket', prefix: 'sandbox/demo' };

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect(exitCodeOfError((error as UserError).code)).toBe(ExitCode.Usage);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('the key of a page in the bucket', () => {
  it('is index.html at the location when --html has no value', () => {
    expect(bucketPageKey(location, '')).toBe('sandbox/demo/index.html');
    expect(bucketPageKey({ bucket: 'media-bucket', prefix: '' }, '')).toBe('index.html');
  });

  it('may be any .html key below the location', () => {
    expect(bucketPageKey(location, 's3://media-bucket/sandbox/demo/index.html')).toBe(
      'sandbox/demo/index.html',
    );
    expect(bucketPageKey(location, 's3://media-bucket/sandbox/demo/review/Monday.HTML')).toBe(
      'sandbox/demo/review/Monday.HTML',
    );
    expect(bucketPageKey({ bucket: 'media-bucket', prefix: '' }, 's3://media-bucket/a/b.html')).toBe(
      'a/b.html',
    );
  });

  it('refuses another bucket, a key outside the prefix, and the prefix itself', () => {
    for (const uri of [
      's3://other-bucket/sandbox/demo/index.html',
      's3://media-bucket/demo/index.html',
      's3://media-bucket/sandbox/demox/index.html',
      's3://media-bucket/sandbox/demo',
      's3://media-bucket/index.html',
    ])
      expect(refused(() => bucketPageKey(location, uri))).toBe(
        `\`to\` ${uri} is outside the output location s3://media-bucket/sandbox/demo: the page goes below it, as in s3://media-bucket/sandbox/demo/index.html`,
      );
  });

  it('refuses a key that is not a page, one in the staging folder, and a malformed URI', () => {
    expect(refused(() => bucketPageKey(location, 's3://media-bucket/sandbox/demo/beach.mp4'))).toBe(
      '`to` s3://media-bucket/sandbox/demo/beach.mp4 does not end in .html; name the page as in s3://media-bucket/sandbox/demo/beach.mp4.html',
    );
    expect(
      refused(() => bucketPageKey(location, 's3://media-bucket/sandbox/demo/.mediabatch-staging/x.html')),
    ).toMatch(/staging folder, which the next run empties/);
    expect(refused(() => bucketPageKey(location, 's3://media-bucket/sandbox/demo/../x.html'))).toBe(
      '`to` s3://media-bucket/sandbox/demo/../x.html may not hold a ".." segment',
    );
    expect(refused(() => bucketPageKey(location, 's3://Media/x.html'))).toMatch(
      /invalid bucket name "Media"/,
    );
  });
});

describe('objects a page never replaces', () => {
  const saved = [
    's3://media-bucket/sandbox/demo/beach.mp4',
    's3://media-bucket/sandbox/demo/sub/city.take1.mp4',
  ];

  it('names the owner marker, a saved output and its sidecar', () => {
    const of = (uri: string) => guardedObject(uri, location, saved);
    expect(of('s3://media-bucket/sandbox/demo/.mediabatch-owner.json')).toBe(
      "the output location's owner marker",
    );
    expect(of('s3://media-bucket/sandbox/demo/beach.mp4')).toBe('a saved output');
    expect(of('s3://media-bucket/sandbox/demo/sub/city.take1.json')).toBe(
      "a saved output's provenance sidecar",
    );
    expect(of('s3://media-bucket/sandbox/demo/beach.json')).toBe("a saved output's provenance sidecar");
    expect(of('s3://media-bucket/sandbox/demo/index.html')).toBeNull();
    expect(of('s3://media-bucket/sandbox/demo/sub/.mediabatch-owner.json')).toBeNull();
  });
});
