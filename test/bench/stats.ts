/** Median, min and max of repeated measurements, and the printed table. */

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
  samples: number[];
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, runs: sorted.length, samples: [...samples] };
}

export type Comparison = '>=' | '<=' | '<';

export interface Row {
  scenario: string;
  figure: string;
  unit: string;
  summary: Summary;
  /** Decimal places shown. */
  digits: number;
  target?: { op: Comparison; value: number };
  note?: string;
}

export function verdict(row: Row): 'ok' | 'MISSED' | '' {
  if (!row.target) return '';
  const { op, value } = row.target;
  const x = row.summary.median;
  const ok = op === '>=' ? x >= value : op === '<=' ? x <= value : x < value;
  return ok ? 'ok' : 'MISSED';
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['scenario', 'figure', 'median', 'min', 'max', 'runs', 'unit', 'target', 'result'];
  const body = rows.map((row) => [
    row.scenario,
    row.figure,
    row.summary.median.toFixed(row.digits),
    row.summary.min.toFixed(row.digits),
    row.summary.max.toFixed(row.digits),
    String(row.summary.runs),
    row.unit,
    row.target ? `${row.target.op} ${row.target.value}` : '',
    verdict(row),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column]!.length)),
  );
  const numeric = new Set([2, 3, 4, 5]);
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(header), rule, ...body.map(line)].join('\n');
}
