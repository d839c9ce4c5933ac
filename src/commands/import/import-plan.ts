import { canonicalJson } from '../../canonical-json.js';
import type { ItemState } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { jobItemId } from '../../runner/request.js';
import type { Job } from '../../service-client/schemas.js';

/**
 * Pure decisions of `mediabatch import` (docs/import.md): which listed jobs belong to which item,
 * which one each item adopts, and in what order they enter a fresh ledger.
 */

export type UnmatchedReason = 'unknown_item' | 'changed_request';

export interface ImportedAttempt {
  itemId: string;
  /** Attempt number in the new ledger; the adopted job gets the highest of its item. */
  seq: number;
  job: Job;
  /** The job answers the item's current request (model, input, metadata). */
  current: boolean;
  adopted: boolean;
}

export interface ImportPlan {
  /** Every job of the manifest, in the order it enters the ledger (an item's adopted job last). */
  attempts: ImportedAttempt[];
  /** Manifest item id -> its adopted job. */
  adopted: Map<string, Job>;
  /** Jobs of the manifest that answer no current item: charged all the same, so recorded too. */
  unmatched: Array<{ job: Job; itemId: string; reason: UnmatchedReason }>;
}

const PREFIX = 'mediabatch.';

/** The attempt number mediabatch wrote into the job's metadata, 0 when absent or malformed. */
export function metadataAttempt(job: Job): number {
  const text = job.metadata[`${PREFIX}attempt`];
  return typeof text === 'string' && /^[1-9]\d{0,8}$/.test(text) ? Number(text) : 0;
}

/**
 * The job was made from the item as the manifest now states it. The service echoes input and
 * metadata unchanged, so equal canonical JSON is the test; a null model means the service default.
 */
export function matchesRequest(job: Job, item: ManifestItem): boolean {
  if (item.model !== null && job.model !== item.model) return false;
  if (canonicalJson(job.input) !== canonicalJson(item.input)) return false;
  const userMetadata = Object.fromEntries(
    Object.entries(job.metadata).filter(([key]) => !key.startsWith(PREFIX)),
  );
  return canonicalJson(userMetadata) === canonicalJson(item.metadata);
}

/** Lower is better: a result in hand, then a result on its way, then a failure to learn from. */
function rank(job: Job): number {
  if (job.status === 'succeeded') return job.output.files.length > 0 ? 0 : 1;
  if (job.status === 'running' || job.status === 'queued') return 2;
  return 3;
}

const newestFirst = (a: Job, b: Job): number =>
  Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const oldestFirst = (a: Job, b: Job): number => newestFirst(b, a);

/** Succeeded first (outputs still there before expired ones), then running/queued, then failed; newest wins ties. */
export function chooseAdopted(jobs: readonly Job[]): Job | null {
  return [...jobs].sort((a, b) => rank(a) - rank(b) || newestFirst(a, b))[0] ?? null;
}

/**
 * Numbers one item's jobs oldest first with `last` at the end. The last gets a number at least as
 * high as any `mediabatch.attempt` seen, so the next run's attempt number is new on the service too.
 */
function numbered(jobs: readonly Job[], last: Job | null): Array<{ job: Job; seq: number }> {
  const ordered = [...jobs.filter((job) => job !== last).sort(oldestFirst), ...(last ? [last] : [])];
  const highest = Math.max(0, ...jobs.map(metadataAttempt));
  return ordered.map((job, index) => ({
    job,
    seq: index === ordered.length - 1 ? Math.max(index + 1, highest) : index + 1,
  }));
}

export function planImport(
  manifestName: string,
  items: readonly ManifestItem[],
  listed: readonly Job[],
): ImportPlan {
  const byId = new Map(items.map((item) => [item.id, item]));
  const jobsByItem = new Map<string, Job[]>();
  const seen = new Set<string>();
  for (const job of listed) {
    const itemId = jobItemId(job, manifestName);
    if (itemId === null || seen.has(job.id)) continue;
    seen.add(job.id);
    jobsByItem.set(itemId, [...(jobsByItem.get(itemId) ?? []), job]);
  }
  const plan: ImportPlan = { attempts: [], adopted: new Map(), unmatched: [] };
  for (const [itemId, jobs] of jobsByItem) {
    const item = byId.get(itemId);
    const current = item ? jobs.filter((job) => matchesRequest(job, item)) : [];
    const adopted = chooseAdopted(current);
    if (item && adopted) plan.adopted.set(itemId, adopted);
    for (const job of jobs) {
      if (!current.includes(job))
        plan.unmatched.push({ job, itemId, reason: item ? 'changed_request' : 'unknown_item' });
    }
    // Without an adopted job the newest one goes last, so a next run follows it while it runs.
    const last = adopted ?? [...jobs].sort(newestFirst)[0] ?? null;
    for (const { job, seq } of numbered(jobs, last)) {
      plan.attempts.push({ itemId, seq, job, current: current.includes(job), adopted: job === adopted });
    }
  }
  return plan;
}

export type SaveResult = 'saved' | 'expired' | 'not_saved';

/** The item's state in the new ledger, from its adopted job and what became of its files. */
export function importedItemState(
  job: Job | null,
  save: SaveResult | null,
): { state: ItemState; errorCode: string | null } {
  if (job === null) return { state: 'pending', errorCode: null };
  if (job.status === 'queued' || job.status === 'running') return { state: 'in_flight', errorCode: null };
  if (job.status === 'canceled') return { state: 'failed', errorCode: 'canceled' };
  if (job.status === 'failed') return { state: 'failed', errorCode: job.error?.code ?? 'unknown' };
  if (save === 'saved') return { state: 'done', errorCode: null };
  if (save === 'expired') return { state: 'expired', errorCode: 'expired' };
  // Not saved yet: the next run fetches the job again and downloads while the output exists.
  return { state: 'in_flight', errorCode: null };
}
