import { join } from 'node:path';
/**
 * `s3://BUCKET/PREFIX` output locations (docs/storage.md). Pure: the manifest checks a location
 * with it, and the storage layer builds every object key through it, so no key can leave the
 * prefix whatever an item's name or a server's content type says.
 */

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's top. */
  prefix: string;
}

const SCHEME = 's3://';
/** S3's bucket naming rules (lower case, digits, dots, hyphens; 3-63; starts and ends alphanumeric). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** One key segment: no control characters, nothing a path could climb with. */
const SEGMENT = /^[^\u0000-\u001f\u007f\\]+$/;

export function isS3Uri(text: string): boolean {
  return text.toLowerCase().startsWith(SCHEME);
}

/** What is wrong with `uri` as an output location, or null. */
export function s3UriProblem(uri: string): string | null {
  const parsed = parseS3Uri(uri);
  return 'problem' in parsed ? parsed.problem : null;
}

export function parseS3Uri(uri: string): S3Location | { problem: string } {
  if (!uri.startsWith(SCHEME)) return { problem: `must start with ${SCHEME} (lower case)` };
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  // No slash: the bucket alone. (A slash first leaves an empty bucket name, refused below.)
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    return {
      problem: `has an invalid bucket name ${JSON.stringify(bucket)}: 3 to 63 lower-case letters, digits, dots or hyphens`,
    };
  const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/\/$/, '');
  if (prefix === '') return { bucket, prefix };
  for (const segment of prefix.split('/')) {
    if (segment === '') return { problem: 'has an empty segment (two slashes in a row) in its prefix' };
    if (segment === '.' || segment === '..') return { problem: `may not hold a "${segment}" segment` };
    if (!SEGMENT.test(segment)) return { problem: 'holds a control character or a backslash' };
  }
  return { bucket, prefix };
}

/** The location as one canonical URI: `s3://bucket/prefix`, no trailing slash. */
export function s3Uri(location: S3Location, key?: string): string {
  const path = key ?? location.prefix;
  return path === '' ? `${SCHEME}${location.bucket}` : `${SCHEME}${location.bucket}/${path}`;
}

/**
 * The key of `relativeName` ('/'-separated, as output names and take names are) below the prefix.
 * Throws on a name that would leave it: names are checked when the manifest is read, this checks
 * again because the extension comes from a server.
 */
export function keyUnder(location: S3Location, relativeName: string): string {
  const segments = relativeName.split('/');
  if (segments.some((segment) => segment === '.' || segment === '..' || !SEGMENT.test(segment)))
    throw new RangeError(
      `refusing to build an object key outside the prefix: ${JSON.stringify(relativeName)}`,
    );
  return location.prefix === '' ? relativeName : `${location.prefix}/${relativeName}`;
}

/** The key of an `s3://` URI inside `location`, or null when it lies elsewhere. */
export function keyOfUri(location: S3Location, uri: string): string | null {
  const top = `${s3Uri({ bucket: location.bucket, prefix: '' })}/`;
  if (!uri.startsWith(top)) return null;
  const key = uri.slice(top.length);
  const inside = location.prefix === '' || key.startsWith(`${location.prefix}/`);
  return inside ? key : null;
}

/** A location below this one (`sandbox` runs keep their own): `s3://b/p` + `sandbox` -> `s3://b/sandbox/p`. */
export function s3Beside(location: S3Location, folder: string): S3Location {
  const parts = location.prefix.split('/');
  const last = parts.pop();
  return { bucket: location.bucket, prefix: [...parts, folder, ...(last ? [last] : [])].join('/') };
}

/** `dir` + '/'-separated `name`: a path under a folder, or a URI under an `s3://` location. */
export function outputChild(dir: string, name: string): string {
  return isS3Uri(dir) ? `${dir}/${name}` : join(dir, name);
}
