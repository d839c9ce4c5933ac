import pLimit from 'p-limit';
import type { CopyLedger, ImportedJob, RecordReads, RunLedger, TakeLedger } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { jobSnapshot } from '../../runner/job-snapshot.js';
import { sidecarFactsOf } from '../../runner/provenance.js';
import { jobItemId, requestHash } from '../../runner/request.js';
import type { MediaGenClient } from '../../service-client/client.js';
import type { Job } from '../../service-client/schemas.js';
import type { OutputStore } from '../../storage/output-store.js';
import { adoptCopies } from './adopt-copies.js';
import {
  type Adopted,
  adoptJobFiles,
  attemptsFound,
  type DiskOutputs,
  outputsOnDisk,
} from './adopt-files.js';
import {
  type ImportedAttempt,
  type ImportPlan,
  importedItemState,
  planImport,
  type SaveResult,
} from './import-plan.js';

/** 1,000 pages of 100: far beyond any batch within 48 hours, yet a bound on a runaway listing. */
const MAX_PAGES = 1000;

export interface Listing {
  jobs: Job[];
  /** Jobs of every manifest the listing went through. */
  listed: number;
  pages: number;
  /** The page bound was reached before the end of the list. */
  truncated: boolean;
}

/** Every page of GET /jobs since `since`, all statuses, keeping the jobs of this manifest. */
export async function listManifestJobs(
  client: MediaGenClient,
  manifestName: string,
  since: Date,
  maxPages = MAX_PAGES,
): Promise<Listing> {
  const listing: Listing = { jobs: [], listed: 0, pages: 0, truncated: false };
  for await (const page of client.listJobPages({ created_after: since.toISOString(), limit: 100 })) {
    listing.pages += 1;
    listing.listed += page.data.data.length;
    for (const job of page.data.data) if (jobItemId(job, manifestName) !== null) listing.jobs.push(job);
    if (listing.pages >= maxPages && page.data.has_more) {
      listing.truncated = true;
      break;
    }
  }
  return listing;
}

export interface ItemImport {
  itemId: string;
  job: Job | null;
  jobs: number;
  save: SaveResult | null;
  files: string[];
  /** Why the files were not saved, when they were not. */
  problem: string | null;
  /** The files were found on disk by their sidecars (not downloaded); how many were copied back. */
  onDisk: boolean;
  copied: number;
}

export interface ImportResult {
  plan: ImportPlan;
  items: ItemImport[];
  /** Outputs found on disk and recorded as saved (every adopted job's, earlier takes too), and of them copied back. */
  foundOnDisk: number;
  copied: number;
}

type ImportDeps = {
  client: MediaGenClient;
  ledger: RunLedger & RecordReads & TakeLedger & CopyLedger;
  manifest: Manifest;
  store: OutputStore;
  /** Folders the outputs may have been moved to (`filesFrom`): found there, they are copied back. */
  filesFrom?: readonly string[];
  timeoutMs?: number;
};

/** What writing the plan leaves for the saving step: each item's adopted attempt and its job count. */
interface RecordedPlan {
  attemptIds: Map<string, number>;
  jobCounts: Map<string, number>;
  /** What adopting each job's files found on disk came to, by job id. */
  fromDisk: Map<string, Adopted>;
}

/**
 * Writes the plan into the fresh ledger in one transaction, then saves the adopted outputs (four
 * at a time, like a run) and settles each item's state from what was saved.
 */
export async function importJobs(deps: ImportDeps, listed: readonly Job[]): Promise<ImportResult> {
  const { ledger, manifest } = deps;
  const plan = planImport(manifest.name, manifest.items, listed);
  const disk = await outputsOnDisk(manifest, deps.filesFrom ?? [], plan);
  const { recorded, byJob } = await recordPlan(ledger, manifest, plan, attemptsFound(disk));
  await adoptFromDisk(deps, plan, disk, byJob, recorded.fromDisk);
  const limit = pLimit(4);
  const items = await Promise.all(
    manifest.items.map((item) => limit(() => importItem(deps, item.id, plan, recorded))),
  );
  // Copies last: an item's state settled from its own job above, its copy then stands for it.
  let foundOnDisk = await adoptCopies(ledger, manifest, byJob);
  let copied = 0;
  for (const adopted of recorded.fromDisk.values())
    if (adopted.kind === 'saved') {
      foundOnDisk += adopted.files.length;
      copied += adopted.copied;
    }
  return { plan, items, foundOnDisk, copied };
}

/** Every job whose files were found on disk gets them recorded as saved, before anything is downloaded. */
async function adoptFromDisk(
  deps: ImportDeps,
  plan: ImportPlan,
  disk: DiskOutputs,
  byJob: ReadonlyMap<string, number>,
  fromDisk: Map<string, Adopted>,
): Promise<void> {
  const items = new Map(deps.manifest.items.map((item) => [item.id, item]));
  for (const entry of plan.attempts) {
    const outputs = disk.found.get(entry.job.id);
    if (outputs === undefined) continue;
    const item = items.get(entry.itemId);
    const target = item
      ? { outputDir: deps.manifest.outputDir, name: item.name ?? item.id, current: entry.adopted }
      : null;
    fromDisk.set(entry.job.id, await adoptJobFiles(deps.ledger, byJob.get(entry.job.id)!, outputs, target));
  }
}

/** Every listed job as an accepted attempt, and a pending item for each item that has one. */
async function recordPlan(
  ledger: RunLedger & RecordReads & CopyLedger,
  manifest: Manifest,
  plan: ImportPlan,
  found: ReadonlyMap<string, Partial<ImportedJob>>,
): Promise<{ recorded: RecordedPlan; byJob: Map<string, number> }> {
  const hashes = new Map(manifest.items.map((item) => [item.id, requestHash(item)]));
  const attemptIds = new Map<string, number>();
  const jobCounts = new Map<string, number>();
  const byJob = new Map<string, number>();
  for (const entry of plan.attempts) jobCounts.set(entry.itemId, (jobCounts.get(entry.itemId) ?? 0) + 1);
  const attempts = await ledger.recordImportedJobs(
    // A job whose output was found on disk keeps what its sidecar recorded of the attempt.
    plan.attempts.map((entry) => ({
      ...importedAttempt(entry, hashes.get(entry.itemId)),
      ...found.get(entry.job.id),
    })),
    manifest.items
      .filter((item) => jobCounts.has(item.id))
      .map((item) => ({ itemId: item.id, requestHash: hashes.get(item.id)!, state: 'pending' as const })),
  );
  plan.attempts.forEach((entry, index) => {
    const attempt = attempts[index]!;
    byJob.set(entry.job.id, attempt.id);
    if (entry.adopted) attemptIds.set(entry.itemId, attempt.id);
  });
  return { recorded: { attemptIds, jobCounts, fromDisk: new Map() }, byJob };
}

function importedAttempt(entry: ImportedAttempt, hash: string | undefined): ImportedJob {
  return {
    itemId: entry.itemId,
    seq: entry.seq,
    requestBody: JSON.stringify({
      model: entry.job.model,
      input: entry.job.input,
      metadata: entry.job.metadata,
    }),
    // A job of an older request keeps a hash of its own, so a run sees it answers no current item.
    requestHash: entry.current && hash ? hash : `imported:${entry.job.id}`,
    job: jobSnapshot(entry.job),
  };
}

/** Saves an item's adopted job when it succeeded, then settles the item's state from the result. */
async function importItem(
  deps: ImportDeps,
  itemId: string,
  plan: ImportPlan,
  { attemptIds, jobCounts, fromDisk }: RecordedPlan,
): Promise<ItemImport> {
  const job = plan.adopted.get(itemId) ?? null;
  const outcome: ItemImport = {
    itemId,
    job,
    jobs: jobCounts.get(itemId) ?? 0,
    save: null,
    files: [],
    problem: null,
    onDisk: false,
    copied: 0,
  };
  const found = job === null ? undefined : fromDisk.get(job.id);
  if (found?.kind === 'saved')
    Object.assign(outcome, { save: 'saved', files: found.files, onDisk: true, copied: found.copied });
  else if (job?.status === 'succeeded') await save(deps, job, attemptIds.get(itemId)!, outcome);
  const { state, errorCode } = importedItemState(job, outcome.save);
  if (outcome.jobs > 0) {
    await deps.ledger.setItemState(itemId, {
      state,
      errorCode,
      errorMessage: errorCode === null ? null : (job?.error?.message ?? null),
    });
  }
  return outcome;
}

async function save(deps: ImportDeps, job: Job, attemptId: number, outcome: ItemImport): Promise<void> {
  const { store, ledger } = deps;
  // The provenance beside each file, as a run leaves it: what was asked, which job, what it cost.
  const sidecar =
    deps.manifest.sidecars === false
      ? null
      : await sidecarFactsOf(ledger, deps.manifest.name, await ledger.getAttempt(attemptId));
  const result = await store
    .saveJob({
      job,
      itemId: outcome.itemId,
      name: outcome.itemId,
      // A file this ledger did not write is never replaced, unless it holds exactly these bytes.
      beforePlace: (target, written) =>
        store.refuseForeign(target, written, (path) => ledger.wroteFile(path)),
      refreshJob: async () => (await deps.client.getJob(job.id)).data,
      sidecar,
      ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
    })
    .catch((error: unknown) => ({ kind: 'error' as const, message: (error as Error).message }));
  if (result.kind === 'saved') {
    await ledger.recordFilesSaved(attemptId, result.files);
    outcome.save = 'saved';
    outcome.files = result.files.map((file) => file.path);
  } else if (result.kind === 'expired') outcome.save = 'expired';
  else {
    outcome.save = 'not_saved';
    outcome.problem = result.message;
  }
}
