import { stringify } from 'csv-stringify/sync';
import { formatUsd, formatUsdHuman, humanUsd as human } from '../../money.js';
import { type AuditFindings, type AuditProblem, type AuditProblemKind, auditSums } from './audit-rules.js';

/** One problem the audit found, as `audit --json` and problems.csv say it (money: six-decimal strings). */
export interface AuditProblemEntry {
  kind: AuditProblemKind;
  item: string | null;
  job_id: string;
  status: string | null;
  /** What is owed or unexplained. */
  amount_usd: string;
  charged_usd: string;
  refunded_usd: string;
  max_cost_usd: string | null;
  error_code: string | null;
  created_at: string | null;
  completed_at: string | null;
  idempotency_key: string | null;
  /** The X-Request-Id of the service's answer the job was read from. */
  request_id: string | null;
  /** What is wrong, in words. */
  message: string;
}

/** What `audit` found (docs/audit.md): the `audit --json` document. */
export interface AuditDocument {
  manifest: string;
  /** The ledger, as people see it (a URL without its password). */
  ledger: string;
  audited_at: string;
  /** True when nothing is owed or unexplained and both net spends agree to the micro-dollar. */
  agrees: boolean;
  /** How audit ends: `done` when it agrees, else `unreconciled` (the CLI's exit 4). */
  outcome: 'done' | 'unreconciled';
  net_spend: { service_usd: string; ledger_usd: string; difference_usd: string };
  /** Refunds missing and charges over max_cost_usd: what the provider owes back. */
  owed_usd: string;
  /** Spend one side shows and the other does not explain. */
  unexplained_usd: string;
  jobs: AuditFindings['jobs'];
  /** Jobs of other clients of the workspace (other metadata), counted apart, never flagged. */
  others: { jobs: number; net_usd: string };
  problems: AuditProblemEntry[];
  /** The dispute bundle's folder, when one was written. */
  bundle: string | null;
}

export function auditDocument(
  findings: AuditFindings,
  about: { manifest: string; ledger: string; auditedAt: string; bundle: string | null },
): AuditDocument {
  const { owedMicros, unexplainedMicros } = auditSums(findings.problems);
  const difference = findings.serviceNetMicros - findings.ledgerNetMicros;
  const agrees = findings.problems.length === 0 && difference === 0;
  return {
    manifest: about.manifest,
    ledger: about.ledger,
    audited_at: about.auditedAt,
    agrees,
    outcome: agrees ? 'done' : 'unreconciled',
    net_spend: {
      service_usd: formatUsd(findings.serviceNetMicros),
      ledger_usd: formatUsd(findings.ledgerNetMicros),
      difference_usd: formatUsd(difference),
    },
    owed_usd: formatUsd(owedMicros),
    unexplained_usd: formatUsd(unexplainedMicros),
    jobs: findings.jobs,
    others: { jobs: findings.others.jobs, net_usd: formatUsd(findings.others.netMicros) },
    problems: findings.problems.map(problemEntry),
    bundle: about.bundle,
  };
}

function problemEntry(problem: AuditProblem): AuditProblemEntry {
  return {
    kind: problem.kind,
    item: problem.itemId,
    job_id: problem.jobId,
    status: problem.status,
    amount_usd: formatUsd(problem.amountMicros),
    charged_usd: formatUsd(problem.chargedMicros),
    refunded_usd: formatUsd(problem.refundedMicros),
    max_cost_usd: problem.maxCostMicros === null ? null : formatUsd(problem.maxCostMicros),
    error_code: problem.errorCode,
    created_at: problem.createdAt,
    completed_at: problem.completedAt,
    idempotency_key: problem.idempotencyKey,
    request_id: problem.requestId,
    message: problemWords(problem),
  };
}

const usd = formatUsdHuman;

/** What is wrong with one job, in words. */
export function problemWords(problem: AuditProblem): string {
  const { chargedMicros: charged, refundedMicros: refunded } = problem;
  const how = problem.errorCode === null ? problem.status : `${problem.status}, ${problem.errorCode}`;
  switch (problem.kind) {
    case 'refund_missing':
      return `${how}: refunded ${usd(refunded)} of the ${usd(charged)} charged; the refund is owed`;
    case 'over_max_cost':
      return `charged ${usd(charged)}, more than the max_cost_usd ${usd(problem.maxCostMicros ?? 0)} its request sent`;
    case 'not_in_ledger':
      return `on the service with this batch's metadata (${how}), never recorded in the ledger: spend no one accounted for`;
    case 'not_on_service':
      return `the ledger counts ${usd(charged - refunded)} for it, and the service does not show it (job_not_found)`;
    case 'ledger_differs':
      return `the service shows ${usd(charged - refunded)} net, the ledger recorded ${usd(charged - refunded - problem.amountMicros)}`;
  }
}

/** The text for people: one line per problem (item, job, what is wrong, amount), then the sums. */
export function renderAuditText(doc: AuditDocument): string {
  const lines = [
    `audit of ${doc.manifest}: ${doc.jobs.ledger} jobs in the ledger, ${doc.jobs.found} of them on the service; ` +
      `${doc.jobs.unrecorded} of the batch on the service that the ledger never recorded`,
  ];
  if (doc.others.jobs > 0)
    lines.push(
      `  ${doc.others.jobs} job${doc.others.jobs === 1 ? '' : 's'} of other clients of the workspace (other metadata), ${human(doc.others.net_usd)} net, counted apart`,
    );
  for (const problem of doc.problems)
    lines.push(
      `  ${problem.kind.replace(/_/g, ' ')}: ${problem.item ?? '-'} ${problem.job_id}: ${problem.message}: ${human(problem.amount_usd)}`,
    );
  const { net_spend: net } = doc;
  const same = net.difference_usd === formatUsd(0);
  lines.push(
    `net spend: the service ${human(net.service_usd)}, the ledger ${human(net.ledger_usd)}` +
      (same ? ', they agree' : `, ${human(net.difference_usd)} apart`),
  );
  if (doc.jobs.unfinished > 0)
    lines.push(`${doc.jobs.unfinished} jobs are still queued or running: their refunds may still come`);
  if (doc.agrees) lines.push('everything agrees: nothing is owed or unexplained');
  else
    lines.push(
      `${doc.problems.length} problem${doc.problems.length === 1 ? '' : 's'}: ${human(doc.owed_usd)} owed by the provider, ` +
        `${human(doc.unexplained_usd)} unexplained`,
    );
  if (doc.bundle !== null) lines.push(`dispute bundle: ${doc.bundle}`);
  return `${lines.join('\n')}\n`;
}

/** The columns of problems.csv, in order: ids, times, amounts, status and error code. */
const CSV_COLUMNS: ReadonlyArray<keyof AuditProblemEntry> = [
  'kind',
  'item',
  'job_id',
  'idempotency_key',
  'request_id',
  'status',
  'error_code',
  'created_at',
  'completed_at',
  'amount_usd',
  'charged_usd',
  'refunded_usd',
  'max_cost_usd',
  'message',
];

/** problems.csv of the dispute bundle: a header row, then one row per problem. */
export function problemsCsv(doc: AuditDocument): string {
  return stringify(
    doc.problems.map((problem) => CSV_COLUMNS.map((column) => problem[column] ?? '')),
    { header: true, columns: [...CSV_COLUMNS] },
  );
}
