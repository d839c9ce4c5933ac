import type { Exchange, Reply, WrongLength } from './exchange.js';
import { draw, parseMarkers } from './faults.js';
import { fail } from './http-error.js';
import { type StoredJob, viewJob } from './lifecycle.js';

/**
 * GET /v1/files/{jobId}/{index}?expires=..&sig=..: unauthenticated, like a storage bucket's signed
 * URL. The signature is checked before anything else so that a bad URL reveals nothing about jobs.
 */
export function download(ex: Exchange, jobId: string, index: number): Reply {
  const { store, now, query } = ex;
  const expiresMs = store.signer.verify(jobId, index, query.get('expires'), query.get('sig'));
  if (expiresMs === null) throw fail.badSignature();
  if (now >= expiresMs) throw fail.urlExpired();
  const job = store.job(jobId);
  if (!job || index !== 0) throw fail.fileNotFound();
  ex.record.jobId = job.id;
  const view = viewJob(job, now);
  if (!view.outputAvailable) throw view.status === 'succeeded' ? fail.outputExpired() : fail.fileNotFound();

  if (store.markers.take(job.prompt, parseMarkers(job.prompt), 'url-expired')) throw fail.urlExpired();
  const config = store.config;
  const attempt = store.count('download', job.id, index);
  const cut =
    store.markers.take(job.prompt, parseMarkers(job.prompt), 'cut-download') !== null ||
    draw(config.seed, job.workspaceId, job.idempotencyKey, index, attempt, 'download_cut') <
      config.faults.download_cut;
  return { kind: 'file', bytes: store.video(job), cut, wrongLength: wrongLength(ex, job, index, attempt) };
}

function wrongLength(ex: Exchange, job: StoredJob, index: number, attempt: number): WrongLength {
  const { store } = ex;
  const markers = parseMarkers(job.prompt);
  if (store.markers.take(job.prompt, markers, 'short-body')) return 'short';
  if (store.markers.take(job.prompt, markers, 'long-body')) return 'long';
  const { seed, faults } = store.config;
  const scope = [job.workspaceId, job.idempotencyKey, index, attempt] as const;
  if (draw(seed, ...scope, 'download_wrong_length') >= faults.download_wrong_length) return null;
  return draw(seed, ...scope, 'download_wrong_length_side') < 0.5 ? 'short' : 'long';
}
