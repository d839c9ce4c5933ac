import { formatUsd } from '../money.js';
import { download } from './download.js';
import { type Exchange, header, json, type Reply, retryAfterHeader } from './exchange.js';
import { fail } from './http-error.js';
import { viewJob } from './lifecycle.js';
import { listJobs } from './list.js';
import { submit } from './submit.js';
import { wireJob } from './wire.js';

type Handler = (ex: Exchange, params: string[]) => Reply;

interface Route {
  pattern: RegExp;
  method: 'GET' | 'POST';
  /** Each handler authenticates itself: signed downloads carry their authority in the URL instead. */
  handle: Handler;
}

const authenticated = (ex: Exchange) => {
  const key = ex.store.authenticate(header(ex.req, 'authorization'));
  if (!key) throw fail.invalidApiKey();
  ex.record.keyId = key.id;
  return key;
};

const ROUTES: Route[] = [
  {
    pattern: /^\/v1\/videos\/generation$/,
    method: 'POST',
    handle: (ex) => submit(ex, authenticated(ex)),
  },
  {
    pattern: /^\/v1\/jobs$/,
    method: 'GET',
    handle: (ex) => listJobs(ex, authenticated(ex).workspace),
  },
  {
    pattern: /^\/v1\/jobs\/([^/]+)$/,
    method: 'GET',
    handle: (ex, [jobId]) => {
      const key = authenticated(ex);
      const job = ex.store.job(jobId ?? '');
      if (!job || job.workspaceId !== key.workspace) throw fail.jobNotFound();
      ex.record.jobId = job.id;
      const final = viewJob(job, ex.now).final;
      const headers = final ? undefined : { 'retry-after': retryAfterHeader(ex.store.config) };
      return json(200, wireJob(ex.store, job, ex.now, ex.origin), headers);
    },
  },
  {
    pattern: /^\/v1\/account$/,
    method: 'GET',
    handle: (ex) => {
      const { store, now } = ex;
      const workspace = store.workspace(authenticated(ex).workspace);
      return json(200, {
        object: 'account',
        balance: {
          amount_usd: formatUsd(store.balanceMicros(workspace.id, now)),
          enabled: workspace.wallet_enabled,
        },
        concurrency: { active: store.activeJobs(workspace.id, now), limit: workspace.concurrency_limit },
      });
    },
  },
  {
    pattern: /^\/v1\/files\/([^/]+)\/(\d{1,6})$/,
    method: 'GET',
    handle: (ex, [jobId, index]) => download(ex, jobId ?? '', Number(index)),
  },
];

export function route(ex: Exchange): Reply {
  for (const candidate of ROUTES) {
    const match = candidate.pattern.exec(ex.path);
    if (!match) continue;
    if (ex.req.method !== candidate.method) throw fail.methodNotAllowed(candidate.method);
    let params: string[];
    try {
      params = match.slice(1).map((part) => decodeURIComponent(part ?? ''));
    } catch {
      throw fail.routeNotFound(ex.req.method ?? 'GET', ex.path);
    }
    return candidate.handle(ex, params);
  }
  throw fail.routeNotFound(ex.req.method ?? 'GET', ex.path);
}
