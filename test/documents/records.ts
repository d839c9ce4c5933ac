import { type AttemptRecord, type ItemRecord, preparedAttempt } from '../../src/ledger/records.js';
import type { Manifest, ManifestItem } from '../../src/manifest/index.js';
import { requestHash } from '../../src/runner/request.js';

/** Plain ledger rows and manifests for the pure modules' unit tests: no file, no SQLite. */

let nextId = 0;
export function attempt(fields: Partial<AttemptRecord> & { body?: unknown }): AttemptRecord {
  nextId += 1;
  const { body, ...rest } = fields;
  // An accepted, succeeded attempt unless the test says otherwise.
  return {
    ...preparedAttempt({
      id: nextId,
      itemId: `item-${nextId}`,
      seq: 1,
      idempotencyKey: `mb_key_${nextId}`,
      requestBody: JSON.stringify(body ?? { input: { prompt: 'x', seconds: 6, definition: '720p' } }),
      requestHash: 'h',
      reservedMicros: 0,
      createdAt: '2030-01-01T00:00:00.000Z',
    }),
    state: 'accepted',
    httpStatus: 202,
    jobId: `job_${nextId}`,
    jobStatus: 'succeeded',
    ...rest,
  };
}

export function item(
  id: string,
  input: Record<string, unknown>,
  extra: Partial<ManifestItem> = {},
): ManifestItem {
  return { id, model: null, input: { prompt: id, ...input }, metadata: {}, maxCostMicros: null, ...extra };
}

export function manifest(items: ManifestItem[], budgetMicros: number | null = null): Manifest {
  return {
    file: '/work/batch.yaml',
    name: 'unit',
    budgetMicros,
    concurrency: null,
    retries: 2,
    outputDir: '/work/out/unit',
    items,
    warnings: [],
  };
}

/** The item's ledger row, up to date with the manifest unless `stale`. */
export function record(
  of: ManifestItem,
  state: ItemRecord['state'],
  extra: Partial<ItemRecord> = {},
): ItemRecord {
  return {
    itemId: of.id,
    requestHash: requestHash(of),
    state,
    retriesUsed: 0,
    errorCode: null,
    errorMessage: null,
    updatedAt: '2030-01-01T00:00:00.000Z',
    ...extra,
  };
}
