/**
 * A map as JSON and YAML data have it: an object straight from a literal, JSON.parse or a YAML map,
 * not an array, a Date, a Buffer or a class instance, which would each need their own handling.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
