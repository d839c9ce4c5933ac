import { stat } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { candidateFiles, type FoundCopy, findCopies } from '../../downloads/files-on-disk.js';
import type { RecordReads, TakeLedger } from '../../ledger/index.js';
import { isS3Uri, type Manifest, namedOutputPath, outputChild } from '../../manifest/index.js';
import { buildRequestBody, requestHash } from '../../runner/request.js';
import { manifestVariants, requestKey, requestKeyOfBody, variantOfItem } from '../../runner/request-key.js';

/**
 * `import` adopting the copies a lost ledger made (docs/import.md, "Outputs found on disk"): a take
 * copied from another (docs/results.md, "The record of a result") has no job of its own, and its
 * sidecar names the job that made its bytes. Found at its item's own name, with the bytes its
 * sidecar records, a job this import adopted and the very request the item asks for now, it is
 * recorded as the item's current take pointing at that job's attempt: done, nothing to pay, never
 * a stranger. Returns how many files were adopted this way.
 */
export async function adoptCopies(
  ledger: RecordReads & TakeLedger,
  manifest: Manifest,
  /** Each adopted job's attempt in the new ledger. */
  byJob: ReadonlyMap<string, number>,
): Promise<number> {
  if (isS3Uri(manifest.outputDir) || manifest.items.length === 0) return 0;
  const folders = new Set(
    manifest.items.map((item) => dirname(outputChild(manifest.outputDir, item.name ?? item.id))),
  );
  const copies = await findCopies(
    [...folders].flatMap((folder) => candidateFiles(folder, false)),
    manifest.name,
  );
  const items = new Map(manifest.items.map((item) => [item.id, item]));
  const variants = manifestVariants(manifest.items);
  const seqs = new Map<string, number>();
  for (const attempt of await ledger.listAttempts())
    seqs.set(attempt.itemId, Math.max(seqs.get(attempt.itemId) ?? 0, attempt.seq));
  let adopted = 0;
  for (const copy of copies) {
    const item = items.get(copy.itemId);
    const resultId = byJob.get(copy.jobId);
    if (item === undefined || resultId === undefined || !atOwnName(manifest, item.name ?? item.id, copy))
      continue;
    const result = await ledger.getAttempt(resultId);
    // The copy answers the item only if its result was made for the request the item asks for now.
    if (requestKeyOfBody(result.requestBody, variantOfItem(variants, result.itemId)) !== requestKey(item))
      continue;
    const seq = (seqs.get(item.id) ?? 0) + 1;
    seqs.set(item.id, seq);
    const { mtimeMs } = await stat(copy.path);
    await ledger.recordReusedTake({
      itemId: item.id,
      seq,
      take: copy.take,
      requestBody: buildRequestBody(manifest.name, item, seq, item.maxCostMicros),
      requestHash: requestHash(item),
      vars: item.vars ? JSON.stringify(item.vars) : null,
      from: { ...result, attemptId: result.id, take: result.take ?? 1 },
      files: [{ idx: 0, path: copy.path, bytes: copy.bytes, sha256: copy.sha256, mtimeMs }],
    });
    adopted += 1;
  }
  return adopted;
}

/** Whether the copy lies at its item's own name (its current take), not at an earlier take's. */
function atOwnName(manifest: Manifest, name: string, copy: FoundCopy): boolean {
  const ext = extname(copy.path).slice(1) || 'bin';
  return namedOutputPath(manifest.outputDir, name, 0, 1, ext) === copy.path;
}
