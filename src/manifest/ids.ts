/**
 * Item ids name output files and ledger rows, so they must be safe file names everywhere and must
 * not change between runs: a changed id would look like a new item and be paid for again.
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_ID_LENGTH = 128;

/** Device names Windows opens instead of a file, whatever extension follows them. */
const RESERVED_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.|$)/i;

export function isReservedDeviceName(id: string): boolean {
  return RESERVED_DEVICE.test(id);
}

/** Why an id cannot be used, or null when it can. */
export function idProblem(id: string): string | null {
  if (!ID_PATTERN.test(id)) {
    const shown = JSON.stringify(id.length > 60 ? `${id.slice(0, 57)}...` : id);
    if (id.length > MAX_ID_LENGTH) return `id ${shown} is longer than ${MAX_ID_LENGTH} characters`;
    return (
      `invalid id ${shown}: ids become file names, so they must start with an ASCII letter or digit ` +
      `and contain only ASCII letters (a-z, A-Z, no accents), digits, '.', '_' and '-'`
    );
  }
  if (isReservedDeviceName(id)) {
    return `id '${id}' is a reserved device name on Windows and cannot be a file name; choose another id`;
  }
  return null;
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** What an item declares about itself; manifest-wide defaults are deliberately not part of it. */
export interface ItemContent {
  prompt: string;
  input?: Record<string, unknown> | undefined;
  model?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  maxCostMicros?: number | undefined;
  /** The item's own template variables; absent and empty are the same content. */
  vars?: Record<string, unknown> | undefined;
}

/**
 * `item-<12 hex>` from the item's own content. Absent and empty maps are the same content, and the
 * cap is hashed as micro-dollars so that "1.2" and "1.20" do not make two different items.
 */
export function stableItemId(content: ItemContent): string {
  // Written out in sorted key order: exactly canonicalJson of {input, max_cost_micros, metadata,
  // model, prompt}, without building and sorting that object for each of 100,000 items.
  const canonical =
    `{"input":${canonicalJson(content.input ?? {})}` +
    `,"max_cost_micros":${JSON.stringify(content.maxCostMicros ?? null)}` +
    `,"metadata":${canonicalJson(content.metadata ?? {})}` +
    `,"model":${JSON.stringify(content.model ?? null)}` +
    `,"prompt":${JSON.stringify(content.prompt)}` +
    // Last in sorted order, and left out when empty so that ids made before variables stay the same.
    (content.vars && Object.keys(content.vars).length > 0 ? `,"vars":${canonicalJson(content.vars)}}` : '}');
  return `item-${sha256Hex(canonical).slice(0, 12)}`;
}
