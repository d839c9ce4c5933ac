import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { formatUsd } from '../money.js';
import { isPlainObject } from '../plain-object.js';
import type { SandboxConfig } from './config.js';
import { sampleSeconds } from './durations.js';
import { type Exchange, header, json, type Reply, retryAfterHeader } from './exchange.js';
import { draw, type MarkerKind, type PromptMarkers, parseMarkers, pickCode } from './faults.js';
import { fail } from './http-error.js';
import { type FinalStatus, planTimeline, type StoredJob, type Timeline } from './lifecycle.js';
import { type ClipFault, clipShape } from './mp4.js';
import { priceMicros } from './pricing.js';
import { type ValidSubmission, validateSubmission } from './validate.js';
import { wireJob } from './wire.js';

type Key = SandboxConfig['keys'][number];

const MAX_KEY_LENGTH = 255;

/** What identifies one POST: the caller's key, its Idempotency-Key, and the prompt's fault markers. */
interface Post {
  key: Key;
  idempotencyKey: string;
  prompt: string;
  markers: PromptMarkers;
}

/** The configured fault rates a POST can draw against, named as in the config. */
type PostFault = 'drop_before_store' | 'http500_before_store' | 'drop_after_store' | 'http500_after_store';

/**
 * POST /videos/generation. The order of checks matters to clients: the Idempotency-Key lookup
 * comes before validation, billing and the concurrency limit, so that retrying an accepted request
 * always returns its job, even once the workspace is full or out of money.
 */
export function submit(ex: Exchange, key: Key): Reply {
  const { store, now } = ex;
  const body = readJsonBody(ex);
  const post = readPost(ex, key, body);
  const strikes = faultStrikes(ex, post);

  // Faults "before store" come ahead of the key lookup, so a retry that would replay can fail too,
  // as it can against a real server; each POST of a key draws afresh, so retries eventually pass.
  if (strikes('drop-before', 'drop_before_store')) return { kind: 'drop' };
  if (strikes('500-before', 'http500_before_store')) throw fail.internal();

  // Key order and whitespace do not make two bodies different requests.
  const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
  const known = store.remembered(key.workspace, post.idempotencyKey, now);
  if (known) {
    if (known.bodyHash !== bodyHash) throw fail.idempotencyKeyReused();
    ex.record.jobId = known.id;
    return json(202, wireJob(store, known, now, ex.origin));
  }

  const valid = validateSubmission(body, store.config);
  const cost = affordableCost(ex, post, valid);
  const job = storeJob(ex, post, { bodyHash, valid, cost });
  ex.record.jobId = job.id;

  if (strikes('drop-after', 'drop_after_store')) return { kind: 'drop' };
  if (strikes('500-after', 'http500_after_store')) throw fail.internal();
  return json(202, wireJob(store, job, now, ex.origin));
}

function readJsonBody(ex: Exchange): Record<string, unknown> {
  const contentType = header(ex.req, 'content-type');
  if (contentType === undefined) throw fail.missingParameter('Content-Type');
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw fail.invalidParameter('Content-Type', 'Content-Type must be application/json.');
  }
  let body: unknown;
  try {
    body = JSON.parse(ex.bodyText);
  } catch {
    throw fail.invalidJson();
  }
  if (!isPlainObject(body)) throw fail.invalidJson('The request body must be a JSON object.');
  return body;
}

function readPost(ex: Exchange, key: Key, body: Record<string, unknown>): Post {
  const idempotencyKey = header(ex.req, 'idempotency-key')?.trim();
  if (!idempotencyKey) {
    throw fail.missingParameter('Idempotency-Key', 'The Idempotency-Key header is required.');
  }
  if (idempotencyKey.length > MAX_KEY_LENGTH) {
    throw fail.invalidParameter(
      'Idempotency-Key',
      `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters.`,
    );
  }
  const prompt = isPlainObject(body.input) && typeof body.input.prompt === 'string' ? body.input.prompt : '';
  return { key, idempotencyKey, prompt, markers: parseMarkers(prompt) };
}

/**
 * Whether a fault strikes this POST: a marker in the prompt forces it once, otherwise a draw against
 * the configured rate. The draw counts this POST of the key, so each resend draws afresh.
 */
function faultStrikes(ex: Exchange, post: Post): (kind: MarkerKind, fault: PostFault) => boolean {
  const { store } = ex;
  const config = store.config;
  const workspaceId = post.key.workspace;
  const count = store.count('post', workspaceId, post.idempotencyKey);
  return (kind, fault) =>
    store.markers.take(post.prompt, post.markers, kind) !== null ||
    draw(config.seed, workspaceId, post.idempotencyKey, count, fault) < config.faults[fault];
}

/** The job's price, once the wallet, max_cost_usd, the balance and the concurrency limit allow it. */
function affordableCost(ex: Exchange, post: Post, valid: ValidSubmission): number {
  const { store, now } = ex;
  const config = store.config;
  const workspaceId = post.key.workspace;
  const workspace = store.workspace(workspaceId);
  if (!workspace.wallet_enabled) throw fail.walletNotEnabled();
  const cost = post.markers.costMicros ?? priceMicros(config, valid.priced);
  if (valid.maxCostMicros !== null && cost > valid.maxCostMicros) {
    throw fail.maxCostExceeded(
      `The job costs ${formatUsd(cost)} USD, more than max_cost_usd ${formatUsd(valid.maxCostMicros)}.`,
    );
  }
  const balance = store.balanceMicros(workspaceId, now);
  if (balance <= 0 || balance < cost) {
    throw fail.insufficientBalance(
      `The job costs ${formatUsd(cost)} USD; the balance is ${formatUsd(balance)} USD.`,
    );
  }
  if (store.activeJobs(workspaceId, now) >= workspace.concurrency_limit) {
    throw fail.concurrencyLimited(retryAfterHeader(config), workspace.concurrency_limit);
  }
  return cost;
}

function storeJob(
  ex: Exchange,
  post: Post,
  accepted: { bodyHash: string; valid: ValidSubmission; cost: number },
): StoredJob {
  const { store, now } = ex;
  const config = store.config;
  const { key, idempotencyKey, prompt, markers } = post;
  const { valid } = accepted;
  // Counted per creation, not per POST: a key the service forgot starts a new job with new draws.
  const creation = store.creations(key.workspace, idempotencyKey) + 1;
  const random = (purpose: string) => draw(config.seed, key.workspace, idempotencyKey, creation, purpose);
  const timeline = decideTimeline(ex, markers, prompt, random);
  return store.insert({
    workspaceId: key.workspace,
    apiKeyId: key.id,
    idempotencyKey,
    bodyHash: accepted.bodyHash,
    prompt,
    model: valid.model,
    input: valid.input,
    metadata: valid.metadata,
    amountMicros: accepted.cost,
    createdAt: now,
    retentionMs: Math.round(config.retention_seconds * 1000),
    clip: clipShape(valid.input, config.input, clipFault(ex, post, timeline, random)),
    ...timeline,
    ...(refundWithheld(ex, post, timeline, random) ? { refundWithheld: true } : {}),
  });
}

/** The clip faults, each a marker or else a rate, in this order: the first that applies wins. */
const CLIP_FAULTS: ReadonlyArray<
  readonly [ClipFault, MarkerKind, 'short_clip' | 'wrong_size' | 'truncated_file']
> = [
  ['short', 'short-clip', 'short_clip'],
  ['wrong_size', 'wrong-size', 'wrong_size'],
  ['truncated', 'truncated', 'truncated_file'],
];

/** What is wrong with a succeeded job's clip (docs/sandbox.md), decided once at acceptance. */
function clipFault(ex: Exchange, post: Post, timeline: Timeline, random: (purpose: string) => number) {
  if (timeline.outcome.status !== 'succeeded') return null;
  const { store } = ex;
  for (const [fault, marker, rate] of CLIP_FAULTS) {
    const forced = store.markers.take(post.prompt, post.markers, marker) !== null;
    if (forced || random(rate) < store.config.faults[rate]) return fault;
  }
  return null;
}

/** A failed or canceled job left charged: the `[[no-refund]]` marker, else the `refund_missing` rate. */
function refundWithheld(ex: Exchange, post: Post, timeline: Timeline, random: (purpose: string) => number) {
  if (timeline.outcome.status === 'succeeded') return false;
  const { store } = ex;
  return (
    store.markers.take(post.prompt, post.markers, 'no-refund') !== null ||
    random('refund_missing') < store.config.faults.refund_missing
  );
}

const finalStatus = (code: string): FinalStatus => (code === 'canceled' ? 'canceled' : 'failed');

/** Fixes the job's future at acceptance: rejected at once, or queued, running, then its outcome. */
function decideTimeline(
  ex: Exchange,
  markers: PromptMarkers,
  prompt: string,
  random: (purpose: string) => number,
): Timeline {
  const { store, now } = ex;
  const config = store.config;
  const rejected =
    store.markers.take(prompt, markers, 'reject')?.code ??
    pickCode(config.faults.submit_failures, random('submit_failures'));
  if (rejected !== null) {
    return { startAt: now, finalAt: now, outcome: { status: finalStatus(rejected), code: rejected } };
  }
  const failed =
    store.markers.take(prompt, markers, 'fail')?.code ??
    pickCode(config.faults.job_failures, random('job_failures'));
  const runningSeconds =
    markers.runSeconds ??
    sampleSeconds(config.running_seconds, (i) => random(i === 0 ? 'running_seconds' : 'running_seconds:1'));
  const queuedSeconds =
    markers.queuedSeconds ?? sampleSeconds(config.queued_seconds, (i) => random(`queued_seconds:${i}`));
  const timeoutMs = Math.round(config.job_timeout_seconds * 1000);
  return planTimeline(
    now,
    {
      queuedMs: Math.round(queuedSeconds * 1000),
      // A `timeout` fault is a job that never produces a result, so it hits the time limit itself.
      runningMs: failed === 'timeout' ? Number.POSITIVE_INFINITY : Math.round(runningSeconds * 1000),
      outcome:
        failed === null ? { status: 'succeeded', code: null } : { status: finalStatus(failed), code: failed },
    },
    timeoutMs,
  );
}
