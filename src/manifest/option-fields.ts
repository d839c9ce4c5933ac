/**
 * Names a person writes into a manifest that are not manifest fields but options of a command (a
 * ledger, an export format, a redo): the problem says where each belongs instead of listing every
 * field. The option is named as the API names it, in backticks, so the CLI words it as its flag;
 * the field itself is quoted as the manifest quotes every field, 'ledger'.
 */
const OPTION_FIELDS: Readonly<Record<string, string>> = {
  ledger: 'the ledger is chosen for each command with `ledger`, not in the manifest',
  format: "not a manifest field: `format` chooses export's record format (jsonl or csv) when exporting",
  redo: "a redo is asked for when running, with `redo` and the item's id, not in the manifest",
  only: 'the items one run works on are picked with `only` when running, not in the manifest',
  sandbox: 'the sandbox is chosen for each command with `sandbox`, not in the manifest',
  baseurl: "the service's address is given with `baseUrl` (or MEDIAGEN_BASE_URL), not in the manifest",
  apikey: 'the API key is read from MEDIAGEN_API_KEY only, never from a file',
  pollinterval: 'the poll interval is chosen when running, with `pollInterval`',
  retryfailed: 'failed items are sent again when running with `retryFailed`, not by the manifest',
  regenerateexpired: 'expired outputs are paid for again when running with `regenerateExpired`',
  oncomplete: 'the command run at the end is given when running, with `onComplete`',
};

/** Where a field that is a command's option belongs, or null for any other name. */
export function optionFieldHint(key: string): string | null {
  const name = key.toLowerCase().replace(/[-_]/g, '');
  return Object.hasOwn(OPTION_FIELDS, name) ? OPTION_FIELDS[name]! : null;
}
