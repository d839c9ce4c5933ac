import { type JobStatus, jobStatusSchema } from '../service-client/schemas.js';
import { type Exchange, json, type Reply } from './exchange.js';
import { fail } from './http-error.js';
import { type StoredJob, viewJob } from './lifecycle.js';
import type { SandboxStore } from './store.js';
import { wireJob } from './wire.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i;

interface Position {
  createdAt: number;
  seq: number;
}

/** Newest first; the creation sequence breaks ties so that pages never skip or repeat a job. */
const before = (job: Position, other: Position): boolean =>
  job.createdAt < other.createdAt || (job.createdAt === other.createdAt && job.seq < other.seq);

/**
 * The cursor is the position of the last job of the page (keyset paging), so jobs created while a
 * client pages through cannot shift later pages.
 */
const encodeCursor = (job: Position): string =>
  Buffer.from(JSON.stringify({ v: 1, t: job.createdAt, s: job.seq })).toString('base64url');

function decodeCursor(text: string): Position {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as {
      v?: unknown;
      t?: unknown;
      s?: unknown;
    };
    if (value.v === 1 && Number.isSafeInteger(value.t) && Number.isSafeInteger(value.s)) {
      return { createdAt: value.t as number, seq: value.s as number };
    }
  } catch {
    // falls through to the error below
  }
  throw fail.invalidParameter('cursor', 'cursor is not a next_cursor returned by this service.');
}

function parseTime(query: URLSearchParams, name: string): number | null {
  const text = query.get(name);
  if (text === null) return null;
  const time = ISO_DATE_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) throw fail.invalidParameter(name, `${name} must be an ISO 8601 date-time.`);
  return time;
}

function parseInteger(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const text = query.get(name);
  if (text === null) return null;
  const value = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw fail.invalidParameter(name, `${name} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function parseStatuses(query: URLSearchParams): Set<JobStatus> | null {
  const values = query.getAll('status');
  if (values.length === 0) return null;
  const statuses = new Set<JobStatus>();
  for (const part of values.join(',').split(',')) {
    const parsed = jobStatusSchema.safeParse(part.trim());
    if (!parsed.success) {
      throw fail.invalidParameter(
        'status',
        `status must be a comma-separated list of ${jobStatusSchema.options.join(', ')}.`,
      );
    }
    statuses.add(parsed.data);
  }
  return statuses;
}

/** GET /jobs: the workspace's jobs, filtered as of `now`, newest first, in keyset pages. */
export function listJobs(ex: Exchange, workspaceId: string): Reply {
  const { query, store, now } = ex;
  const statuses = parseStatuses(query);
  const apiKeyId = parseInteger(query, 'api_key_id', 1, Number.MAX_SAFE_INTEGER);
  const createdAfter = parseTime(query, 'created_after');
  const createdBefore = parseTime(query, 'created_before');
  const limit = parseInteger(query, 'limit', 1, 100) ?? 20;
  const cursorText = query.get('cursor');
  const cursor = cursorText === null ? null : decodeCursor(cursorText);
  const pageSize = Math.min(limit, store.config.page_size_cap ?? limit);

  const wanted = (job: StoredJob): boolean =>
    job.workspaceId === workspaceId &&
    (apiKeyId === null || job.apiKeyId === apiKeyId) &&
    (statuses === null || statuses.has(viewJob(job, now).status));
  // One more than the page tells whether there is a next page.
  const matches = newestMatches(store, { createdAfter, createdBefore, cursor }, wanted, pageSize + 1);
  const page = matches.slice(0, pageSize);
  const last = page.at(-1);
  const hasMore = matches.length > page.length && last !== undefined;
  return json(200, {
    object: 'list',
    data: page.map((job) => wireJob(store, job, now, ex.origin)),
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(last) : null,
  });
}

interface Window {
  createdAfter: number | null;
  createdBefore: number | null;
  cursor: Position | null;
}

/**
 * The `count` newest jobs in the window that `wanted` accepts, newest first. A pass over every job
 * ever made per page made each page cost the whole history: a run of 40,000 jobs against the
 * embedded sandbox (in the run's own process) spent ever more of its CPU listing as it went on, and
 * `audit`, which pages through every job, grew with their square. The jobs are kept in list order,
 * so the window's ends are found by bisection and the page is read from its newest end.
 */
function newestMatches(
  store: SandboxStore,
  window: Window,
  wanted: (job: StoredJob) => boolean,
  count: number,
): StoredJob[] {
  const { createdAfter, createdBefore, cursor } = window;
  const ordered = store.jobsInListOrder();
  if (ordered === null) {
    const inWindow = (job: StoredJob) =>
      (createdAfter === null || job.createdAt >= createdAfter) &&
      (createdBefore === null || job.createdAt < createdBefore) &&
      (cursor === null || before(job, cursor));
    const matches = store.jobs().filter((job) => inWindow(job) && wanted(job));
    return matches.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq).slice(0, count);
  }
  const from = createdAfter === null ? 0 : firstIndex(ordered, (job) => job.createdAt >= createdAfter);
  let to = ordered.length;
  if (createdBefore !== null) to = firstIndex(ordered, (job) => job.createdAt >= createdBefore);
  if (cursor !== null)
    to = Math.min(
      to,
      firstIndex(ordered, (job) => !before(job, cursor)),
    );
  const matches: StoredJob[] = [];
  for (let i = to - 1; i >= from && matches.length < count; i -= 1)
    if (wanted(ordered[i]!)) matches.push(ordered[i]!);
  return matches;
}

/** The first index whose job meets `after` (false up to some index, true from it on), by bisection. */
function firstIndex(jobs: readonly StoredJob[], after: (job: StoredJob) => boolean): number {
  let low = 0;
  let high = jobs.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (after(jobs[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}
