/**
 * `output.name`: a template that places each item's files, such as "{orientation}/{id}" or
 * "{matrix.style}-{id}". Every rendered name is checked like an id, one folder level at a time,
 * so no item can write outside the output folder, and two items that would share a file are a
 * manifest error instead of one result silently replacing another.
 */
import { basename } from 'node:path';
import { idSegment } from './expand.js';
import { idProblem } from './ids.js';
import { formatPath, type ProblemList, type Source } from './problems.js';
import type { ManifestItem } from './types.js';
import { variantSegment } from './variants.js';

type Part = { text: string } | { field: string } | { matrix: string } | { id: true };

const PLACEHOLDER = /\{([^{}]*)\}/g;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Deep enough for any sensible layout, short enough for every file system's path limit. */
const MAX_NAME_LENGTH = 200;

export type ParsedTemplate = { parts: Part[] } | { problem: string };

/** The template's parts, or why it cannot be used (reported at output.name). */
export function parseNameTemplate(template: string, matrixKeys: readonly string[]): ParsedTemplate {
  const parts: Part[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    const name = match[1]!;
    const axis = name.startsWith('matrix.') ? name.slice('matrix.'.length) : null;
    if (name === 'id') parts.push({ id: true });
    else if (axis !== null) {
      if (!matrixKeys.includes(axis)) {
        const known =
          matrixKeys.length === 0 ? 'the manifest has no matrix' : `axes: ${matrixKeys.join(', ')}`;
        return { problem: `{${name}} names no matrix axis (${known})` };
      }
      parts.push({ matrix: axis });
    } else if (FIELD_NAME.test(name)) parts.push({ field: name });
    else return { problem: `{${name}} is not a placeholder: use {id}, {matrix.AXIS} or {INPUT_FIELD}` };
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ text: template.slice(last) });
  if (parts.some((part) => 'text' in part && /[{}]/.test(part.text)))
    return { problem: 'unbalanced { or } in the name template' };
  // Checked with a harmless stand-in for every value: what is left wrong is the template's own text.
  const sample = parts.map((part) => ('text' in part ? part.text : 'x')).join('');
  const problem = nameProblem(sample);
  return problem === null ? { parts } : { problem: `the template ${problem}` };
}

/** Why a rendered name cannot place a file inside the output folder, or null when it can. */
export function nameProblem(name: string): string | null {
  if (name.length > MAX_NAME_LENGTH) return `gives a name longer than ${MAX_NAME_LENGTH} characters`;
  if (name.startsWith('/')) return 'must give a path inside the output folder, not an absolute one';
  for (const segment of name.split('/')) {
    if (segment === '' || segment === '.' || segment === '..')
      return `gives ${JSON.stringify(name)}: empty, '.' and '..' folder names could leave the output folder`;
    if (idProblem(segment) !== null)
      return `gives ${JSON.stringify(name)}, whose part ${JSON.stringify(segment)} is not a safe file name (letters, digits, '.', '_', '-', starting with a letter or digit)`;
  }
  return null;
}

function render(parts: readonly Part[], item: ManifestItem): string | { missing: string } {
  let out = '';
  for (const part of parts) {
    if ('text' in part) out += part.text;
    else if ('id' in part) out += item.id;
    else {
      const source = 'matrix' in part ? item.matrix : item.input;
      const key = 'matrix' in part ? part.matrix : part.field;
      if (!source || !Object.hasOwn(source, key)) return { missing: key };
      out += idSegment(source[key]);
    }
  }
  // Without {id}, a later variant's file is the first's name and its `.v<n>`, as its id is.
  const variant = variantSegment(item.variant?.number ?? 1);
  return variant === null || parts.some((part) => 'id' in part) ? out : `${out}.${variant}`;
}

/**
 * Gives each item its `name`, or reports why it cannot have one: at output.name for a mistake in
 * the template, at the item for a value that makes a bad name or a name another item already has.
 */
export function assignOutputNames(
  template: string,
  matrixKeys: readonly string[],
  entries: ReadonlyArray<{ item: ManifestItem; source: Source }>,
  top: Source,
  problems: ProblemList,
): void {
  const parsed = parseNameTemplate(template, matrixKeys);
  if ('problem' in parsed) {
    problems.at(top, ['output', 'name'], parsed.problem);
    return;
  }
  const taken = new Map<string, Source>();
  for (const { item, source } of entries) {
    const name = render(parsed.parts, item);
    if (typeof name !== 'string') {
      problems.at(
        source,
        [],
        `output.name uses {${name.missing}}, but this item has no input field '${name.missing}'`,
      );
      continue;
    }
    const problem = nameProblem(name);
    if (problem !== null) {
      problems.at(source, [], `output.name ${problem}`);
      continue;
    }
    const key = name.toLowerCase();
    const first = taken.get(key);
    if (first) {
      const { line } = first.position([], 'value');
      const where = `${formatPath(first.prefix)} at ${basename(first.file)}:${line}`;
      problems.at(
        source,
        [],
        `output.name gives this item the file name '${name}', already given to ${where}; add {id} or a matrix axis to the template`,
      );
      continue;
    }
    taken.set(key, source);
    item.name = name;
  }
}
