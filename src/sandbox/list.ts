import { type JobStatus, jobStatusSchema } from '../service-client/schemas.js';
import { type Exchange, json, type Reply } from './exchange.js';
import { fail } from './http-error.js';
import { type StoredJob, viewJob } from './lifecycle.js';
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

  const matches: StoredJob[] = [];
  for (const job of store.jobs()) {
    if (job.workspaceId !== workspaceId) continue;
    if (apiKeyId !== null && job.apiKeyId !== apiKeyId) continue;
    if (createdAfter !== null && job.createdAt < createdAfter) continue;
    if (createdBefore !== null && job.createdAt >= createdBefore) continue;
    if (cursor !== null && !before(job, cursor)) continue;
    if (statuses !== null && !statuses.has(viewJob(job, now).status)) continue;
    matches.push(job);
  }
  matches.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
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
