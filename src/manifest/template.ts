/**
 * Prompt templates: `{name}` is replaced by the variable's value, `{{` and `}}` write one literal
 * brace. Pure; parsed once per distinct template text, since 100,000 items may share one.
 */

/** A variable's value once a list has been expanded: what a placeholder can print. */
export type VarValue = string | number | boolean;

export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Part = string | { name: string };

export interface Template {
  parts: readonly Part[];
  /** The variables the template uses, in order of first use. */
  names: readonly string[];
}

export interface TemplateError {
  message: string;
  /** Offset in the template text of the character the message is about. */
  offset: number;
}

/** The template's parts, or its first mistake: an unclosed or stray brace, or a bad name. */
export function parseTemplate(text: string): Template | TemplateError {
  const parts: Part[] = [];
  const names: string[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if ((ch === '{' || ch === '}') && text[i + 1] === ch) {
      literal += ch;
      i += 2;
    } else if (ch === '}') {
      return { message: "a '}' closes no placeholder (write '}}' for a literal brace)", offset: i };
    } else if (ch === '{') {
      const end = text.indexOf('}', i + 1);
      const open = text.indexOf('{', i + 1);
      if (end === -1 || (open !== -1 && open < end))
        return { message: "unclosed brace: a '{' has no '}' (write '{{' for a literal brace)", offset: i };
      const name = text.slice(i + 1, end);
      if (!VAR_NAME.test(name))
        return {
          message: `{${name}} is not a placeholder: a variable name is letters, digits and '_' (write '{{' for a literal brace)`,
          offset: i,
        };
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push({ name });
      if (!names.includes(name)) names.push(name);
      i = end + 1;
    } else {
      literal += ch;
      i += 1;
    }
  }
  if (literal !== '') parts.push(literal);
  return { parts, names };
}

export function isTemplateError(parsed: Template | TemplateError): parsed is TemplateError {
  return 'message' in parsed;
}

/** The text a value prints as: strings as written, numbers and booleans as YAML would show them. */
export function varText(value: VarValue): string {
  return typeof value === 'string' ? value : String(value);
}

/** The template with every placeholder replaced; every name must be in `vars` (checked before). */
export function renderTemplate(template: Template, vars: Readonly<Record<string, VarValue>>): string {
  let out = '';
  for (const part of template.parts) out += typeof part === 'string' ? part : varText(vars[part.name]!);
  return out;
}

/**
 * Every combination of the list-valued variables, the first varying slowest; scalars are the same
 * in each. A map with no lists gives one combination.
 */
export function varCombinations(
  vars: Readonly<Record<string, VarValue | readonly VarValue[]>>,
): Array<{ vars: Record<string, VarValue>; listed: VarValue[] }> {
  let combos: Array<{ vars: Record<string, VarValue>; listed: VarValue[] }> = [{ vars: {}, listed: [] }];
  for (const [name, value] of Object.entries(vars)) {
    if (Array.isArray(value)) {
      combos = combos.flatMap((combo) =>
        (value as readonly VarValue[]).map((one) => ({
          vars: { ...combo.vars, [name]: one },
          listed: [...combo.listed, one],
        })),
      );
    } else for (const combo of combos) combo.vars[name] = value as VarValue;
  }
  return combos;
}

/** How many combinations varCombinations would give, without making them. */
export function combinationCount(vars: Readonly<Record<string, unknown>>): number {
  let count = 1;
  for (const value of Object.values(vars)) if (Array.isArray(value)) count *= value.length;
  return count;
}
