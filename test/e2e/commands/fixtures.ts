import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Ledger } from '../../../src/ledger/ledger.js';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import type { AttemptRecord, ItemState, JobSnapshot } from '../../../src/ledger/records.js';
import { loadManifest, type Manifest, type ManifestItem } from '../../../src/manifest/index.js';
import { parseUsdStrict } from '../../../src/money.js';
import { buildRequestBody, requestHash } from '../../../src/runner/request.js';
import { tempProject } from '../../support/cli.js';

/**
 * Builds real SQLite ledgers with the real Ledger class, one situation per call, the way a run
 * would have left them. Amounts are decimal strings, as a reader of the test thinks of them.
 */

export function project(
  manifestYaml: string,
  files: Record<string, string> = {},
): { dir: string; manifest: Manifest } {
  const dir = tempProject({ 'batch.yaml': manifestYaml, ...files });
  const result = loadManifest(join(dir, 'batch.yaml'));
  if (!result.ok) throw new Error(`fixture manifest is invalid: ${JSON.stringify(result.problems)}`);
  return { dir, manifest: result.manifest };
}

export const ledgerPath = (dir: string, manifest: Manifest) =>
  join(dir, '.mediabatch', `${manifest.name}.sqlite`);

let keyCounter = 0;

export class LedgerBuilder {
  readonly ledger: Ledger;
  readonly manifest: Manifest;
  readonly #seqs = new Map<string, number>();

  private constructor(ledger: Ledger, manifest: Manifest) {
    this.manifest = manifest;
    this.ledger = ledger;
  }

  static async open(dir: string, manifest: Manifest): Promise<LedgerBuilder> {
    const path = ledgerPath(dir, manifest);
    const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, manifest.name, manifest.file);
    return new LedgerBuilder(ledger, manifest);
  }

  item(id: string): ManifestItem {
    const item = this.manifest.items.find((candidate) => candidate.id === id);
    if (!item) throw new Error(`no item ${id} in the fixture manifest`);
    return item;
  }

  /** The item row; `stale` stores a hash from an older manifest (the item changed since). */
  put(
    id: string,
    state: ItemState,
    extra: { stale?: boolean; errorCode?: string; errorMessage?: string } = {},
  ): Promise<void> {
    return this.ledger.putItems([
      {
        itemId: id,
        state,
        requestHash: extra.stale ? 'hash-of-an-older-manifest' : requestHash(this.item(id)),
        errorCode: extra.errorCode ?? null,
        errorMessage: extra.errorMessage ?? null,
      },
    ]);
  }

  /** Write-ahead attempt with the exact body run would send; no answer yet. */
  prepare(id: string, reservedUsd = '0', item: ManifestItem = this.item(id)): Promise<AttemptRecord> {
    const seq = (this.#seqs.get(id) ?? 0) + 1;
    this.#seqs.set(id, seq);
    keyCounter += 1;
    return this.ledger.prepareAttempt({
      itemId: id,
      seq,
      idempotencyKey: `mb_${String(keyCounter).padStart(8, '0')}-secret-tail-${id}`,
      requestBody: buildRequestBody(this.manifest.name, item, seq, item.maxCostMicros),
      requestHash: requestHash(item),
      reservedMicros: parseUsdStrict(reservedUsd),
    });
  }

  /** A job accepted at `amountUsd`, then seen in `status`. */
  async job(
    attempt: AttemptRecord,
    amountUsd: string,
    status: string,
    extra: Partial<JobSnapshot> = {},
  ): Promise<AttemptRecord> {
    const snapshot: JobSnapshot = {
      jobId: `job_${attempt.itemId}_${attempt.seq}`,
      status: 'queued',
      amountMicros: parseUsdStrict(amountUsd),
      refundedMicros: 0,
      errorCode: null,
      errorMessage: null,
      expiresAt: null,
      completedAt: null,
    };
    const accepted = await this.ledger.recordAccepted(attempt.id, 202, snapshot);
    if (status === 'queued') return accepted;
    return this.ledger.recordJob(attempt.id, { ...snapshot, status, ...extra });
  }

  /** A finished item: paid, succeeded, its file on disk and in the ledger. */
  async done(id: string, amountUsd: string, item: ManifestItem = this.item(id)): Promise<AttemptRecord> {
    await this.put(id, 'pending');
    const attempt = await this.job(await this.prepare(id, '0', item), amountUsd, 'succeeded', finished(48));
    const path = join(this.manifest.outputDir, `${id}.mp4`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `video of ${id}`);
    const sha256 = createHash('sha256').update(`video of ${id}`).digest('hex');
    await this.ledger.recordFilesSaved(attempt.id, [
      { idx: 0, path, bytes: `video of ${id}`.length, sha256 },
    ]);
    await this.ledger.setItemState(id, { state: 'done' });
    return attempt;
  }

  /** A job that failed (refunded) and the item left in `state` with `code`. */
  async failed(
    id: string,
    amountUsd: string,
    code: string,
    message: string,
    state: ItemState = 'failed',
  ): Promise<AttemptRecord> {
    await this.put(id, 'pending');
    const attempt = await this.job(await this.prepare(id), amountUsd, 'failed', {
      refundedMicros: parseUsdStrict(amountUsd),
      errorCode: code,
      errorMessage: message,
      completedAt: new Date().toISOString(),
    });
    await this.ledger.setItemState(id, { state, errorCode: code, errorMessage: message });
    return attempt;
  }

  close(): Promise<void> {
    return this.ledger.close();
  }
}

/** Completed now, outputs kept for `hoursLeft` more hours. */
export function finished(hoursLeft: number): Partial<JobSnapshot> {
  const now = Date.now();
  return {
    completedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + hoursLeft * 3600_000).toISOString(),
  };
}

/** Bytes, size and mtime of a ledger file, to prove a command left it alone. */
export function fingerprint(path: string): { sha256: string; mtimeMs: number; size: number } {
  const bytes = readFileSync(path);
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    mtimeMs: statSync(path).mtimeMs,
    size: bytes.length,
  };
}

export function noLedgerIn(dir: string): boolean {
  return !existsSync(join(dir, '.mediabatch')) && !readdirSync(dir).some((name) => name.endsWith('.sqlite'));
}
