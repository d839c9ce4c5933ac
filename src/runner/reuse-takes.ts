import { takePath } from '../downloads/preserve-take.js';
import type { AttemptRecord, ItemRecord, ReusableTake, TakeToFetch } from '../ledger/index.js';
import { isS3Uri, type ManifestItem, namedOutputPath } from '../manifest/index.js';
import type { Written } from '../storage/output-store.js';
import { currentRequest, earlierOutput, latestAttempts, planItem } from './item-plan.js';
import { sidecarFactsOf } from './provenance.js';
import { buildRequestBody, requestHash } from './request.js';
import { manifestVariants, requestKey, SAME_VIDEO_WORDS, variantOfItem } from './request-key.js';
import type { RunContext } from './run-context.js';
import { heldResultOf, TakeIndex } from './take-index.js';

/**
 * A paid result is never bought twice (docs/results.md, "A result is found by its request"): before
 * a run restores its items, each item it would pay for (new, edited, to be retried) or that is
 * expired looks for a saved take of exactly its request anywhere in the batch: an undone edit, two
 * swapped ids, variants lowered and raised, an item removed and restored. A take whose files are
 * all intact (size and SHA-256) is copied into the item's place at no cost, under the takes rules:
 * a file of the item already there is preserved as its take first, nothing is overwritten. `redo` asks
 * for a new take on purpose and is left alone. Returns the items that took a saved take, and for
 * those with no intact take of their request, a take whose job the service still holds, if one
 * has: the run fetches it again instead of paying (held-results.ts), unless it waits for a twin.
 */
export async function reuseSavedTakes(
  run: RunContext,
  items: readonly ManifestItem[],
  held: ReadonlySet<string>,
  rows?: BatchRows,
  /** Items whose copied take was lost (lost-copies.ts): they want a take whatever their plan says. */
  lost: ReadonlySet<string> = new Set(),
): Promise<{ reused: Set<string>; heldResults: Map<string, ReusableTake> }> {
  const { ledger, manifest } = run.deps;
  const { attempts, records } = rows ?? (await batchRows(ledger));
  const latest = latestAttempts(attempts);
  // On a shared ledger, an item another runner's live lease holds is that runner's to decide.
  const elsewhere = (await run.shared?.claims.heldElsewhere()) ?? new Set<string>();
  const wanting = items.filter(
    (item) =>
      !held.has(item.id) &&
      !elsewhere.has(item.id) &&
      (lost.has(item.id) || wantsTake(run, item, records.get(item.id), latest.get(item.id))),
  );
  const reused = new Set<string>();
  const heldResults = new Map<string, ReusableTake>();
  if (wanting.length === 0) return { reused, heldResults };
  const variants = manifestVariants(manifest.items);
  const index = new TakeIndex(await ledger.reusableTakes(), (id) => variantOfItem(variants, id));
  const numbers = new AttemptNumbers(attempts);
  for (const item of wanting) {
    // The request it would send now: past a prompt moderation rejected, its next one's (fallback.ts).
    const key = requestKey(run.rejections.asSent(item));
    const takes = index.find(key, item.id, null);
    const source = await firstIntact(run, index, takes);
    if (source === null) {
      const result = heldResultOf(takes, run.deps.clock.now());
      if (result !== undefined) heldResults.set(item.id, result);
      continue;
    }
    if (
      source.attemptId === latest.get(item.id)?.id &&
      standsInPlace(manifest.outputDir, item, source, index)
    ) {
      await sameVideo(run, item, source);
      reused.add(item.id);
      continue;
    }
    try {
      index.add(key, await placeTake(run, item, source, numbers, index));
      reused.add(item.id);
    } catch (error) {
      run.deps.observer.log(
        'warn',
        `${item.id}: could not copy the saved take of its request: ${(error as Error).message}`,
      );
    }
  }
  return { reused, heldResults };
}

/**
 * The item's own current take already answers its request: only what the request key leaves out
 * changed (its metadata). The item takes the new request's hash, done, with nothing copied or paid.
 */
async function sameVideo(run: RunContext, item: ManifestItem, take: ReusableTake): Promise<void> {
  await run.deps.ledger.setItemState(
    item.id,
    { state: 'done', requestHash: requestHash(item), retriesUsed: 0, errorCode: null, errorMessage: null },
    { kind: 'same_request', detail: { attempt: take.attemptId } },
  );
  run.deps.observer.log('info', `${item.id}: ${SAME_VIDEO_WORDS}`);
}

/** Whether every file of the take is where the item's own files go. */
function standsInPlace(outputDir: string, item: ManifestItem, take: ReusableTake, index: TakeIndex): boolean {
  return take.files.every(
    (file) =>
      (index.pathOf(take.attemptId, file.idx) ?? file.path) ===
      targetPath(outputDir, item, file.path, file.idx, take.files.length),
  );
}

/** The batch's item rows and attempts, as a run reads them at its start. */
export interface BatchRows {
  records: Map<string, ItemRecord>;
  attempts: AttemptRecord[];
}

export async function batchRows(
  ledger: Pick<RunContext['deps']['ledger'], 'listItems' | 'listAttempts'>,
): Promise<BatchRows> {
  return {
    records: new Map((await ledger.listItems()).map((record) => [record.itemId, record])),
    attempts: await ledger.listAttempts(),
  };
}

/** Whether the run would pay for the item, or holds it expired: then a saved take of its request answers it. */
function wantsTake(
  run: RunContext,
  item: ManifestItem,
  record: ItemRecord | undefined,
  attempt: AttemptRecord | undefined,
): boolean {
  if (run.options.redo?.includes(item.id)) return false;
  const { hash } = currentRequest(item, record, attempt, (whole) => whole);
  const plan = planItem(hash, record, attempt, {
    regenerateExpired: run.options.regenerateExpired,
    retryFailed: run.options.retryFailed ?? false,
    promptLeft: () => run.rejections.fallbackLeft(item),
  });
  if (plan.label === 'expired') return true;
  if (plan.action !== 'submit') return false;
  // A job of the earlier request still running or unsaved is followed first: it was paid for.
  const earlier = earlierOutput(hash, attempt);
  return earlier === 'preserve' || earlier === 'nothing';
}

/** The first take whose every file is where the ledger says, with its size and SHA-256. */
async function firstIntact(
  run: RunContext,
  index: TakeIndex,
  takes: readonly ReusableTake[],
): Promise<ReusableTake | null> {
  for (const take of takes) {
    let intact = true;
    for (const file of take.files) {
      const path = index.pathOf(take.attemptId, file.idx) ?? file.path;
      if ((await run.deps.store.check({ path, bytes: file.bytes, sha256: file.sha256 })) !== 'intact') {
        intact = false;
        break;
      }
    }
    if (intact) return take;
  }
  return null;
}

/** Each item's next attempt number and take number, as a reuse adds attempts. */
class AttemptNumbers {
  readonly #seq = new Map<string, number>();
  readonly #take = new Map<string, number>();

  constructor(attempts: readonly AttemptRecord[]) {
    for (const attempt of attempts) {
      this.#seq.set(attempt.itemId, Math.max(this.#seq.get(attempt.itemId) ?? 0, attempt.seq));
      this.#take.set(attempt.itemId, Math.max(this.#take.get(attempt.itemId) ?? 0, attempt.take ?? 1));
    }
  }

  next(itemId: string): { seq: number; take: number } {
    const seq = (this.#seq.get(itemId) ?? 0) + 1;
    const take = (this.#take.get(itemId) ?? 0) + 1;
    this.#seq.set(itemId, seq);
    this.#take.set(itemId, take);
    return { seq, take };
  }
}

/**
 * Copies the take's files to the item's own names, each after the file there (a take of the ledger's)
 * is preserved under its take name, then records the copy as the item's new take, done, in one step.
 */
async function placeTake(
  run: RunContext,
  item: ManifestItem,
  source: ReusableTake,
  numbers: AttemptNumbers,
  index: TakeIndex,
): Promise<ReusableTake> {
  const { ledger, manifest, observer, store } = run.deps;
  const placed: Array<Written & { idx: number; path: string; mtimeMs: number | null }> = [];
  for (const file of source.files) {
    const target = targetPath(manifest.outputDir, item, file.path, file.idx, source.files.length);
    const written = { bytes: file.bytes, sha256: file.sha256 };
    await store.refuseForeign(target, written, (path) => ledger.wroteFile(path));
    await preserveDisplaced(run, target, index);
    const from = index.pathOf(source.attemptId, file.idx) ?? file.path;
    const { mtimeMs } = await store.copySaved(from, target, written);
    placed.push({ idx: file.idx, path: target, ...written, mtimeMs });
  }
  const at = numbers.next(item.id);
  const attempt = await ledger.recordReusedTake({ ...copyRecord(run, item, at, source), files: placed });
  if (manifest.sidecars !== false) {
    // The sidecar describes the item's new take as the ledger does, as a later check rewrites it:
    // no job of its own (the copied take's sidecar names the job that made the bytes, and the
    // take_reused event names that take).
    const facts = await sidecarFactsOf(ledger, manifest.name, attempt, await run.keptMark(attempt));
    await store.ensureSidecars(facts, placed);
  }
  observer.log(
    'info',
    `${item.id}: the same request as take ${source.take} of ${source.itemId}${source.jobId ? ` (job ${source.jobId})` : ''}: its saved file copied, nothing to pay`,
  );
  return {
    ...source,
    itemId: item.id,
    attemptId: attempt.id,
    take: at.take,
    requestBody: attempt.requestBody,
    files: placed,
  };
}

/** A copy of the take `from` as the item's take `at`, for the request the item sends now (a reuse's, a fetch's). */
export function copyRecord(
  run: RunContext,
  item: ManifestItem,
  at: { seq: number; take: number },
  from: ReusableTake,
): TakeToFetch {
  const body = buildRequestBody(
    run.deps.manifest.name,
    run.rejections.asSent(item),
    at.seq,
    item.maxCostMicros,
  );
  return {
    itemId: item.id,
    ...at,
    requestBody: body,
    requestHash: requestHash(item),
    vars: item.vars ? JSON.stringify(item.vars) : null,
    from,
  };
}

/**
 * A file of the ledger's at `target` (a take of this or another item) is preserved under its take name
 * before the copy takes its place, and the ledger and the index follow it there. One the disk has
 * lost is recorded there all the same: `status` then says it is missing, not that it is the copy.
 */
async function preserveDisplaced(run: RunContext, target: string, index: TakeIndex): Promise<void> {
  const { ledger, store } = run.deps;
  const [there] = await ledger.filesAt(target);
  if (there === undefined) return;
  const owner = await ledger.getAttempt(there.attemptId);
  const kept = takePath(target, owner.take ?? 1);
  await store.preserveEarlier(target, kept, there);
  await ledger.recordFileMoved(there.attemptId, there.idx, kept);
  index.moved(there.attemptId, there.idx, kept);
}

/** Where the item's file of this index goes: its own name, with the extension the take's file has. */
function targetPath(
  outputDir: string,
  item: ManifestItem,
  sourcePath: string,
  idx: number,
  count: number,
): string {
  const slash = Math.max(sourcePath.lastIndexOf('/'), sourcePath.lastIndexOf('\\'));
  const dot = sourcePath.lastIndexOf('.');
  const ext = dot > slash + 1 ? sourcePath.slice(dot) : '';
  const name = item.name ?? item.id;
  if (!isS3Uri(outputDir)) return namedOutputPath(outputDir, name, idx, count, ext);
  return `${outputDir}/${namedOutputPath('.', name, idx, count, ext).split('\\').join('/')}`;
}
