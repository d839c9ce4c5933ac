/**
 * Text from the ledger or the service, made safe to show: a job's error message must not be able
 * to move the terminal's cursor or leak a signed URL's query string (its signature) into a log.
 */

// C0/C1 controls (ESC, CR, BEL, ...) and the Unicode line separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const URL_QUERY = /(\bhttps?:\/\/[^\s?#"'<>]*)\?[^\s"'<>]*/gi;
const URL_USERINFO = /(\bhttps?:\/\/)[^\s/?#@"'<>]+@/gi;
const NEEDS_CLEANING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|:\/\//;

/** One line of safe text: no control characters, no URL credentials or query strings. */
export function cleanText(text: string): string {
  // Most cells (ids, paths, job ids) need nothing: one cheap test keeps 100,000-row tables fast.
  if (!NEEDS_CLEANING.test(text)) return text;
  return text.replace(CONTROL, ' ').replace(URL_USERINFO, '$1').replace(URL_QUERY, '$1?…');
}
