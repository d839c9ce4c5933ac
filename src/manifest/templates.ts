/**
 * Checks each item's prompt template against the variables it can see (the manifest's, then its
 * own), before anything is expanded: a placeholder with no variable, a stray or unclosed brace are
 * problems where the prompt was written; a variable no prompt uses is a warning.
 */
import { didYouMean } from '../suggest.js';
import type { Path, ProblemList, Source } from './problems.js';
import { isTemplateError, parseTemplate, type Template, type VarValue } from './template.js';
import { VARIANT_VAR } from './variants.js';

export type Vars = Record<string, VarValue | VarValue[]>;

/** What a template check needs of an item draft. */
export interface TemplateSite {
  source: Source;
  prompt: string | undefined;
  vars: Vars | undefined;
  /** Its own `variants`, which makes its prompt a template (for `{variant}`) as variables do. */
  variants: number | undefined;
}

/** The manifest-wide prompt and variables (empty when absent or invalid). */
export interface SharedTemplate {
  source: Source;
  prompt: string | null;
  vars: Vars;
  /** The manifest sets `variants`, which makes every prompt a template. */
  variants: boolean;
}

/** An item's template and every variable it sees; template null: its prompt is sent as written. */
export interface ItemTemplate {
  text: string;
  template: Template | null;
  vars: Vars | null;
}

/**
 * Each site's template, or null after reporting why it cannot be used. An item's own prompt is a
 * template only where variables exist (so prompts written before templates keep their braces);
 * the manifest's prompt always is.
 */
export function prepareTemplates(
  shared: SharedTemplate,
  sites: readonly TemplateSite[],
  problems: ProblemList,
  warnings: ProblemList,
): Array<ItemTemplate | null> {
  const parsed = new Map<string, ReturnType<typeof parseTemplate>>();
  const parse = (text: string) => {
    let result = parsed.get(text);
    if (result === undefined) {
      result = parseTemplate(text);
      parsed.set(text, result);
    }
    return result;
  };
  const topNames = Object.keys(shared.vars);
  const usedTop = new Set<string>();
  const prepared = sites.map((site): ItemTemplate | null => {
    const own = site.prompt !== undefined;
    const text = site.prompt ?? shared.prompt;
    if (text === null) {
      problems.at(site.source, ['prompt'], "missing required key 'prompt' (or give the manifest a prompt)");
      return null;
    }
    const where: [Source, Path] = own ? [site.source, ['prompt']] : [shared.source, ['prompt']];
    const vars = site.vars || topNames.length > 0 ? { ...shared.vars, ...site.vars } : null;
    const variants = shared.variants || site.variants !== undefined;
    if (vars === null && own && !variants) return { text, template: null, vars: null };
    const template = parse(text);
    if (isTemplateError(template)) {
      problems.at(...where, `${template.message} (at character ${template.offset + 1} of the prompt)`);
      return null;
    }
    // `{variant}` is always known: the variant's number, 1 where the item asks for one.
    const known = [...Object.keys(vars ?? {}), VARIANT_VAR];
    const missing = template.names.filter((name) => !known.includes(name));
    for (const name of missing) {
      problems.at(...where, `placeholder {${name}} has no variable${didYouMean(name, known)}`);
    }
    if (missing.length > 0) return null;
    for (const name of Object.keys(site.vars ?? {})) {
      if (!template.names.includes(name))
        warnings.at(
          site.source,
          ['vars', name],
          `variable '${name}' is not used by this item's prompt`,
          'key',
        );
    }
    for (const name of template.names) if (!site.vars || !Object.hasOwn(site.vars, name)) usedTop.add(name);
    return { text, template, vars };
  });
  for (const name of topNames) {
    if (!usedTop.has(name))
      warnings.at(shared.source, ['vars', name], `variable '${name}' is not used by any prompt`, 'key');
  }
  return prepared;
}
