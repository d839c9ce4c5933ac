import { stringify } from 'yaml';
import type { AttemptRecord } from '../ledger/index.js';
import { rejectionsOf } from '../runner/fallback.js';
import { cleanText } from './clean-text.js';

/**
 * The requests moderation rejected (docs/manifest.md, "Fallback prompts"), as `status` shows them
 * and `export --rejected` writes them: YAML, the manifest's own language, so that a person edits a
 * prompt where it stands and pastes it back under an item's `prompt:` or `fallback_prompts:`.
 */
export interface RejectedRecord {
  /** The item whose job was rejected. */
  id: string;
  /** The prompt as it was sent (rendered from its template). */
  prompt: string;
  /** The service's message, as it gave it. */
  message: string | null;
  job: string | null;
  rejected_at: string | null;
}

/** The records of a ledger's rejected attempts (Ledger.rejectedAttempts), in the ledger's order. */
export function rejectedRecordsOf(
  attempts: readonly AttemptRecord[],
  /** The variant each attempt's item is (runner/request-key.ts, variantsOfItems). */
  variantOf: (itemId: string) => number,
): RejectedRecord[] {
  return rejectionsOf(attempts, variantOf).map((rejection) => ({
    id: rejection.itemId,
    prompt: rejection.prompt,
    message: rejection.message,
    job: rejection.jobId,
    rejected_at: rejection.at,
  }));
}

/**
 * The first line of every `export --rejected` file: how the door for named files knows one it may
 * write again (export-head.ts).
 */
export const REJECTED_HEAD = '# mediabatch export --rejected: requests the service moderation rejected';

/** An `export --rejected` file: the head, what to do with it, then one YAML list entry per record. */
export function rejectedYaml(records: readonly RejectedRecord[]): string {
  const how = [
    REJECTED_HEAD,
    '# (content_rejected). They are not sent again: edit a prompt, then paste it back into the',
    "# manifest as its item's prompt or under its fallback_prompts (docs/manifest.md).",
  ];
  const body = records.length === 0 ? 'rejected: []\n' : stringify({ rejected: records }, { lineWidth: 0 });
  return `${how.join('\n')}\n${body}`;
}

/** `status`'s lines about them: each item and prompt with the service's message. */
export function rejectedLines(records: readonly RejectedRecord[] | undefined): string {
  if (records === undefined || records.length === 0) return '';
  const lines = records.map(
    // One safe line each, as the table's errors (render-text.ts): no control characters, no signed URL.
    (record) =>
      cleanText(`  ${record.id}: ${JSON.stringify(record.prompt)}: ${record.message ?? 'content_rejected'}`),
  );
  return `rejected by moderation, not sent again (${records.length}; mediabatch export --rejected writes them to edit):\n${lines.join('\n')}\n`;
}
