import type { FileProblemCounts } from '../../documents/file-problems.js';
import type { KeeperOutsideManifest } from '../../documents/kept-records.js';
import type { FileCheckMode } from '../../documents/status-report.js';
import type { ValueAtRisk } from '../../documents/value-at-risk.js';
import type { RemovedItem } from '../plan-decisions/plan-changes.js';
import type { PlanLabel } from '../plan-decisions/plan-decisions.js';
import type { RenamedItem } from '../plan-decisions/plan-renames.js';
import type { PlanItem } from '../plan-decisions/plan-walk.js';
import type { PlanAccount } from './plan-account.js';

/** The plan document (`plan --json`): what `run` would do, from the manifest, the ledger and GET /account. */

export interface PlanTotals extends Record<PlanLabel, number>, FileProblemCounts {
  items: number;
  /** Items the next run would submit (new, changed, retry, and expired ones it regenerates). */
  to_submit: number;
  /**
   * Items the run also tries, not in to_submit, that fit in budget_usd only if the prices not seen
   * yet leave room for their max_cost_usd (plan-budget.ts); their label is what they are (new, ...).
   */
  budget_permitting: number;
  removed: number;
  stray_files: number;
  spent_usd: string;
  refunded_usd: string;
  reserved_usd: string;
  budget_usd: string | null;
  budget_left_usd: string | null;
  /** Sum over the items that would be submitted; null when any of them has no estimate. */
  estimate_usd: string | null;
  /**
   * Prices already paid for the same model and input shape, over the items to submit that have
   * one; null when none has (then only at_most_usd is known). Never a cap or a guess.
   */
  expected_usd: string | null;
  /** How many of the items to submit expected_usd covers. */
  expected_items: number;
  /** How many charges in the ledger expected_usd is based on. */
  expected_samples: number;
  /** The caps of the items to submit, bounded by what is left of the budget; null: unbounded. */
  at_most_usd: string | null;
  /**
   * Of the `reused` items, those that copy the take of another item of this run asking for the very
   * same request (plan-copies.ts): generated once, not found already paid for.
   */
  copies: number;
  /** The distinct requests those copies copy. */
  copied_requests: number;
}

/**
 * `Items`: the items held whole, or a streamed plan's, read back each time they are iterated
 * (documents/spooled-items.ts).
 */
export interface PlanDocument<Items extends Iterable<PlanItem> = PlanItem[]> {
  manifest: string;
  /** The one line `run` also prints before it spends anything. */
  summary: string;
  items: Items;
  /** Items renamed with their request unchanged: the new id takes the old one's paid result. */
  renamed: RenamedItem[];
  removed: RemovedItem[];
  /** Files in the output folder that no item owns; null when the folder was not looked at. */
  stray_files: string[] | null;
  /** Why a stray file is not taken for an output of the batch, by its path as in stray_files. */
  stray_reasons?: Record<string, string>;
  totals: PlanTotals;
  /** Manifest items asking for more than one variant with no keeper yet (`mediabatch keep`). */
  without_keeper?: string[];
  /** Keepers whose variant or item the manifest no longer asks for (docs/gallery.md, "Keepers"). */
  keepers_outside_manifest?: KeeperOutsideManifest[];
  /** A shared batch's definition against the manifest (docs/shared-ledger.md); absent for a SQLite ledger. */
  definition?: {
    state: 'first' | 'same' | 'differs' | 'redefine';
    revision: number | null;
    message: string | null;
  };
  /** As in the status document: `stat`, `sha256` (--verify), or null when files were not looked at. */
  file_check: FileCheckMode | null;
  /** Outputs paid for and not saved yet (value-at-risk.ts). */
  value_at_risk: ValueAtRisk;
  account: PlanAccount | null;
  /**
   * What `run` says before it pays again for items whose jobs the service lost (`mediabatch
   * forget`); null when there are none.
   */
  pays_again: string | null;
  warnings: string[];
}
