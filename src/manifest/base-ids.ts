/**
 * Each item's base id, proven unique ignoring letter case: ids name files, and two names that
 * differ only in case are one file on macOS and Windows. Declared ids are claimed by every item
 * that declares a well-formed one, including items with other mistakes, so that a clash is
 * reported with those mistakes instead of only after they are fixed.
 */
import { basename } from 'node:path';
import { isPlainObject } from '../plain-object.js';
import { type ItemContent, idProblem, stableItemId } from './ids.js';
import { formatPath, type ProblemList, type Source } from './problems.js';

/** An id an item declares, read from its raw value before (and whatever) its other checks say. */
export interface DeclaredId {
  source: Source;
  id: string;
}

/** What naming needs of a checked item draft (expand.ts's ReadyDraft, without a cycle to it). */
export interface IdDraft extends Omit<ItemContent, 'prompt'> {
  source: Source;
  id: string | undefined;
  template: { text: string };
}

export interface BaseId<D extends IdDraft = IdDraft> {
  draft: D;
  id: string;
}

/** The item's own id when it is well formed; a malformed one is its schema's problem, not a claim. */
export function declaredId(value: unknown): string | undefined {
  const id = isPlainObject(value) ? value.id : undefined;
  return typeof id === 'string' && idProblem(id) === null ? id : undefined;
}

/** The ids claimed so far, by lower case. */
export interface IdClaims {
  get(key: string): Claim | undefined;
  set(key: string, claim: Claim): unknown;
}

export interface Claim {
  source: Source;
  id: string;
  declared: boolean;
}

/**
 * Declared ids first, in the order written (`declared` holds every item's, sound or not), then
 * the ids derived from the content of the ready drafts without one. Only ready drafts become
 * bases; a clash is reported at the later item.
 */
export function assignBaseIds<D extends IdDraft>(
  drafts: readonly D[],
  declared: readonly DeclaredId[],
  problems: ProblemList,
  /** Every id claimed so far, by its lower case: a streamed manifest's chunks share one (item-ids.ts). */
  byKey: IdClaims = new Map<string, Claim>(),
): Array<BaseId<D>> {
  const winners = new Set<Source>();
  for (const { source, id } of declared) {
    const first = byKey.get(id.toLowerCase());
    if (first?.declared) problems.at(source, ['id'], clash(id, first));
    else {
      // Only a stream meets a derived id before the declared one: it is the mistake, as when whole.
      if (first) problems.at(first.source, [], clash(first.id, { source, id, declared: true }));
      byKey.set(id.toLowerCase(), { source, id, declared: true });
      winners.add(source);
    }
  }
  const bases: Array<BaseId<D>> = [];
  for (const draft of drafts) {
    if (draft.id !== undefined) {
      if (winners.has(draft.source)) bases.push({ draft, id: draft.id });
      continue;
    }
    const id = stableItemId(contentOf(draft));
    const first = byKey.get(id.toLowerCase());
    if (!first) {
      byKey.set(id.toLowerCase(), { source: draft.source, id, declared: false });
      bases.push({ draft, id });
    } else if (first.declared) problems.at(draft.source, [], clash(id, first));
    else problems.at(draft.source, [], sameContent(id, first));
  }
  return bases;
}

function sameContent(id: string, first: Claim): string {
  return `this item has the same content as ${where(first.source)}, so both would get the id '${id}'; give them explicit ids`;
}

function clash(id: string, first: Claim): string {
  if (first.id === id) return `duplicate id '${id}' (already used by ${where(first.source)})`;
  return `id '${id}' differs from '${first.id}' (${where(first.source)}) only in letter case; their files would collide on case-insensitive file systems`;
}

export function where(source: Source): string {
  const { line } = source.position([], 'value');
  return `${formatPath(source.prefix)} at ${basename(source.file)}:${line}`;
}

/** What an item declares about itself, its prompt as written (a template, not yet rendered). */
function contentOf(draft: IdDraft): ItemContent {
  const { input, model, metadata, maxCostMicros, vars } = draft;
  return { prompt: draft.template.text, input, model, metadata, maxCostMicros, vars };
}
