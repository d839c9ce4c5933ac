import { isGalleryPage } from '../../documents/gallery/page.js';
import { OWNER_MARKER } from '../../downloads/output-owner.js';
import { sidecarPathFor } from '../../downloads/sidecar.js';
import { type Fields, UserError } from '../../errors.js';
import { isS3Uri, keyOfUri, keyUnder, parseS3Uri, type S3Location, s3Uri } from '../../manifest/index.js';
import { s3Failure } from '../../storage/s3-errors.js';
import type { S3Objects } from '../../storage/s3-objects.js';
import { STAGING_FOLDER } from '../../storage/s3-upload.js';
import { PROTECTED } from '../named-files/protected-files.js';
import { checkUrlLifetime, linksExpireAt } from './url-lifetime.js';

/**
 * The gallery of an `s3://` output location (docs/gallery.md, "Review from the bucket"): its
 * videos linked by presigned GET URLs, and the page itself written into the bucket. The page model
 * (src/documents/gallery/) knows nothing of S3; it is handed the URLs signed here. The SDK and the
 * store are loaded only when a bucket is used, so a local report pays nothing for them.
 */

/** Enough of an object to hold a gallery page's head (as lib/output-files.ts reads a file's). */
const PAGE_HEAD_BYTES = 16 * 1024;

const refused = (message: string, fields: Fields = {}) => new UserError(message, 'target_refused', fields);

/** The output location's objects, with the client configured from the environment (exit 2 if not). */
export async function openGalleryBucket(outputDir: string, env: NodeJS.ProcessEnv): Promise<S3Objects> {
  const { S3Store } = await import('../../storage/s3-store.js');
  try {
    return (await S3Store.open(outputDir, env)).objects;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'S3Settings')
      throw refused(`cannot use the output location ${outputDir}: ${(error as Error).message}`);
    throw error;
  }
}

export interface BucketGalleryPlan {
  location: S3Location;
  /** Where the page goes in the bucket; null: to a local file, still with presigned links. */
  key: string | null;
  lifetimeSeconds: number;
}

/**
 * What `report --html` does for this output location, before anything is read or written: null
 * for a local folder (whose page links files relative to it, so an s3:// page or a link lifetime
 * means nothing there: exit 2), else where in the bucket the page goes and how long links live.
 */
export function bucketGalleryPlan(
  outputDir: string,
  html: string,
  urlLifetimeSeconds: number | null,
): BucketGalleryPlan | null {
  if (!isS3Uri(outputDir)) {
    if (isS3Uri(html))
      throw refused(
        `\`to\` ${html}: the output location is a local folder, so the page goes to a file beside the videos; an s3:// page needs an s3:// output.dir`,
        { option: 'to', target: html },
      );
    if (urlLifetimeSeconds !== null)
      throw refused('`urlLifetimeSeconds` is for an s3:// output location, whose links are presigned URLs', {
        option: 'urlLifetimeSeconds',
      });
    return null;
  }
  const lifetimeSeconds = checkUrlLifetime(urlLifetimeSeconds);
  const location = parseS3Uri(outputDir) as S3Location;
  const key = html === '' || isS3Uri(html) ? bucketPageKey(location, html) : null;
  return { location, key, lifetimeSeconds };
}

/**
 * The key `report --html` writes the page to, from `--html` ('' for the default `index.html` at
 * the location's top). Pure. The page stays below the output location, whose owner marker says
 * this batch owns it, out of the staging folder every run empties, and is named `.html`, which
 * is how `plan` and a person recognise a page among the outputs.
 */
export function bucketPageKey(location: S3Location, html: string): string {
  if (html === '') return keyUnder(location, 'index.html');
  const parsed = parseS3Uri(html);
  const option = { option: 'to', target: html };
  if ('problem' in parsed) throw refused(`\`to\` ${html} ${parsed.problem}`, option);
  const key = parsed.bucket === location.bucket ? keyOfUri(location, html) : null;
  if (key === null || key === location.prefix)
    throw refused(
      `\`to\` ${html} is outside the output location ${s3Uri(location)}: the page goes below it, as in ${s3Uri(location, keyUnder(location, 'index.html'))}`,
      option,
    );
  if (!key.toLowerCase().endsWith('.html'))
    throw refused(
      `\`to\` ${html} does not end in .html; name the page as in ${s3Uri(location, `${key}.html`)}`,
      option,
    );
  if (key.startsWith(`${keyUnder(location, STAGING_FOLDER)}/`))
    throw refused(
      `\`to\` ${html} is in mediabatch's staging folder, which the next run empties; name another key`,
      option,
    );
  return key;
}

/**
 * What a guarded object at `uri` is, or null: a saved output, its provenance sidecar or the owner
 * marker, which `force` never replaces (the promise the door for named files,
 * batch/named-files/named-target.ts, keeps on disk). Pure.
 */
export function guardedObject(
  uri: string,
  location: S3Location,
  savedFiles: readonly string[],
): string | null {
  if (uri === s3Uri(location, keyUnder(location, OWNER_MARKER))) return "the output location's owner marker";
  if (savedFiles.includes(uri)) return PROTECTED.saved_output;
  if (savedFiles.some((file) => sidecarPathFor(file) === uri)) return PROTECTED.sidecar;
  return null;
}

/**
 * Throws (exit 2, nothing written) unless the page may go to `key`: a new object, or a gallery
 * page mediabatch wrote (its first bytes say so), or anything but a guarded object with `force`.
 */
export async function checkBucketTarget(
  objects: S3Objects,
  key: string,
  savedFiles: readonly string[],
  force: boolean,
): Promise<void> {
  const uri = objects.uri(key);
  const what = guardedObject(uri, objects.location, savedFiles);
  if (what !== null)
    throw refused(
      `${uri} is ${what}; a gallery never goes over it, not even with \`force\`. Name another key`,
      { target: uri, guarded: what },
    );
  if (force) return;
  const head = await readPageHead(objects, key);
  if (head === null || isGalleryPage(head)) return;
  throw refused(
    `${uri} exists and is not a gallery page mediabatch wrote; nothing was written. Name a new key ` +
      '(or leave the value out for <output location>/index.html), or add `force` to replace it',
    { target: uri, guarded: null },
  );
}

/** The object's first bytes as text, or null when there is no such object. */
async function readPageHead(objects: S3Objects, key: string): Promise<string | null> {
  try {
    return await objects.getText(key, PAGE_HEAD_BYTES);
  } catch (error) {
    // The store's error already says what it could not read, and why.
    throw new UserError((error as Error).message, 'write_failed');
  }
}

export interface LinkSigner {
  /** A presigned GET URL of a saved file (its s3:// URI), or null for a path that is no object. */
  sign(savedPath: string): Promise<string | null>;
  /** When the links stop working; `byCredentials` when the signing credentials expire first. */
  expireAt: Date;
  byCredentials: boolean;
}

/**
 * Signs the links of every `s3://` file the page shows as its take comes past (page-stream.ts),
 * all at `signedAt` so they expire together. Signing is local: no request is made. The URLs carry
 * the access key ID (X-Amz-Credential) and a signature, never the secret key. The credentials are
 * asked first, so that a page without them fails before anything is read.
 */
export async function linkSigner(
  objects: S3Objects,
  lifetimeSeconds: number,
  signedAt: Date,
): Promise<LinkSigner> {
  const expiry = linksExpireAt(signedAt, lifetimeSeconds, await credentialsExpire(objects));
  return {
    ...expiry,
    sign: async (path) =>
      'problem' in parseS3Uri(path) ? null : presign(objects, path, lifetimeSeconds, signedAt),
  };
}

/** When the signing credentials expire (a session token's end), or undefined for long-term keys. */
async function credentialsExpire(objects: S3Objects): Promise<Date | undefined> {
  try {
    return (await objects.client.config.credentials()).expiration;
  } catch (error) {
    throw storageRefused('cannot sign the links: no credentials', (error as Error).message);
  }
}

/** A presigned GET URL of any object (`s3://bucket/key`) the location's client may read. */
export async function presign(
  objects: S3Objects,
  uri: string,
  lifetimeSeconds: number,
  signedAt: Date,
): Promise<string> {
  const { bucket, prefix: key } = parseS3Uri(uri) as S3Location;
  const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
  try {
    return await getSignedUrl(
      objects.client,
      new objects.sdk.GetObjectCommand({ Bucket: bucket, Key: key }),
      {
        expiresIn: lifetimeSeconds,
        signingDate: signedAt,
      },
    );
  } catch (error) {
    throw storageRefused(`cannot sign a link to ${uri}`, s3Failure(error).message);
  }
}

/** Writes the page as HTML, so that a browser opening its presigned URL renders it. */
export async function uploadPage(objects: S3Objects, key: string, html: Buffer): Promise<void> {
  try {
    await objects.putBytes(key, html, 'text/html; charset=utf-8');
  } catch (error) {
    throw new UserError(`${(error as Error).message}; nothing was written`, 'write_failed');
  }
}

/** Like a local write that fails (report.ts): the page could not be made; exit 1. */
const storageRefused = (what: string, why: string) => new UserError(`${what}: ${why}`, 'write_failed');
