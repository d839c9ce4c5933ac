/**
 * What a CSV header's column names (docs/manifest.md, "Items from a file"): an item field, a
 * template variable (`vars.NAME`), or an input field, written plainly (`seconds`) or with its
 * place (`input.seconds`), the same field either way. A column a CSV cannot hold, or one a slip
 * away from a known form, is a problem at the header's cell, with the nearest form to write.
 */
import { closestMatch } from '../suggest.js';
import { inputKeyTypo } from './input-fields.js';

/** Columns that are item fields; every other column is an input field. */
export const ITEM_COLUMNS: ReadonlySet<string> = new Set([
  'id',
  'prompt',
  'model',
  'max_cost_usd',
  'variants',
]);
/** Item fields a flat row cannot express; taking them as input fields would surprise. */
const REFUSED_COLUMNS: ReadonlySet<string> = new Set(['input', 'metadata', 'vars']);
/** `vars.product` is the template variable `product`: a row's variables are its own columns. */
export const VARS_PREFIX = 'vars.';
/** `input.seconds` is the input field `seconds`, as a `seconds` column is. */
const INPUT_PREFIX = 'input.';
const PREFIXES = ['input', 'vars'];

/** The key a column's cells go under (an input field's bare name), or why the column is refused. */
export type HeaderColumn = { key: string } | { problem: string };

export function headerColumn(name: string): HeaderColumn {
  if (REFUSED_COLUMNS.has(name))
    return { problem: `a CSV cannot set '${name}' per item; use a .jsonl file for that` };
  if (name.startsWith(INPUT_PREFIX)) return inputColumn(name, name.slice(INPUT_PREFIX.length));
  const dot = name.indexOf('.');
  const prefix = dot > 0 ? name.slice(0, dot) : null;
  const meant = prefix === null || PREFIXES.includes(prefix) ? null : closestMatch(prefix, PREFIXES);
  if (meant !== null)
    return {
      problem: `column '${name}' is neither an input field nor a variable, did you mean '${meant}.${name.slice(dot + 1)}'?`,
    };
  return { key: name };
}

function inputColumn(name: string, field: string): HeaderColumn {
  if (field === '')
    return { problem: `column '${name}' names no input field (write '${INPUT_PREFIX}seconds', say)` };
  if (ITEM_COLUMNS.has(field) || REFUSED_COLUMNS.has(field) || field.startsWith(VARS_PREFIX))
    return { problem: `column '${name}': '${field}' is not an input field; name the column '${field}'` };
  const guess = inputKeyTypo(field);
  if (guess !== null)
    return {
      problem: `column '${name}': unknown input field '${field}', did you mean '${INPUT_PREFIX}${guess}'? (other unknown input fields are sent as written)`,
    };
  return { key: field };
}
