import { hash } from 'node:crypto';
import { canonicalJson } from '../../canonical-json.js';
import { type MoneyTotals, SANDBOX_IDENTITY, spentMicros } from '../../ledger/index.js';
import { definitionOf, definitionText } from '../../manifest/definition.js';
import type { Manifest } from '../../manifest/index.js';
import { formatUsd, humanUsd } from '../../money.js';
import { requestHash } from '../../runner/request.js';
import type { PlanLabel } from '../plan-decisions/plan-decisions.js';
import type { PlanDocument } from './plan-report.js';

/**
 * An approved plan (docs/audit.md, "Approved plans"): what `plan` would have `run` do, written for
 * a person to review and sign off, and for `run` to hold itself to. Pure: the same manifest, ledger
 * and choices give the same plan, byte for byte, and the same `plan_sha256`.
 */

export const APPROVED_PLAN_FORMAT = 'mediabatch-plan/1';

export interface ApprovedItem {
  id: string;
  plan: PlanLabel;
  /** The SHA-256 of what the item asks for (model, input, metadata, max_cost_usd): runner/request.ts. */
  request_hash: string;
  /** What it is expected to cost by the prices the ledger knows; null when not submitted or unknown. */
  expected_usd: string | null;
}

export interface ApprovedPlan {
  format: typeof APPROVED_PLAN_FORMAT;
  manifest: string;
  /** The SHA-256 of the manifest's definition (manifest/definition.ts): every item and setting, however written. */
  manifest_sha256: string;
  /**
   * The service the plan was made for, as a ledger names it (`sandbox:embedded`, or the base URL
   * without credentials); null when none was named (the ledger and folder are the service's own).
   * A plan holds only for its service: the sandbox's has a ledger and output folder of its own.
   * Absent from plans written before it was recorded.
   */
  service?: string | null;
  settings: { budget_usd: string | null; concurrency: number | null; retries: number };
  /** run's choices the plan was made with: `run` must be given the same. */
  asked: { retry_failed: boolean; regenerate_expired: boolean };
  /** The ledger's money when the plan was made; a ledger that moved since is another plan. */
  ledger: { spent_usd: string; refunded_usd: string; reserved_usd: string };
  items: ApprovedItem[];
  to_submit: number;
  /** The most the plan spends; `run` with the plan never spends more, whatever the budget says. */
  total_at_most_usd: string;
  /** The SHA-256 of the canonical JSON of every field above: the plan a reviewer quotes. */
  plan_sha256: string;
}

/** run's choices that change what it pays for: `retryFailed`, `regenerateExpired`. */
export type PlanChoices = { retryFailed?: boolean | undefined; regenerateExpired: boolean };

/** The approved form of `doc`; null when it has no upper bound (an item without a cap and no budget). */
export function approvedPlanOf(
  manifest: Manifest,
  doc: PlanDocument,
  made: { money: MoneyTotals; service: string | null },
  asked: PlanChoices,
): ApprovedPlan | null {
  const { money } = made;
  if (doc.totals.at_most_usd === null) return null;
  const byId = new Map(manifest.items.map((item) => [item.id, item]));
  const body: Omit<ApprovedPlan, 'plan_sha256'> = {
    format: APPROVED_PLAN_FORMAT,
    manifest: manifest.name,
    manifest_sha256: definitionText(definitionOf(manifest)).hash,
    service: made.service,
    settings: {
      budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
      concurrency: manifest.concurrency,
      retries: manifest.retries,
    },
    asked: { retry_failed: asked.retryFailed ?? false, regenerate_expired: asked.regenerateExpired },
    ledger: {
      spent_usd: formatUsd(spentMicros(money)),
      refunded_usd: formatUsd(money.refundedMicros),
      reserved_usd: formatUsd(money.reservedMicros),
    },
    items: doc.items.map((item) => ({
      id: item.id,
      plan: item.plan,
      request_hash: requestHash(byId.get(item.id)!),
      expected_usd: item.estimate_usd,
    })),
    to_submit: doc.totals.to_submit,
    total_at_most_usd: doc.totals.at_most_usd,
  };
  return { ...body, plan_sha256: planHash(body) };
}

/** The hash of a plan's fields but its own. */
export function planHash(plan: Omit<ApprovedPlan, 'plan_sha256'> & { plan_sha256?: string }): string {
  const { plan_sha256: _own, ...body } = plan;
  return hash('sha256', canonicalJson(body), 'hex');
}

/** What differs between the approved plan and the plan as it stands now, in words; empty: none. */
export function planDifferences(approved: ApprovedPlan, now: ApprovedPlan): string[] {
  // Another service is another ledger and output folder: all else differs by that alone.
  const service = serviceWords(approved.service, now.service);
  if (service !== null) return [service];
  const said: string[] = [];
  if (approved.manifest !== now.manifest)
    said.push(`the manifest is ${now.manifest}, not ${approved.manifest}`);
  else if (approved.manifest_sha256 !== now.manifest_sha256) said.push(manifestWords(approved, now));
  for (const [name, option] of [
    ['retry_failed', 'retryFailed'],
    ['regenerate_expired', 'regenerateExpired'],
  ] as const)
    if (approved.asked[name] !== now.asked[name])
      said.push(`the plan was made ${approved.asked[name] ? 'with' : 'without'} \`${option}\``);
  const ledger = (['spent_usd', 'refunded_usd', 'reserved_usd'] as const).filter(
    (key) => approved.ledger[key] !== now.ledger[key],
  );
  if (ledger.length > 0)
    said.push(
      `the ledger moved since: ${ledger.map((key) => `${key.replace('_usd', '')} ${humanUsd(approved.ledger[key])} then, ${humanUsd(now.ledger[key])} now`).join(', ')}`,
    );
  said.push(...itemWords(approved.items, now.items));
  if (said.length === 0 && approved.total_at_most_usd !== now.total_at_most_usd)
    said.push(
      `at most ${humanUsd(now.total_at_most_usd)} now, ${humanUsd(approved.total_at_most_usd)} approved`,
    );
  return said;
}

/**
 * The plan was made for another service than this run's: the sandbox and a service never share a
 * plan; two services named by their addresses must be the same. A plan that named none (made
 * before this was recorded, or offline) is the service's, whichever it is.
 */
function serviceWords(then: string | null | undefined, now: string | null | undefined): string | null {
  const sandboxThen = then === SANDBOX_IDENTITY;
  const sandboxNow = now === SANDBOX_IDENTITY;
  if (sandboxThen === sandboxNow && (then == null || now == null || then === now)) return null;
  const made = sandboxThen ? 'the embedded sandbox (`sandbox`)' : (then ?? 'the service');
  const running = sandboxNow ? 'the embedded sandbox (`sandbox`)' : (now ?? 'the service');
  const again = sandboxNow
    ? 'make the plan again with `sandbox` to try it there'
    : `make the plan again against ${running}${sandboxThen ? ' (without `sandbox`)' : ''}`;
  return (
    `the plan was made against ${made}, and this run is against ${running}: a plan holds only for the ` +
    `service it was made against, whose ledger, prices and output folder it was made from; ${again}`
  );
}

function manifestWords(approved: ApprovedPlan, now: ApprovedPlan): string {
  const settings = (['budget_usd', 'concurrency', 'retries'] as const).filter(
    (key) => approved.settings[key] !== now.settings[key],
  );
  return settings.length === 0 ? 'the manifest changed' : `the manifest changed (${settings.join(', ')})`;
}

/** Items added, removed, planned otherwise, asking otherwise, or priced otherwise by the ledger. */
function itemWords(approved: readonly ApprovedItem[], now: readonly ApprovedItem[]): string[] {
  const then = new Map(approved.map((item) => [item.id, item]));
  const ids = new Set(now.map((item) => item.id));
  const added: string[] = [];
  const changed: string[] = [];
  const planned: string[] = [];
  const priced: string[] = [];
  for (const item of now) {
    const old = then.get(item.id);
    if (old === undefined) added.push(item.id);
    else if (old.request_hash !== item.request_hash) changed.push(item.id);
    else if (old.plan !== item.plan) planned.push(`${item.id} (${old.plan} then, ${item.plan} now)`);
    else if (old.expected_usd !== item.expected_usd)
      priced.push(`${item.id} (${humanUsd(old.expected_usd)} then, ${humanUsd(item.expected_usd)} now)`);
  }
  const removed = approved.filter((item) => !ids.has(item.id)).map((item) => item.id);
  return [
    ...(added.length ? [`items added: ${added.join(', ')}`] : []),
    ...(removed.length ? [`items removed: ${removed.join(', ')}`] : []),
    ...(changed.length ? [`items changed: ${changed.join(', ')}`] : []),
    ...(planned.length ? [`items planned otherwise: ${planned.join(', ')}`] : []),
    ...(priced.length ? [`prices known to the ledger changed: ${priced.join(', ')}`] : []),
  ];
}
