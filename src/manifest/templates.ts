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
  /** Its own `fallback_prompts`; absent means the manifest's. */
  fallbackPrompts: readonly string[] | undefined;
  vars: Vars | undefined;
  /** Its own `variants`, which makes its prompt a template (for `{variant}`) as variables do. */
  variants: number | undefined;
}

/** The manifest-wide prompt and variables (empty when absent or invalid). */
export interface SharedTemplate {
  source: Source;
  prompt: string | null;
  /** The manifest's `fallback_prompts`, for items that list none. */
  fallbacks: readonly string[] | null;
  vars: Vars;
  /** The manifest sets `variants`, which makes every prompt a template. */
  variants: boolean;
}

/** A prompt's text and its template; template null: it is sent as written. */
export interface PromptTemplate {
  text: string;
  template: Template | null;
}

/**
 * An item's template, its fallback prompts' (read as templates exactly where its prompt is, with
 * the same variables) and every variable it sees.
 */
export interface ItemTemplate extends PromptTemplate {
  fallbacks: PromptTemplate[];
  vars: Vars | null;
}

/**
 * Each site's template, or null after reporting why it cannot be used. An item's own prompt is a
 * template only where variables exist (so prompts written before templates keep their braces);
 * the manifest's prompt always is.
 */
const asWritten = (text: string): PromptTemplate => ({ text, template: null });

export function prepareTemplates(
  shared: SharedTemplate,
  sites: readonly TemplateSite[],
  problems: ProblemList,
  warnings: ProblemList,
  /**
   * A streamed manifest's manifest variables used so far, across its chunks: then the ones no
   * prompt uses are noted at its end (noteUnusedVars), not here.
   */
  usedAcross?: Set<string>,
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
  const topVars = Object.keys(shared.vars).length > 0;
  const usedTop = usedAcross ?? new Set<string>();
  const prepared = sites.map((site): ItemTemplate | null => {
    const own = site.prompt !== undefined;
    const text = site.prompt ?? shared.prompt;
    if (text === null) {
      problems.at(site.source, ['prompt'], "missing required key 'prompt' (or give the manifest a prompt)");
      return null;
    }
    const ownFallbacks = site.fallbackPrompts !== undefined;
    const fallbackTexts = site.fallbackPrompts ?? shared.fallbacks ?? [];
    const fallbackAt = (index: number): [Source, Path] =>
      ownFallbacks
        ? [site.source, ['fallback_prompts', index]]
        : [shared.source, ['fallback_prompts', index]];
    const vars = site.vars || topVars ? { ...shared.vars, ...site.vars } : null;
    const variants = shared.variants || site.variants !== undefined;
    if (vars === null && own && !variants)
      return { text, template: null, vars: null, fallbacks: fallbackTexts.map(asWritten) };
    // `{variant}` is always known: the variant's number, 1 where the item asks for one.
    const known = [...Object.keys(vars ?? {}), VARIANT_VAR];
    const checked = (one: string, where: [Source, Path], what: string): Template | null => {
      const template = parse(one);
      if (isTemplateError(template)) {
        problems.at(...where, `${template.message} (at character ${template.offset + 1} of the ${what})`);
        return null;
      }
      const missing = template.names.filter((name) => !known.includes(name));
      for (const name of missing) {
        problems.at(...where, `placeholder {${name}} has no variable${didYouMean(name, known)}`);
      }
      return missing.length > 0 ? null : template;
    };
    const template = checked(text, own ? [site.source, ['prompt']] : [shared.source, ['prompt']], 'prompt');
    const fallbacks = fallbackTexts.map((one, index) => ({
      text: one,
      template: checked(one, fallbackAt(index), 'fallback prompt'),
    }));
    if (template === null || fallbacks.some((one) => one.template === null)) return null;
    const used = new Set([template, ...fallbacks.map((one) => one.template!)].flatMap((one) => one.names));
    for (const name of Object.keys(site.vars ?? {})) {
      if (!used.has(name))
        warnings.at(
          site.source,
          ['vars', name],
          `variable '${name}' is not used by this item's prompt`,
          'key',
        );
    }
    for (const name of used) if (!site.vars || !Object.hasOwn(site.vars, name)) usedTop.add(name);
    return { text, template, vars, fallbacks };
  });
  if (usedAcross === undefined) noteUnusedVars(shared, usedTop, warnings);
  return prepared;
}

/** The manifest's variables no prompt uses. */
export function noteUnusedVars(
  shared: SharedTemplate,
  used: ReadonlySet<string>,
  warnings: ProblemList,
): void {
  for (const name of Object.keys(shared.vars)) {
    if (!used.has(name))
      warnings.at(shared.source, ['vars', name], `variable '${name}' is not used by any prompt`, 'key');
  }
}
