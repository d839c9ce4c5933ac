import { formatUsdHuman, humanUsd, type Micros, parseUsd } from '../../money.js';
import { concurrencyAboveLimit } from '../../runner/restore.js';
import type { Account } from '../../service-client/schemas.js';

/** The code plan gives an account check that got no answer in time (not the service's). */
export const NO_ANSWER_IN_TIME = 'no_answer_in_time';

/** The outcome of GET /account, as the command saw it (the key never reaches this module). */
export type AccountCheck =
  | { baseUrl: string; ok: true; account: Account }
  | { baseUrl: string; ok: false; status: number | null; code: string | null; message: string };

export interface PlanAccount {
  base_url: string;
  wallet_enabled: boolean | null;
  balance_usd: string | null;
  concurrency: { active: number; limit: number } | null;
  error: { status: number | null; code: string | null; message: string } | null;
}

export function toPlanAccount(check: AccountCheck): PlanAccount {
  if (!check.ok) {
    return {
      base_url: check.baseUrl,
      wallet_enabled: null,
      balance_usd: null,
      concurrency: null,
      error: { status: check.status, code: check.code, message: check.message },
    };
  }
  const { account } = check;
  return {
    base_url: check.baseUrl,
    wallet_enabled: account.balance.enabled,
    balance_usd: account.balance.amount_usd,
    concurrency: { active: account.concurrency.active, limit: account.concurrency.limit },
    error: null,
  };
}

/**
 * GET /account's failure, for stderr, whether the service refused the account (401, 402), and the
 * outcome plan ends with for it (`refused`, else `not_done`: run would stop the same way); null
 * when it did not fail, or only did not answer in time: a slow service does not stop run (its
 * requests are resent with the same keys), nor plan.
 */
export function accountFailure(
  account: PlanAccount | null,
): { line: string; refused: boolean; outcome: 'refused' | 'not_done' } | null {
  const error = account?.error ?? null;
  if (error === null || error.code === NO_ANSWER_IN_TIME) return null;
  const hint =
    error.status === 401
      ? 'check MEDIAGEN_API_KEY'
      : error.status === 402
        ? 'the wallet must be enabled and funded'
        : 'run would stop the same way, before submitting anything';
  const refused = error.status === 401 || error.status === 402;
  return {
    line: `GET /account at ${account!.base_url} failed: ${error.message} (${hint})`,
    refused,
    outcome: refused ? 'refused' : 'not_done',
  };
}

export function accountWarnings(
  account: Account,
  estimate: Micros | null,
  toSubmit: number,
  concurrency: number | null,
): string[] {
  const warnings: string[] = [];
  if (concurrency !== null && account.concurrency.limit > 0 && concurrency > account.concurrency.limit)
    warnings.push(concurrencyAboveLimit(concurrency, account.concurrency.limit));
  if (!account.balance.enabled) {
    warnings.push(
      'the API wallet is disabled: every submission would be refused (402 wallet_not_enabled); ask the operator to enable it',
    );
  }
  const balance = parseUsd(account.balance.amount_usd);
  if (toSubmit > 0 && balance !== null) {
    if (estimate !== null && balance < estimate) {
      warnings.push(
        `the balance ${humanUsd(account.balance.amount_usd)} is below the estimate ${formatUsdHuman(estimate)} for the items to submit: some would be refused (402 insufficient_balance)`,
      );
    } else if (balance === 0) {
      warnings.push('the balance is $0.00: every submission would be refused (402 insufficient_balance)');
    }
  }
  if (account.concurrency.limit === 0) {
    warnings.push('the workspace concurrency limit is 0: nothing can be submitted');
  } else if (toSubmit > 0 && account.concurrency.active >= account.concurrency.limit) {
    warnings.push(
      `the workspace is at its concurrency limit (${account.concurrency.active}/${account.concurrency.limit}): run will wait for free slots`,
    );
  }
  return warnings;
}
