import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { OWNER_MARKER } from '../downloads/output-owner.js';
import { takePath } from '../downloads/preserve-take.js';
import { headerText, openDownload } from '../downloads/save-file.js';
import { refreshAfterRefusal, type SavedFile } from '../downloads/save-job-files.js';
import {
  renderSidecar,
  type SidecarFacts,
  type SidecarFile,
  sidecarPathFor,
  withCheck,
} from '../downloads/sidecar.js';
import { readVideoFacts, type VideoFacts } from '../downloads/video-facts.js';
import { extensionFor, keyOfUri, keyUnder, namedOutputPath, parseS3Uri } from '../manifest/index.js';
import type {
  MarkerObject,
  NameMove,
  OutputStore,
  SaveJobRequest,
  StoreProbe,
  StoreSaveOutcome,
  Written,
} from './output-store.js';
import { createS3Client, s3Settings } from './s3-client.js';
import { blankCredentials, s3Failure } from './s3-errors.js';
import { S3Objects } from './s3-objects.js';
import { copyToNewNames, deleteOldNames } from './s3-rename.js';
import { DownloadCut, PART_BYTES, readWhole, STAGING_FOLDER, uploadToStaging } from './s3-upload.js';

/**
 * Outputs in an S3 bucket (docs/storage.md), with the promises of the disk: only a whole, verified
 * file ever takes its key, with its SHA-256 in the metadata. A small file is checked in memory and
 * PUT once; a large one streams into a staging object, counted and hashed on the way, and is copied
 * to its key once whole. A killed run leaves at most staging objects and unfinished uploads, which
 * the next run removes.
 */
export class S3Store implements OutputStore {
  readonly root: string;
  readonly #objects: S3Objects;

  static async open(root: string, env: NodeJS.ProcessEnv): Promise<S3Store> {
    const location = parseS3Uri(root);
    if ('problem' in location) throw new Error(`not an s3:// location: ${location.problem}`);
    const settings = s3Settings(env);
    if ('problem' in settings) throw Object.assign(new Error(settings.problem), { code: 'S3Settings' });
    const sdk = await import('@aws-sdk/client-s3');
    const credentials = [env.AWS_ACCESS_KEY_ID, env.AWS_SECRET_ACCESS_KEY, env.AWS_SESSION_TOKEN].filter(
      (value): value is string => typeof value === 'string' && value.length >= 4,
    );
    return new S3Store(root, new S3Objects(await createS3Client(settings), location, sdk, credentials));
  }

  private constructor(root: string, objects: S3Objects) {
    this.root = root;
    this.#objects = objects;
  }

  get objects(): S3Objects {
    return this.#objects;
  }

  get #staging(): string {
    return `${keyUnder(this.#objects.location, STAGING_FOLDER)}/`;
  }

  /**
   * Writes and deletes a probe object: the bucket exists, and the keys may write and delete. A
   * bucket has no free space to compare with the next wave's size.
   */
  async probe(_neededBytes?: number): Promise<StoreProbe> {
    const key = `${this.#staging}probe-${randomBytes(6).toString('hex')}`;
    for (const [step, run] of [
      ['write an object', () => this.#objects.putText(key, 'probe\n', 'text/plain')],
      ['delete an object', () => this.#objects.delete(key)],
    ] as const) {
      try {
        await run();
      } catch (error) {
        const code = (error as { code?: string }).code ?? null;
        return { ok: false, step, code, reason: (error as Error).message };
      }
    }
    return { ok: true };
  }

  /** Aborts unfinished uploads and deletes staging objects a killed run left. */
  async cleanUp(idleMs?: number): Promise<number> {
    const aborted = await this.#objects.abortUploads(this.#staging, idleMs);
    const staged = await this.#objects.list(this.#staging, undefined, idleMs);
    for (const key of staged) await this.#objects.delete(key);
    return aborted + staged.length;
  }

  async saveJob(request: SaveJobRequest): Promise<StoreSaveOutcome> {
    if (request.job.output.files.length === 0) return { kind: 'expired' };
    try {
      return await this.#saveEveryFile(request);
    } catch (error) {
      // The transfer from the service, not the bucket: retried like any cut download.
      if (error instanceof DownloadCut) return { kind: 'error', message: error.message };
      const failure = s3Failure(error);
      const code = (error as { code?: unknown }).code;
      return {
        kind: 'error',
        // An upload's own error (lib-storage) has not passed through s3Error: blank it here too.
        message: blankCredentials(failure.message, this.#objects.credentials),
        local: true,
        ...(typeof code === 'string' ? { code } : failure.code ? { code: failure.code } : {}),
        ...((error as { unreachable?: boolean }).unreachable || failure.unreachable
          ? { unreachable: true }
          : {}),
      };
    }
  }

  async #saveEveryFile(request: SaveJobRequest): Promise<StoreSaveOutcome> {
    let job = request.job;
    const saved: SavedFile[] = [];
    for (let idx = 0, refreshes = 0; idx < job.output.files.length; ) {
      const file = job.output.files[idx]!;
      const count = job.output.files.length;
      const response = await openDownload(
        file.url,
        request.timeoutMs ? { timeoutMs: request.timeoutMs } : {},
      );
      if ('statusCode' in response) {
        const contentType = headerText(response.headers['content-type']);
        const length = headerText(response.headers['content-length']);
        const name = namedOutputPath('.', request.name, idx, count, extensionFor(contentType, file.url));
        const key = keyUnder(
          this.#objects.location,
          request.take === undefined ? name : takePath(name, request.take),
        );
        const placed = await this.#place(
          response.body,
          key,
          length === null ? null : Number(length),
          contentType,
          request,
        );
        saved.push({ idx, path: this.#objects.uri(key), ...placed });
        idx += 1;
        continue;
      }
      if (response.kind === 'error') return { kind: 'error', message: response.message };
      if (response.kind === 'saved') throw new Error('a download answered before it was read');
      const next = await refreshAfterRefusal(refreshes, response.status, count, request.refreshJob);
      if (!('job' in next)) return next;
      refreshes += 1;
      job = next.job;
    }
    const check = request.judge ? await request.judge(saved) : null;
    if (request.sidecar)
      for (const file of saved) await this.#putSidecar(withCheck(request.sidecar, check), file);
    return { kind: 'saved', files: saved };
  }

  /**
   * A file of at most one part whose length is announced is read whole, checked and PUT straight
   * to its key (one PUT lands whole or not at all, and the server checks its MD5); a larger one
   * goes through a staging object. Either way the caller's checks run before the key is touched.
   */
  async #place(
    body: Readable,
    key: string,
    expected: number | null,
    contentType: string | null,
    request: SaveJobRequest,
  ): Promise<Written> {
    const type = contentType ?? 'application/octet-stream';
    if (expected === null || expected > PART_BYTES)
      return this.#placeStaged(body, key, expected, type, request);
    try {
      const whole = await readWhole(body, expected);
      await request.beforePlace(this.#objects.uri(key), whole.written);
      await this.#objects.putBytes(key, whole.bytes, type, {
        metadata: { sha256: whole.written.sha256 },
        md5: whole.md5,
      });
      return whole.written;
    } finally {
      body.destroy();
    }
  }

  /** Staging upload, the caller's checks, then the copy under its own key with its SHA-256. */
  async #placeStaged(
    body: Readable,
    key: string,
    expected: number | null,
    contentType: string,
    request: SaveJobRequest,
  ): Promise<Written> {
    let staged: (Written & { key: string }) | null = null;
    try {
      staged = await uploadToStaging(this.#objects, this.#staging, body, expected, contentType);
      const written = { bytes: staged.bytes, sha256: staged.sha256 };
      await request.beforePlace(this.#objects.uri(key), written);
      await this.#objects.copy(staged.key, key, { sha256: staged.sha256 }, contentType);
      const placed = await this.#objects.head(key);
      if (placed?.bytes !== written.bytes || placed.sha256 !== written.sha256)
        throw new Error(`${this.#objects.uri(key)} does not hold what was uploaded after the copy`);
      return written;
    } finally {
      body.destroy();
      if (staged) await this.#objects.delete(staged.key).catch(() => undefined);
    }
  }

  videoFacts(path: string, bytes: number): Promise<VideoFacts> {
    const key = this.#keyOf(path);
    return readVideoFacts((offset, length) => this.#objects.getRange(key, offset, length), bytes);
  }

  async check(file: SidecarFile): Promise<'intact' | 'missing' | 'altered'> {
    const key = this.#keyOf(file.path);
    const facts = await this.#objects.head(key);
    if (facts === null) return 'missing';
    return facts.bytes === file.bytes && facts.sha256 === file.sha256 ? 'intact' : 'altered';
  }

  async ensureSidecars(facts: SidecarFacts, files: readonly SidecarFile[]): Promise<number> {
    let written = 0;
    for (const file of files) {
      const key = this.#keyOf(sidecarPathFor(file.path));
      if ((await this.#objects.getText(key)) === renderSidecar(facts, file)) continue;
      await this.#putSidecar(facts, file);
      written += 1;
    }
    return written;
  }

  async refuseForeign(
    target: string,
    written: Written,
    writtenByLedger: (path: string) => Promise<boolean>,
  ): Promise<void> {
    const there = await this.#objects.head(this.#keyOf(target));
    if (there === null || (await writtenByLedger(target))) return;
    if (there.bytes === written.bytes && there.sha256 === written.sha256) return;
    throw Object.assign(
      new Error(
        `refusing to overwrite ${target}: this ledger did not write it; move it elsewhere (or change output.dir), then run again`,
      ),
      { code: 'EEXIST' },
    );
  }

  /** Copies the earlier take (and its sidecar) to its take key, server-side; a different object there is refused. */
  async preserveEarlier(current: string, kept: string, expected: Written): Promise<boolean> {
    const [from, to] = [this.#keyOf(current), this.#keyOf(kept)];
    const already = await this.#objects.head(to);
    if (already !== null && (already.bytes !== expected.bytes || already.sha256 !== expected.sha256))
      throw Object.assign(new Error(`refusing to overwrite ${kept}: it is not the earlier take`), {
        code: 'EEXIST',
      });
    if (already === null) {
      if ((await this.#objects.head(from)) === null) return false;
      await this.#objects.copy(from, to);
    }
    const sidecar = this.#keyOf(sidecarPathFor(current));
    if ((await this.#objects.head(sidecar)) !== null)
      await this.#objects.copy(sidecar, this.#keyOf(sidecarPathFor(kept)));
    return true;
  }

  /**
   * A server-side copy of a reused take, checked by the SHA-256 its object carries; the source is
   * checked first, so a copy is only ever of the take itself.
   */
  async copySaved(from: string, to: string, expected: Written): Promise<{ mtimeMs: number | null }> {
    const [source, target] = [this.#keyOf(from), this.#keyOf(to)];
    const facts = await this.#objects.head(source);
    if (facts === null || facts.bytes !== expected.bytes || facts.sha256 !== expected.sha256)
      throw Object.assign(new Error(`${from} is not the saved take any more`), { code: 'EALTERED' });
    await this.#objects.copy(source, target);
    return { mtimeMs: null };
  }

  /** Copies, checks, then deletes (s3-rename.ts): a bucket has no links. */
  linkNewNames(moves: readonly NameMove[]): Promise<void> {
    return copyToNewNames(this.#objects, (uri) => this.#keyOf(uri), moves);
  }

  dropOldNames(moves: readonly NameMove[]): Promise<void> {
    return deleteOldNames(this.#objects, (uri) => this.#keyOf(uri), moves);
  }

  async filesIn(folders: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const folder of folders) {
      const key = keyOfUri(this.#objects.location, `${folder}/x`);
      if (key === null) continue;
      const prefix = key.slice(0, -1);
      for (const entry of await this.#objects.list(prefix, '/')) found.push(this.#objects.uri(entry));
    }
    return found;
  }

  /**
   * The owner marker as an object. S3-compatible servers do not all honour a conditional PUT, so
   * two first runs racing for one prefix could both write it: the later marker wins, and the
   * earlier run is refused on its next start (docs/storage.md).
   */
  get marker(): MarkerObject {
    const key = keyUnder(this.#objects.location, OWNER_MARKER);
    return {
      read: () => this.#objects.getText(key),
      write: (text) => this.#objects.putText(key, text, 'application/json'),
    };
  }

  #putSidecar(facts: SidecarFacts, file: SidecarFile): Promise<void> {
    return this.#objects.putText(
      this.#keyOf(sidecarPathFor(file.path)),
      renderSidecar(facts, file),
      'application/json',
    );
  }

  #keyOf(uri: string): string {
    const key = keyOfUri(this.#objects.location, uri);
    if (key === null) throw new RangeError(`${uri} is not under ${this.root}`);
    return key;
  }
}
