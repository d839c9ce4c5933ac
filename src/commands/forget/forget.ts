import { z } from 'zod';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  serviceOptionsSchema,
  tellOf,
  tellSchema,
} from '../../batch/resolve/options.js';
import type { CommandOutcome } from '../../codes.js';
import type { Manifest } from '../../manifest/index.js';
import { forgetLostJobs } from './forget-jobs.js';

const forgetOptionsSchema = serviceOptionsSchema.extend({
  /** Items to look at; default every item with a job in flight. */
  ids: z.array(z.string().min(1)).optional(),
  ...tellSchema,
});

export type ForgetOptions = z.input<typeof forgetOptionsSchema>;

/** One job `forgetJobs` looked at. */
export interface ForgottenJob {
  itemId: string;
  jobId: string;
  /** True: the service does not know the job, and it was given up; its item is pending again. */
  lost: boolean;
  /** What the job cost, net of refunds; a forgotten job's cost stays in the spend. */
  paidMicros: number;
  /** Why a job was left as it was; null for a forgotten one. */
  why: string | null;
}

/**
 * Gives up the jobs in flight that the service no longer knows (`mediabatch forget`): only a 404
 * from the service gives a job up. An empty list: nothing was in flight.
 */
export async function forgetJobs(manifest: Manifest, options: ForgetOptions = {}): Promise<ForgottenJob[]> {
  const { ids, warn, log, ...rest } = checkOptions('forgetJobs', forgetOptionsSchema, options);
  const batch = batchOf(checkedManifest('forgetJobs', manifest), rest);
  const outcomes = await forgetLostJobs(batch, ids ?? [], tellOf(warn, log));
  return outcomes.map(({ attempt, lost, why }) => ({
    itemId: attempt.itemId,
    jobId: attempt.jobId ?? '',
    lost,
    paidMicros: attempt.amountMicros - attempt.refundedMicros,
    why: why ?? null,
  }));
}

/**
 * How a `forgetJobs` ended: `done` when every job it looked at was given up (or none was in
 * flight), `not_done` when the service still holds one, which a re-run follows instead.
 */
export function forgetOutcome(jobs: readonly ForgottenJob[]): CommandOutcome {
  return jobs.every((job) => job.lost) ? 'done' : 'not_done';
}
