import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { humanUsd } from '../../money.js';
import { cleanText } from '../clean-text.js';

/**
 * Escaping for the gallery. Every string on the page that came from the manifest or the service
 * (prompts, ids, input values, error messages) goes through `h` or `attr`: to a browser it is
 * untrusted text, never markup.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** Escaped, cleaned text (no control characters, no signed URL queries). */
export function h(text: string | number | null | undefined): string {
  return text === null || text === undefined ? '' : escapeHtml(cleanText(String(text)));
}

/** A link that keeps working when the page and the outputs are moved together. */
export function fileHref(file: string, baseDir: string, htmlPath: string): string {
  const target = resolve(baseDir, file);
  const rel = relative(dirname(htmlPath), target);
  if (isAbsolute(rel)) return pathToFileURL(target).href; // another drive: no relative path exists
  return rel.split(sep).map(encodeURIComponent).join('/');
}

/** A value as a person reads it: strings bare, anything else as compact JSON. */
export function showValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Amounts already shown: a batch's items cost a few distinct amounts, each shown 100,000 times. */
const SHOWN = new Map<string, string>();
const SHOWN_MOST = 10_000;

/** "$0.200000" as a person reads it: "$0.20", through the one money formatter of src/money.ts. */
export function usd(sixDecimals: string): string {
  let shown = SHOWN.get(sixDecimals);
  if (shown === undefined) {
    if (SHOWN.size >= SHOWN_MOST) SHOWN.clear();
    shown = humanUsd(sixDecimals);
    SHOWN.set(sixDecimals, shown);
  }
  return shown;
}
