import { collectRows } from '../../collect-rows.js';
import type { FileProblems } from '../../documents/file-problems.js';
import type { AttemptRecord, FailedTakes, ItemEntry, MoneyTotals, ReusableTake } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { readsRecordedRequest } from '../../runner/item-plan.js';
import { requestHash } from '../../runner/request.js';
import { type PriceTable, priceTable } from '../ledger/cost-estimate.js';
import { decideOptionsOf, EntryDecisions, listedOf, variantsOf } from '../plan-decisions/plan-decide-all.js';
import { wantsTake } from '../plan-decisions/plan-reuses.js';
import type { AccountCheck } from './plan-account.js';
import { buildPlan, type PlanDocument, type PlanInputs } from './plan-report.js';

/**
 * What `plan` reads from a ledger, as PlanSource, each read asynchronous: the entries stream, one
 * row per item; the rest is read only when the decisions need it.
 */
export interface PlanReads {
  entries: AsyncIterable<ItemEntry>;
  money: MoneyTotals;
  unsaved: readonly AttemptRecord[];
  prices: () => Promise<PriceTable>;
  itemFilePaths: () => AsyncIterable<readonly [string, string]>;
  recorded: (attempt: AttemptRecord) => Promise<Pick<AttemptRecord, 'requestBody' | 'requestHash'>>;
  reusableTakes: () => Promise<readonly ReusableTake[]>;
  /** An attempt whole, for an edited item whose last body names the fields that changed. */
  attempt: (id: number) => Promise<AttemptRecord>;
  fileProblems?: FileProblems;
  /** The jobs moderation rejected (runner/fallback.ts). */
  rejected: readonly AttemptRecord[];
  /** The takes that failed their check, per item and request (Ledger.failedTakes). */
  failedTakes?: readonly FailedTakes[];
}

/**
 * The plan of a streamed ledger: each entry decided as it goes past (an item whose hash differs
 * has its recorded request read first), then what the decisions need read once, then the same
 * plan as a ledger held in memory gives (buildPlan). `namesChanges`: an edited item's last body is
 * read whole, to name the fields that changed (`plan` does; run's own plan need not).
 */
export async function buildPlanStreamed(
  manifest: Manifest,
  reads: PlanReads,
  account: AccountCheck | null,
  nowMs: number,
  inputs: PlanInputs = {},
  namesChanges = false,
): Promise<PlanDocument> {
  const listed = listedOf(manifest, inputs.only ?? null);
  const rejected = { attempts: reads.rejected, variantOf: variantsOf(manifest) };
  const decider = new EntryDecisions(
    listed,
    decideOptionsOf(inputs, reads.fileProblems, nowMs, rejected, reads.failedTakes),
  );
  for await (const entry of reads.entries) {
    const item = decider.itemOf(entry.itemId);
    const { record, attempt } = entry;
    // Hashed once: deciding the item needs the hash too (a hash per item is a tenth of plan's time).
    const hash = item === undefined ? undefined : requestHash(item);
    const sent =
      hash !== undefined && readsRecordedRequest(hash, record, attempt)
        ? await reads.recorded(attempt)
        : undefined;
    decider.add(entry, (latest) => sent ?? latest, hash);
  }
  const decided = decider.finish();
  const submits = decided.decisions.some((decision) => decision?.submit);
  const prices = submits ? await reads.prices() : priceTable([]);
  const takes = decided.decisions.some(wantsTake) ? await reads.reusableTakes() : [];
  const pathsWanted = decided.unlisted.length > 0 || (inputs.outputFiles?.length ?? 0) > 0;
  const paths = pathsWanted ? await collectRows(reads.itemFilePaths()) : [];
  const earlier = new Map<number, AttemptRecord>();
  if (namesChanges)
    for (const decision of decided.decisions) {
      const since = decision?.label === 'changed' ? decision.changedSince : undefined;
      if (since !== undefined) earlier.set(since.id, await reads.attempt(since.id));
    }
  const named: PlanInputs = namesChanges
    ? {
        ...inputs,
        previousBody: (attempt) => earlier.get(attempt.id)?.requestBody,
        previousVars: (attempt) => earlier.get(attempt.id)?.vars,
      }
    : inputs;
  const source = {
    entries: [],
    money: reads.money,
    unsaved: reads.unsaved,
    prices: () => prices,
    itemFilePaths: () => paths,
    recorded: (latest: AttemptRecord) => latest,
    reusableTakes: () => takes,
    rejected: reads.rejected,
    ...(reads.fileProblems ? { fileProblems: reads.fileProblems } : {}),
  };
  return buildPlan(manifest, source, account, nowMs, named, decided);
}
