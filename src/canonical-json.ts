/**
 * JSON with object keys sorted at every level, so that equal content always gives the same text
 * (and the same hash) whatever order its keys were written in. Item ids derived from content and
 * the sandbox's "same request?" check both rest on it. Callers pass JSON values of bounded depth:
 * validated manifest values, or what JSON.parse returned.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Plain loops: this runs once per item, and 100,000 items must load in well under a second.
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    out += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(record[key])}`;
  }
  return `${out}}`;
}
