import type { AttemptRecord } from '../../ledger/index.js';
import { type Micros, parseUsd, parseUsdStrict } from '../../money.js';
import type { Job } from '../../service-client/schemas.js';

/**
 * The audit's rules (docs/audit.md): a batch's jobs as the service shows them, against what the
 * ledger recorded of them. Pure: the same answers give the same findings.
 */

export const AUDIT_PROBLEM_KINDS = [
  /** A failed or canceled job whose refunded_usd is not its amount_usd (the spec's refund rule). */
  'refund_missing',
  /** A job charged more than the max_cost_usd its request sent. */
  'over_max_cost',
  /** A job with the batch's metadata that the ledger never recorded: spend no one accounted for. */
  'not_in_ledger',
  /** A job the ledger recorded (and counts in its spend) that the service does not show. */
  'not_on_service',
  /** A final job whose charge or refund the ledger recorded otherwise than the service shows it. */
  'ledger_differs',
] as const;

export type AuditProblemKind = (typeof AUDIT_PROBLEM_KINDS)[number];

/** The problems whose amount the provider owes back; the others are spend nobody explained. */
export const OWED_KINDS: ReadonlySet<AuditProblemKind> = new Set(['refund_missing', 'over_max_cost']);

/** What the service answered to GET /jobs/{id} for one job the ledger knows. */
export type ServiceAnswer =
  | { kind: 'found'; job: Job; requestId: string | null }
  | { kind: 'not_found'; requestId: string | null };

/** One job the ledger knows (an attempt with a job id) and what the service said of it. */
export interface LedgerJob {
  attempt: AttemptRecord;
  answer: ServiceAnswer;
}

export interface AuditProblem {
  kind: AuditProblemKind;
  /** The item, by the ledger, else by the job's metadata. */
  itemId: string | null;
  jobId: string;
  /** The service's status, or the ledger's where the service does not show the job. */
  status: string | null;
  /** What is owed or unexplained: the missing refund, the charge over the cap, the net spend. */
  amountMicros: Micros;
  chargedMicros: Micros;
  refundedMicros: Micros;
  /** The max_cost_usd its request sent, where the ledger kept the request. */
  maxCostMicros: Micros | null;
  errorCode: string | null;
  createdAt: string | null;
  completedAt: string | null;
  /** The Idempotency-Key the ledger sent it with; null for a job it never recorded. */
  idempotencyKey: string | null;
  /** The X-Request-Id of the service's answer the audit read it from. */
  requestId: string | null;
}

/** The jobs of the workspace's job list, split by whose they are. */
export interface ListedJobs {
  /** Carrying the batch's `mediabatch.manifest`, and not in the ledger. */
  unrecorded: Job[];
  /** Other clients' jobs (other metadata): counted apart, never flagged. */
  others: Job[];
}

export interface AuditFindings {
  problems: AuditProblem[];
  /** The batch's net spend (charged minus refunded) by the service's records. */
  serviceNetMicros: Micros;
  /** The same by the ledger's. */
  ledgerNetMicros: Micros;
  /** Jobs the ledger knows, those the service showed, and those still queued or running there. */
  jobs: { ledger: number; found: number; unrecorded: number; unfinished: number };
  others: { jobs: number; netMicros: Micros };
}

const FINAL_FAILURES: ReadonlySet<string> = new Set(['failed', 'canceled']);
const FINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);

const netOf = (job: Job): Micros =>
  parseUsdStrict(job.cost.amount_usd) - parseUsdStrict(job.cost.refunded_usd);

/** Every rule over every job; `ledgerNetMicros` is the ledger's own sum (money-totals.ts). */
export function auditFindings(
  ledgerJobs: readonly LedgerJob[],
  listed: ListedJobs,
  ledgerNetMicros: Micros,
): AuditFindings {
  const problems: AuditProblem[] = [];
  let serviceNetMicros = 0;
  let found = 0;
  let unfinished = 0;
  for (const { attempt, answer } of ledgerJobs) {
    if (answer.kind === 'not_found') {
      problems.push(notOnService(attempt, answer.requestId));
      continue;
    }
    found += 1;
    serviceNetMicros += netOf(answer.job);
    if (!FINAL.has(answer.job.status)) unfinished += 1;
    problems.push(...jobProblems(answer.job, attempt, answer.requestId));
  }
  for (const job of listed.unrecorded) {
    serviceNetMicros += netOf(job);
    if (!FINAL.has(job.status)) unfinished += 1;
    problems.push(problemOf('not_in_ledger', job, null, netOf(job), null));
    problems.push(...jobProblems(job, null, null));
  }
  const othersNet = listed.others.reduce((sum, job) => sum + netOf(job), 0);
  return {
    problems,
    serviceNetMicros,
    ledgerNetMicros,
    jobs: { ledger: ledgerJobs.length, found, unrecorded: listed.unrecorded.length, unfinished },
    others: { jobs: listed.others.length, netMicros: othersNet },
  };
}

/** The rules over one job the service shows: its refund, its cap, the ledger's record of it. */
export function jobProblems(
  job: Job,
  attempt: AttemptRecord | null,
  requestId: string | null,
): AuditProblem[] {
  const problems: AuditProblem[] = [];
  const charged = parseUsdStrict(job.cost.amount_usd);
  const refunded = parseUsdStrict(job.cost.refunded_usd);
  if (FINAL_FAILURES.has(job.status) && refunded !== charged)
    problems.push(problemOf('refund_missing', job, attempt, charged - refunded, requestId));
  const cap = attempt === null ? null : maxCostOf(attempt.requestBody);
  if (cap !== null && charged > cap)
    problems.push(problemOf('over_max_cost', job, attempt, charged - cap, requestId));
  if (attempt !== null && FINAL.has(attempt.jobStatus ?? '') && FINAL.has(job.status)) {
    const recorded = attempt.amountMicros - attempt.refundedMicros;
    if (recorded !== charged - refunded)
      problems.push(problemOf('ledger_differs', job, attempt, charged - refunded - recorded, requestId));
  }
  return problems;
}

/** The max_cost_usd a recorded request body sent; null without one (or a body that is not JSON). */
export function maxCostOf(requestBody: string): Micros | null {
  try {
    const body = JSON.parse(requestBody) as { max_cost_usd?: unknown };
    return typeof body.max_cost_usd === 'string' ? parseUsd(body.max_cost_usd) : null;
  } catch {
    return null;
  }
}

function problemOf(
  kind: AuditProblemKind,
  job: Job,
  attempt: AttemptRecord | null,
  amountMicros: Micros,
  requestId: string | null,
): AuditProblem {
  const item = job.metadata['mediabatch.item'];
  return {
    kind,
    itemId: attempt?.itemId ?? (typeof item === 'string' ? item : null),
    jobId: job.id,
    status: job.status,
    amountMicros,
    chargedMicros: parseUsdStrict(job.cost.amount_usd),
    refundedMicros: parseUsdStrict(job.cost.refunded_usd),
    maxCostMicros: attempt === null ? null : maxCostOf(attempt.requestBody),
    errorCode: job.error?.code ?? null,
    createdAt: job.created_at,
    completedAt: job.completed_at,
    idempotencyKey: attempt?.idempotencyKey ?? null,
    requestId,
  };
}

function notOnService(attempt: AttemptRecord, requestId: string | null): AuditProblem {
  return {
    kind: 'not_on_service',
    itemId: attempt.itemId,
    jobId: attempt.jobId ?? '',
    status: attempt.jobStatus,
    amountMicros: attempt.amountMicros - attempt.refundedMicros,
    chargedMicros: attempt.amountMicros,
    refundedMicros: attempt.refundedMicros,
    maxCostMicros: maxCostOf(attempt.requestBody),
    errorCode: attempt.errorCode,
    createdAt: attempt.createdAt,
    completedAt: attempt.completedAt,
    idempotencyKey: attempt.idempotencyKey,
    requestId,
  };
}

/** Owed back by the provider, and spend nobody explained, over the findings' problems. */
export function auditSums(problems: readonly AuditProblem[]): {
  owedMicros: Micros;
  unexplainedMicros: Micros;
} {
  let owedMicros = 0;
  let unexplainedMicros = 0;
  for (const problem of problems) {
    if (OWED_KINDS.has(problem.kind)) owedMicros += problem.amountMicros;
    else unexplainedMicros += problem.amountMicros;
  }
  return { owedMicros, unexplainedMicros };
}
