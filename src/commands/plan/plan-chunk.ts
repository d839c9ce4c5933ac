import { savedFileProblemsOf } from '../../batch/ledger/saved-file-problems.js';
import { type DecideOptions, type Decision, decideItem } from '../../batch/plan-decisions/plan-decisions.js';
import type { FileProblems } from '../../documents/file-problems.js';
import type { AttemptRecord, ItemEntry, ReadingLedger, RecordReads } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { readsRecordedRequest } from '../../runner/item-plan.js';
import { requestHash } from '../../runner/request.js';

/**
 * Each item of a chunk of a streamed manifest decided as plan-decide-all.ts decides the items of a
 * manifest held whole: from its entry and its saved files, read from the ledger for the chunk's
 * ids alone (one walk: the items' rows, their latest attempts and the files their outputs stand
 * on, a page at a time), and its recorded request where its hash differs.
 */
export interface ChunkDecided {
  decisions: Decision[];
  /** Each item's entry; undefined for an item the ledger does not know. */
  entries: Array<ItemEntry | undefined>;
  /** The chunk's items whose saved files are not as saved; undefined when the files were not looked at. */
  files: FileProblems | undefined;
}

const NO_ENTRIES: ReadonlyMap<string, ItemEntry> = new Map();

export class ChunkDecider {
  constructor(
    private readonly ledger: (RecordReads & ReadingLedger) | null,
    private readonly options: DecideOptions,
    private readonly verify: boolean,
  ) {}

  async decide(items: readonly ManifestItem[]): Promise<ChunkDecided> {
    const { ledger } = this;
    const ids = items.map((item) => item.id);
    const entries = ledger === null ? NO_ENTRIES : await ledger.itemEntriesOf(ids);
    const files = ledger === null ? undefined : await savedFileProblemsOf(ledger, ids, this.verify);
    const options = files === undefined ? this.options : { ...this.options, files };
    const decided: ChunkDecided = { decisions: [], entries: [], files };
    for (const item of items) {
      const entry = entries.get(item.id);
      decided.entries.push(entry);
      if (entry === undefined) {
        decided.decisions.push(decideItem(item, undefined, options, (attempt) => attempt));
        continue;
      }
      // Hashed once: deciding the item needs the hash too (a hash per item is a tenth of plan's time).
      const hash = requestHash(item);
      const { record, attempt } = entry;
      const sent =
        ledger !== null && readsRecordedRequest(hash, record, attempt)
          ? await ledger.attemptRequest(attempt.id)
          : undefined;
      decided.decisions.push(decideItem(item, entry, options, (latest) => sent ?? latest, hash));
    }
    return decided;
  }

  /** The attempts whole whose requests the chunk's edited items changed, to name the fields that changed. */
  async earlier(decisions: readonly Decision[]): Promise<Map<number, AttemptRecord>> {
    const found = new Map<number, AttemptRecord>();
    for (const decision of decisions) {
      const since = decision.label === 'changed' ? decision.changedSince : undefined;
      if (since !== undefined && this.ledger !== null)
        found.set(since.id, await this.ledger.getAttempt(since.id));
    }
    return found;
  }
}
