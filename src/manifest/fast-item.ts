/**
 * A hand-written acceptance check for the common case of a valid item. zod allocates several
 * objects per field it checks, and for 100,000 JSONL items that garbage dominated loading time.
 * This only ever says "certainly valid" (returning the same data zod would) or "ask zod", which
 * then produces the precise problems; a property test holds the two in agreement.
 */
import { parseUsd } from '../money.js';
import { isPlainObject } from '../plain-object.js';
import { idProblem } from './ids.js';
import { jsonValueIssue } from './json-value.js';
import { type ItemData, RESERVED_METADATA_PREFIX } from './schema.js';

function entriesOk(value: unknown, keyOk: (key: string) => boolean): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || !keyOk(key) || jsonValueIssue(value[key]) !== null) return false;
  }
  return true;
}

const inputKeyOk = (key: string) => key !== 'prompt';
const metadataKeyOk = (key: string) => !key.toLowerCase().startsWith(RESERVED_METADATA_PREFIX);

/** The item's data when it is certainly valid, else null (meaning: let the schema explain). */
export function fastItem(value: unknown): ItemData | null {
  if (!isPlainObject(value)) return null;
  const data: ItemData = { prompt: '' };
  let hasPrompt = false;
  for (const key of Object.keys(value)) {
    const field = value[key];
    switch (key) {
      case 'id':
        if (typeof field !== 'string' || idProblem(field) !== null) return null;
        data.id = field;
        break;
      case 'prompt':
        if (typeof field !== 'string' || field.trim() === '') return null;
        data.prompt = field;
        hasPrompt = true;
        break;
      case 'input':
        if (!entriesOk(field, inputKeyOk)) return null;
        data.input = field;
        break;
      case 'model':
        if (typeof field !== 'string' || field === '') return null;
        data.model = field;
        break;
      case 'metadata':
        if (!entriesOk(field, metadataKeyOk)) return null;
        data.metadata = field;
        break;
      case 'max_cost_usd': {
        const micros = typeof field === 'string' ? parseUsd(field) : null;
        if (micros === null || micros === 0 || !Number.isSafeInteger(micros)) return null;
        data.max_cost_usd = micros;
        break;
      }
      default:
        return null;
    }
  }
  return hasPrompt ? data : null;
}
