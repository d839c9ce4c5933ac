import type { ItemState } from './records.js';

/**
 * One row per manifest item, in the order of the ids given, for `export`: what the ledger knows of
 * the item and of the attempt that stands for it (the newest whose files were saved, else the
 * newest). Read a page of ids at a time, so a million rows stream without being held.
 */
export interface ItemExport {
  itemId: string;
  /** Null when the ledger does not know the item. */
  state: ItemState | null;
  errorCode: string | null;
  attempts: number;
  /** Charged net of refunds over every attempt. */
  netMicros: number;
  /** The attempt's prompt, its other `input` fields as JSON text, and its model, as sent. */
  prompt: string | null;
  input: string | null;
  model: string | null;
  /** The variables the attempt's prompt was rendered from, as JSON text. */
  vars: string | null;
  jobId: string | null;
  completedAt: string | null;
  expiresAt: string | null;
  /** The attempt's saved files in index order; empty when it saved none. */
  files: SavedFile[];
}

export interface SavedFile {
  idx: number;
  path: string;
  sha256: string;
  bytes: number;
}

/*
 * Every object made per item here, and per record in report/export-records.ts, comes from a class,
 * not an object literal. When one garbage collection finds most of a literal's recent objects
 * alive, V8 may allocate that literal's objects straight into the old generation from then on
 * ("pretenuring"); there a dead one keeps the young strings it points to alive until the next full
 * collection. In about one 100,000-item export in twelve that added 90 MB to peak RSS. V8 keeps
 * that feedback for literals, not for constructor calls (docs/performance.md).
 */

/** An item's row as export reads it. */
export interface ExportItemRow {
  itemId: string;
  state: ItemState;
  errorCode: string | null;
}

/** One attempt as export reads it. */
export interface ExportAttemptRow {
  itemId: string;
  id: number;
  net: number;
  filesSaved: number | boolean;
  requestBody: string;
  vars: string | null;
  jobId: string | null;
  completedAt: string | null;
  expiresAt: string | null;
}

/** One item's attempts so far: how many, what they cost, and the one that stands for the item. */
export class ItemAttempts {
  count = 0;
  net = 0;
  standing: ExportAttemptRow | null = null;

  add(row: ExportAttemptRow): void {
    this.count += 1;
    this.net += Number(row.net);
    if (stands(row, this.standing)) this.standing = row;
  }
}

const saved = (row: ExportAttemptRow) => row.filesSaved === 1 || row.filesSaved === true;

/** The newest attempt whose files were saved stands for the item, else the newest (ids grow). */
function stands(row: ExportAttemptRow, standing: ExportAttemptRow | null): boolean {
  if (standing === null) return true;
  return saved(row) === saved(standing) ? row.id > standing.id : saved(row);
}

/** Whether the standing attempt's files are to be read. */
export function savedStanding(attempts: ItemAttempts | undefined): number | null {
  const standing = attempts?.standing;
  return standing && saved(standing) ? standing.id : null;
}

export class FileRow implements SavedFile {
  constructor(
    readonly idx: number,
    readonly path: string,
    readonly sha256: string,
    readonly bytes: number,
  ) {}
}

export class ExportedItem implements ItemExport {
  readonly state: ItemState | null;
  readonly errorCode: string | null;
  readonly attempts: number;
  readonly netMicros: number;
  readonly prompt: string | null;
  readonly input: string | null;
  readonly model: string | null;
  readonly vars: string | null;
  readonly jobId: string | null;
  readonly completedAt: string | null;
  readonly expiresAt: string | null;

  constructor(
    readonly itemId: string,
    item: ExportItemRow | undefined,
    attempts: ItemAttempts | undefined,
    readonly files: SavedFile[],
  ) {
    const standing = attempts?.standing ?? null;
    const [prompt, input, model] = standing ? requestParts(standing.requestBody) : [null, null, null];
    this.state = item?.state ?? null;
    this.errorCode = item?.errorCode ?? null;
    this.attempts = attempts?.count ?? 0;
    this.netMicros = attempts?.net ?? 0;
    this.prompt = prompt as string | null;
    this.input = input;
    this.model = model as string | null;
    this.vars = standing?.vars ?? null;
    this.jobId = standing?.jobId ?? null;
    this.completedAt = standing?.completedAt ?? null;
    this.expiresAt = standing?.expiresAt ?? null;
  }
}

/**
 * What export writes of a request body: its prompt and model as SQLite's json_extract gives them,
 * and its input without the prompt as minified JSON text, read from the body itself (PostgreSQL's
 * jsonb would reorder an input's keys and print it with spaces; export writes the text as sent).
 */
function requestParts(body: string): [prompt: unknown, input: string | null, model: unknown] {
  let parsed: { input?: unknown; model?: unknown } | null;
  try {
    parsed = JSON.parse(body) as { input?: unknown; model?: unknown } | null;
  } catch {
    return [null, null, null];
  }
  const input = parsed?.input;
  let rest: string | null = null;
  if (input !== undefined && input !== null) {
    if (typeof input === 'object' && !Array.isArray(input)) {
      const { prompt: _prompt, ...others } = input as Record<string, unknown>;
      rest = JSON.stringify(others);
    } else rest = JSON.stringify(input);
  }
  return [sqliteValue(fieldOf(input, 'prompt')), rest, sqliteValue(parsed?.model)];
}

function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** A JSON value as SQLite's json_extract gives it: null when absent, true as 1, objects as text. */
function sqliteValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return typeof value === 'object' ? JSON.stringify(value) : value;
}
