/** Plain text laid out for a terminal of a fixed width: help screens (the CLI's `--help`). */

/** The words of `text` in lines of at most `width` characters (a longer word alone on its line). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Two columns: a label, then text wrapped to `width` with a hanging indent; a label too long for
 * its column stands on a line of its own.
 */
export function twoColumns(rows: ReadonlyArray<readonly [string, string]>, width: number): string[] {
  const labelWidth = Math.min(28, Math.max(...rows.map(([label]) => label.length)) + 2);
  const out: string[] = [];
  for (const [label, text] of rows) {
    const body = wrap(text, width - labelWidth - 2);
    const first = label.length + 2 > labelWidth ? [`  ${label}`, ''] : [`  ${label.padEnd(labelWidth)}`];
    if (first.length === 2) out.push(first[0]!);
    const indent = ' '.repeat(labelWidth + 2);
    body.forEach((part, index) => {
      out.push(index === 0 && first.length === 1 ? `${first[0]}${part}` : `${indent}${part}`);
    });
  }
  return out;
}
