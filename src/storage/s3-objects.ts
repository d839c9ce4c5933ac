import type { S3Client } from '@aws-sdk/client-s3';
import { type S3Location, s3Uri } from '../manifest/index.js';
import { s3Error, s3Failure } from './s3-errors.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/** What a HEAD tells of an object: its size and the SHA-256 mediabatch stored in its metadata. */
export interface ObjectFacts {
  bytes: number;
  sha256: string | null;
}

/**
 * The few object calls the store makes, each a thin wrapper that turns the SDK's errors into
 * ones carrying their S3 code (s3-errors.ts). One bucket; keys are built by the store.
 */
export class S3Objects {
  readonly client: S3Client;
  readonly location: S3Location;
  readonly #sdk: Sdk;
  /** Credential values never to be shown in a message (s3Error). */
  readonly #credentials: readonly string[];

  constructor(client: S3Client, location: S3Location, sdk: Sdk, credentials: readonly string[] = []) {
    this.client = client;
    this.location = location;
    this.#sdk = sdk;
    this.#credentials = credentials;
  }

  get credentials(): readonly string[] {
    return this.#credentials;
  }

  get sdk(): Sdk {
    return this.#sdk;
  }

  uri(key: string): string {
    return s3Uri(this.location, key);
  }

  /** The object's facts, or null when there is none. */
  async head(key: string): Promise<ObjectFacts | null> {
    try {
      const answer = await this.client.send(
        new this.#sdk.HeadObjectCommand({ Bucket: this.location.bucket, Key: key }),
      );
      return { bytes: answer.ContentLength ?? -1, sha256: answer.Metadata?.sha256 ?? null };
    } catch (error) {
      const failure = s3Failure(error);
      if (failure.notFound) return null;
      throw s3Error(`cannot read ${this.uri(key)}`, failure, this.#credentials);
    }
  }

  /** The object's text (its first `firstBytes` only, when given), or null when there is none. */
  async getText(key: string, firstBytes?: number): Promise<string | null> {
    try {
      const answer = await this.client.send(
        new this.#sdk.GetObjectCommand({
          Bucket: this.location.bucket,
          Key: key,
          ...(firstBytes ? { Range: `bytes=0-${firstBytes - 1}` } : {}),
        }),
      );
      return (await answer.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      const failure = s3Failure(error);
      if (failure.notFound || failure.code === 'NoSuchKey') return null;
      // An empty object has no byte 0 to start a range at: it is there, and holds no text.
      if (failure.code === 'InvalidRange') return '';
      throw s3Error(`cannot read ${this.uri(key)}`, failure, this.#credentials);
    }
  }

  /** `length` bytes of the object from `offset` (fewer at its end), by a ranged GET. */
  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const answer = await this.#call(`cannot read ${this.uri(key)}`, () =>
      this.client.send(
        new this.#sdk.GetObjectCommand({
          Bucket: this.location.bucket,
          Key: key,
          Range: `bytes=${offset}-${offset + length - 1}`,
        }),
      ),
    );
    return (await answer.Body?.transformToByteArray()) ?? new Uint8Array(0);
  }

  putText(key: string, text: string, contentType: string): Promise<void> {
    return this.putBytes(key, text, contentType);
  }

  /**
   * One PUT of a whole object; a file's with its metadata and the MD5 the server checks it against.
   */
  async putBytes(
    key: string,
    body: Buffer | string,
    contentType: string,
    checked?: { metadata: Record<string, string>; md5: string },
  ): Promise<void> {
    await this.#call(`cannot write ${this.uri(key)}`, () =>
      this.client.send(
        new this.#sdk.PutObjectCommand({
          Bucket: this.location.bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          ...(checked ? { ContentMD5: checked.md5, Metadata: checked.metadata } : {}),
        }),
      ),
    );
  }

  /** Server-side copy; `metadata` replaces the source's, else it is kept. */
  async copy(
    from: string,
    to: string,
    metadata?: Record<string, string>,
    contentType?: string,
  ): Promise<void> {
    await this.#call(`cannot copy ${this.uri(from)} to ${this.uri(to)}`, () =>
      this.client.send(
        new this.#sdk.CopyObjectCommand({
          Bucket: this.location.bucket,
          Key: to,
          CopySource: `${this.location.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
          ...(metadata
            ? { MetadataDirective: 'REPLACE' as const, Metadata: metadata, ContentType: contentType }
            : { MetadataDirective: 'COPY' as const }),
        }),
      ),
    );
  }

  async delete(key: string): Promise<void> {
    await this.#call(`cannot delete ${this.uri(key)}`, () =>
      this.client.send(new this.#sdk.DeleteObjectCommand({ Bucket: this.location.bucket, Key: key })),
    );
  }

  /** Keys under `prefix` (all of them, page by page); with `delimiter`, only those directly in it. */
  async list(prefix: string, delimiter?: string, idleMs?: number): Promise<string[]> {
    const keys: string[] = [];
    const writtenBefore = idleMs === undefined ? Number.POSITIVE_INFINITY : Date.now() - idleMs;
    let token: string | undefined;
    do {
      const page = await this.#call(`cannot list ${this.uri(prefix)}`, () =>
        this.client.send(
          new this.#sdk.ListObjectsV2Command({
            Bucket: this.location.bucket,
            Prefix: prefix,
            ...(delimiter ? { Delimiter: delimiter } : {}),
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const entry of page.Contents ?? [])
        if (entry.Key && (entry.LastModified?.getTime() ?? 0) <= writtenBefore) keys.push(entry.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Aborts every unfinished multipart upload under `prefix` begun `idleMs` ago or more; returns how many. */
  async abortUploads(prefix: string, idleMs?: number): Promise<number> {
    const page = await this.#call(`cannot list the uploads under ${this.uri(prefix)}`, () =>
      this.client.send(
        new this.#sdk.ListMultipartUploadsCommand({ Bucket: this.location.bucket, Prefix: prefix }),
      ),
    );
    // Without an idle time, every upload: the bucket's clock may run ahead of ours.
    const begunBefore = idleMs === undefined ? Number.POSITIVE_INFINITY : Date.now() - idleMs;
    const uploads = (page.Uploads ?? []).filter(
      (upload) => upload.Key && upload.UploadId && (upload.Initiated?.getTime() ?? 0) <= begunBefore,
    );
    for (const upload of uploads)
      await this.#call(`cannot abort an upload to ${this.uri(upload.Key!)}`, () =>
        this.client.send(
          new this.#sdk.AbortMultipartUploadCommand({
            Bucket: this.location.bucket,
            Key: upload.Key!,
            UploadId: upload.UploadId!,
          }),
        ),
      );
    return uploads.length;
  }

  async #call<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw s3Error(what, s3Failure(error), this.#credentials);
    }
  }
}
