import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import type { Written } from './output-store.js';
import type { S3Objects } from './s3-objects.js';

/** Where uploads land before they are whole and verified: below the prefix, never an output's key. */
export const STAGING_FOLDER = '.mediabatch-staging';

/**
 * The download from the service failed (cut short, too long, an error mid-body), not the storage:
 * it is retried as a transfer is, never waited out as an unreachable store.
 */
export class DownloadCut extends Error {}

const cut = (error: unknown) =>
  error instanceof DownloadCut ? error : new DownloadCut(`the download failed: ${(error as Error).message}`);

/** 8 MiB parts, 4 in flight: one upload holds at most 32 MiB, whatever the file's size. */
export const PART_BYTES = 8 * 1024 * 1024;
export const PARTS_IN_FLIGHT = 4;

/**
 * Streams `body` into a new staging object (multipart above one part), hashing and counting as the
 * bytes pass: nothing is kept on disk or whole in memory. A body shorter or longer than
 * `expectedBytes` fails the stream, so the multipart upload is aborted and no object is left.
 */
export async function uploadToStaging(
  objects: S3Objects,
  stagingPrefix: string,
  body: Readable,
  expectedBytes: number | null,
  contentType: string | null,
): Promise<Written & { key: string }> {
  const { Upload } = await import('@aws-sdk/lib-storage');
  const key = `${stagingPrefix}${randomBytes(8).toString('hex')}`;
  const counter = new CountingHash(expectedBytes);
  body.on('error', (error) => counter.destroy(cut(error)));
  const upload = new Upload({
    client: objects.client,
    params: {
      Bucket: objects.location.bucket,
      Key: key,
      Body: body.pipe(counter),
      ...(contentType ? { ContentType: contentType } : {}),
    },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    leavePartsOnError: false,
  });
  await upload.done();
  return { key, ...counter.written() };
}

/**
 * Reads a body no larger than one part whole, and checks its length: such a file needs no staging,
 * since one PUT of it lands whole or not at all. Its MD5 lets the server check what arrived.
 */
export async function readWhole(
  body: Readable,
  expectedBytes: number,
): Promise<{ bytes: Buffer; written: Written; md5: string }> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > expectedBytes) break;
      chunks.push(chunk);
    }
  } catch (error) {
    throw cut(error);
  }
  if (length !== expectedBytes) throw new DownloadCut(`received ${length} bytes of ${expectedBytes}`);
  const bytes = Buffer.concat(chunks, length);
  return {
    bytes,
    written: { bytes: length, sha256: createHash('sha256').update(bytes).digest('hex') },
    md5: createHash('md5').update(bytes).digest('base64'),
  };
}

/** Passes bytes through, hashing and counting them; fails at the end on a short or long body. */
class CountingHash extends Transform {
  readonly #hash = createHash('sha256');
  readonly #expected: number | null;
  #bytes = 0;
  #sha256: string | null = null;

  constructor(expected: number | null) {
    super();
    this.#expected = expected;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#hash.update(chunk);
    this.#bytes += chunk.length;
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.#expected !== null && this.#bytes !== this.#expected) {
      done(new DownloadCut(`received ${this.#bytes} bytes of ${this.#expected}`));
      return;
    }
    this.#sha256 = this.#hash.digest('hex');
    done();
  }

  written(): Written {
    if (this.#sha256 === null) throw new Error('the upload ended before its body did');
    return { bytes: this.#bytes, sha256: this.#sha256 };
  }
}
