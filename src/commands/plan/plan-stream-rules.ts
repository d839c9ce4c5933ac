import { strangers } from '../../batch/plan/plan-finish.js';
import { type RemovedItem, removedItems } from '../../batch/plan-decisions/plan-changes.js';
import type { DecideOptions, Decision, PlanLabel } from '../../batch/plan-decisions/plan-decisions.js';
import { HeldBack } from '../../batch/plan-decisions/plan-held-back.js';
import {
  type RenamedItem,
  removedCandidates,
  renamedDecision,
} from '../../batch/plan-decisions/plan-renames.js';
import { PlanReuses, wantsTake } from '../../batch/plan-decisions/plan-reuses.js';
import { NotStreamable, type StreamedManifest } from '../../batch/resolve/streamed-manifest.js';
import { collectRows } from '../../collect-rows.js';
import { shownFrom } from '../../documents/shown-path.js';
import type { FileCheckMode } from '../../documents/status-report.js';
import type {
  AttemptRecord,
  FailedTakes,
  ItemEntry,
  MoneyTotals,
  ReadingLedger,
  RecordReads,
  ReusableTake,
  SharedLedger,
  TakeLedger,
} from '../../ledger/index.js';
import type { ManifestItem, ManifestRead } from '../../manifest/index.js';
import { RenamePairing } from '../../runner/renames.js';
import { requestHash } from '../../runner/request.js';
import { variantOfItem } from '../../runner/request-key.js';

/**
 * The rules of a streamed plan that look across items (plan-stream.ts), set up before the walk
 * from what the survey found: a rename pairs a new item with a removed one (plan-renames.ts), a
 * saved take or an earlier item of the same request answers an item (plan-reuses.ts), a file in
 * the output folder the ledger did not write may be in an item's way. The rules themselves are
 * those of a plan held whole; only the order they are applied in is an item at a time.
 */

/** What the plan is asked and read besides the manifest and the ledger. */
export interface StreamedPlanInputs {
  outputFiles: readonly string[] | null;
  strayWhy: (path: string) => string | null;
  regenerateExpired: boolean;
  retryFailed: boolean;
  verify: boolean;
  fileCheck: FileCheckMode;
  takeIsThere: (take: ReusableTake) => boolean;
  /** The time expiry is judged by; default now. */
  nowMs?: number;
}

/** What the walk needs to know before its first item, from a read through the whole manifest. */
export interface Survey {
  read: ManifestRead;
  /** Items the ledger does not know (a rename may pair them). */
  unknown: number;
  /** Items the ledger has a row for (the others it has rows for the manifest no longer lists). */
  rows: number;
  /** Items neither done nor failed: run's pre-flight counts them. */
  waiting: number;
  /** Whether an item would be paid for or is expired (then saved takes may answer it). */
  wanting: boolean;
  /** Positions of the items the run acquires anyway (fetched again or followed), in manifest order. */
  acquired: Array<{ position: number; label: PlanLabel }>;
}

/** What a streamed plan reads of the ledger once, besides a page of items at a time. */
export interface PlanLedger {
  money: MoneyTotals;
  unsaved: readonly AttemptRecord[];
  /** The jobs moderation rejected, and the variant each one's item is (request-key.ts). */
  rejected: { attempts: readonly AttemptRecord[]; variantOf: (itemId: string) => number };
  failedTakes: readonly FailedTakes[];
  /** Whether the ledger has any item or attempt of the batch (else there is nothing to survey). */
  knowsItems: boolean;
}

const NO_MONEY: MoneyTotals = { chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 };
const NO_VARIANTS: ReadonlyMap<string, number> = new Map();
/** An id a variant would have (`<id>.v<n>`): only the manifest says whether it is one. */
const VARIANT_LIKE = /\.v[1-9][0-9]*$/;

export async function readPlanLedger(
  ledger: (RecordReads & ReadingLedger & SharedLedger) | null,
): Promise<PlanLedger> {
  const variantOf = (itemId: string) => variantOfItem(NO_VARIANTS, itemId);
  if (ledger === null)
    return {
      money: NO_MONEY,
      unsaved: [],
      rejected: { attempts: [], variantOf },
      failedTakes: [],
      knowsItems: false,
    };
  // A shared batch's definition is made of every item at once (manifest/definition.ts).
  if (ledger.definitions !== null) throw new NotStreamable();
  const rejected = await ledger.rejectedAttempts();
  // The variant a rejected request was made for decides its key; a streamed manifest has no
  // variants, so an item of its own is variant 1, and only one it no longer lists can be another.
  // Which an id like that is needs every id first: such a plan is made whole.
  if (rejected.some((attempt) => VARIANT_LIKE.test(attempt.itemId))) throw new NotStreamable();
  return {
    money: await ledger.moneyTotals(),
    unsaved: await ledger.unsavedSucceeded(),
    rejected: { attempts: rejected, variantOf },
    failedTakes: await ledger.failedTakes(),
    knowsItems: (await ledger.countItems()) > 0 || (await ledger.hasAttempts()),
  };
}

export class StreamedItemRules {
  /** Whether an item would be paid for or is expired, so that a saved take may answer it. */
  static wants(decision: Decision | undefined): boolean {
    return wantsTake(decision);
  }

  readonly #unlisted: ReadonlyMap<string, ItemEntry>;
  #surveyed = false;

  private constructor(
    private readonly unlisted: readonly ItemEntry[],
    private readonly paths: ReadonlyArray<readonly [string, string]>,
    private readonly pairing: RenamePairing | null,
    private readonly reuses: PlanReuses | null,
    /** What run will not submit for a file in its way, decided before the budget walk. */
    readonly heldBack: HeldBack | null,
    readonly foreign: string[] | null,
    readonly savedEarly: ReadonlySet<string>,
    private readonly shown: (path: string) => string,
  ) {
    this.#unlisted = new Map(unlisted.map((entry) => [entry.itemId, entry]));
  }

  static async make(
    manifest: StreamedManifest,
    ledger: (RecordReads & ReadingLedger & TakeLedger) | null,
    wide: PlanLedger,
    survey: Survey | null,
    options: DecideOptions,
    inputs: Pick<StreamedPlanInputs, 'outputFiles' | 'takeIsThere' | 'nowMs'>,
  ): Promise<StreamedItemRules> {
    const listed = (id: string) => survey?.read.ids?.has(id) ?? false;
    // Rows the manifest's items did not account for are of items it no longer lists.
    const unlisted =
      ledger !== null && survey !== null && (await ledger.countItems()) > survey.rows
        ? await unlistedEntries(ledger, listed)
        : [];
    const candidates = removedCandidates(unlisted);
    // A rename pairs a removed item holding a paid result with a new one of the same request.
    const pairing =
      candidates.length > 0 && (survey?.unknown ?? 0) > 0 ? new RenamePairing(candidates) : null;
    const outputFiles = inputs.outputFiles ?? [];
    const paths =
      ledger !== null && (unlisted.length > 0 || outputFiles.length > 0)
        ? await collectRows(ledger.itemFilePaths())
        : [];
    const { foreign, savedEarly } = strangers(manifest, wide.unsaved, inputs.outputFiles, () => paths);
    // Which of two items a file named as another's second file holds back needs them both first.
    if (foreign !== null && !HeldBack.streamable(foreign)) throw new NotStreamable();
    const shown = shownFrom(manifest.file);
    const heldBack = foreign?.length ? HeldBack.eachAlone(manifest.outputDir, foreign, shown) : null;
    const reuses =
      survey === null || survey.wanting
        ? new PlanReuses(
            survey === null || ledger === null ? [] : await ledger.reusableTakes(),
            // An item of the manifest is variant 1; one it no longer lists is known by its id.
            (id) => (listed(id) ? 1 : variantOfItem(NO_VARIANTS, id)),
            inputs.takeIsThere,
            (item) => options.rejections?.asSent(item) ?? item,
            inputs.nowMs,
          )
        : null;
    if (reuses !== null && survey !== null && survey.acquired.length > 0)
      await acquire(manifest, survey, reuses);
    const rules = new StreamedItemRules(
      unlisted,
      paths,
      pairing,
      reuses,
      heldBack,
      foreign,
      savedEarly,
      shown,
    );
    rules.#surveyed = survey !== null;
    return rules;
  }

  /** Whether the items were read through once before the walk (a survey): then their ids are held. */
  get surveyed(): boolean {
    return this.#surveyed;
  }

  /** An item's decision after the rules across items: renamed, reused, or as it was. */
  decide(
    item: ManifestItem,
    entry: ItemEntry | undefined,
    decision: Decision,
    renamed: RenamedItem[],
  ): Decision {
    let decided = decision;
    if (this.pairing !== null && entry === undefined) {
      const pair = this.pairing.pair({ id: item.id, hash: requestHash(item) });
      if (pair !== null) {
        renamed.push(pair);
        decided = renamedDecision(pair, this.#unlisted.get(pair.from)!);
      }
    }
    if (this.reuses !== null && wantsTake(decided)) decided = this.reuses.decide(item, decided);
    return this.heldBack?.decide(item, decided) ?? decided;
  }

  /** The items the manifest no longer lists, but those a rename paired. */
  removed(renamed: readonly RenamedItem[]): RemovedItem[] {
    const paired = new Set(renamed.map((pair) => pair.from));
    const left = this.unlisted.filter((entry) => !paired.has(entry.itemId)).map((entry) => entry.record!);
    return removedItems(left, left.length > 0 ? this.paths : [], this.shown);
  }
}

/** The ledger's items the manifest no longer lists, with their entries, in the ledger's order. */
async function unlistedEntries(ledger: ReadingLedger, listed: (id: string) => boolean): Promise<ItemEntry[]> {
  const found: ItemEntry[] = [];
  for await (const entry of ledger.itemEntries())
    if (entry.record && !listed(entry.itemId)) found.push(entry);
  return found;
}

/**
 * What the run acquires anyway is known before any item that wants a take is decided (a later
 * item fetched again answers an earlier one too): those items are read once more, in order.
 */
async function acquire(manifest: StreamedManifest, survey: Survey, reuses: PlanReuses): Promise<void> {
  let next = 0;
  let position = 0;
  const { acquired } = survey;
  for await (const items of manifest.readItems(undefined, true).chunks) {
    for (const item of items) {
      if (acquired[next]?.position === position)
        reuses.acquired(item, acquired[next++]!.label as Decision['label']);
      position += 1;
    }
    if (next === acquired.length) return;
  }
}
