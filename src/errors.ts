/**
 * The one error tree (docs/api.md, "Errors"), as openai-node keeps its own: every error mediabatch
 * throws is a MediabatchError with a `code` to branch on, and every subclass is here. A public call
 * rejects with a UserError (its code is one of ERROR_CODES); the service's and the database's errors
 * are what the layers below throw, and the public calls word them as UserErrors where they reach
 * a caller. Nothing here carries an exit code (exit-codes.ts maps codes to them) or imports from
 * the rest of mediabatch but the codes.
 */
import type { ErrorCode } from './codes.js';

/**
 * What explains an error, a warning or a notice beside its code (docs/api.md): the items, the
 * option involved by its API name (`option: 'redo'`), the values. A message names an option the
 * same way, as `redo` in backticks, never as a command-line flag: the CLI words it as its flag.
 */
export type Fields = Readonly<Record<string, unknown>>;

/** The root: a code a program branches on (it never changes when the words do), and its fields. */
export class MediabatchError extends Error {
  readonly code: string;
  readonly fields: Fields;
  constructor(message: string, code: string, fields: Fields = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.fields = fields;
  }
}

/** A mistake or a refusal the user can act on: printed without a stack trace. */
export class UserError extends MediabatchError {
  declare readonly code: ErrorCode;
  constructor(message: string, code: ErrorCode = 'invalid_usage', fields: Fields = {}) {
    super(message, code, fields);
  }
}

/** An API call was given an option it does not know, or a value of the wrong kind (`option` names it). */
export class OptionError extends UserError {
  readonly option: string;
  constructor(option: string, message: string, fields: Fields = {}) {
    super(message, 'invalid_option', { option, ...fields });
    this.option = option;
  }
}

/** Where a manifest has a problem, and what it is. */
export interface ManifestProblem {
  file: string;
  line: number;
  column: number;
  /** The field, as a dotted path (`items[2].prompt`); empty for the file as a whole. */
  path: string;
  message: string;
}

/** One problem as a line: file:line:column first. */
export function formatProblem(p: ManifestProblem): string {
  const where = `${p.file}:${p.line}:${p.column}`;
  return p.path === '' ? `${where}: ${p.message}` : `${where}: ${p.path}: ${p.message}`;
}

/** A manifest with problems: every one, each with its file, line and column. */
export class ManifestError extends UserError {
  readonly problems: ManifestProblem[];
  constructor(problems: ManifestProblem[]) {
    const count = problems.length;
    super(
      `${count} problem${count === 1 ? '' : 's'} in the manifest:\n${problems.map(formatProblem).join('\n')}`,
      'manifest_invalid',
      { problems },
    );
    this.problems = problems;
  }

  /** Every problem on a line of its own, file:line:column first. */
  get lines(): string {
    return this.problems.map(formatProblem).join('\n');
  }
}

/** What a refused command left undone, in its words ("nothing was copied"). */
export type NothingWas = 'changed' | 'submitted' | 'imported' | 'forgotten' | 'copied' | 'kept' | 'audited';

/** Another live run holds the ledger: the same refusal for every command and the API. */
export class LedgerHeldError extends UserError {
  readonly ledgerPath: string;
  constructor(ledgerPath: string, nothingWas: NothingWas = 'changed') {
    super(`the ledger ${ledgerPath} is held by another live run; nothing was ${nothingWas}`, 'ledger_held', {
      ledger: ledgerPath,
    });
    this.ledgerPath = ledgerPath;
  }
}

/** A new ledger while the service holds this manifest's jobs: the ledger was lost (docs/import.md). */
export class LedgerLostError extends UserError {
  constructor(message: string, fields: Fields) {
    super(message, 'ledger_lost', fields);
  }
}

/** What the service's error envelope says, with the HTTP status and Retry-After. */
export interface ApiErrorFields {
  status: number;
  type: string | null;
  /** The envelope's code; null when the body was not the envelope (a proxy's page, say). */
  serviceCode: string | null;
  param: string | null;
  requestId: string | null;
  /** Seconds from the Retry-After header, when present. */
  retryAfter: number | null;
  message: string;
}

/**
 * The service answered with an HTTP error. `code` is the envelope's code, or `http_<status>` for
 * a body that is not the envelope: callers branch on it, never on the message.
 */
export class ApiError extends MediabatchError {
  readonly status: number;
  readonly type: string | null;
  readonly serviceCode: string | null;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly retryAfter: number | null;

  constructor(fields: ApiErrorFields) {
    const { status, param, requestId } = fields;
    super(fields.message, fields.serviceCode ?? `http_${status}`, { status, param, requestId });
    this.status = status;
    this.type = fields.type;
    this.serviceCode = fields.serviceCode;
    this.param = param;
    this.requestId = requestId;
    this.retryAfter = fields.retryAfter;
  }
}

/** 400: the request itself is wrong (invalid or missing field, max_cost_exceeded); nothing is created. */
export class BadRequestError extends ApiError {}
/** 401: the key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends ApiError {}
/** 402: the wallet is not enabled or its balance is too low. */
export class BillingError extends ApiError {}
/** 404: no such job (or route) in this workspace. */
export class NotFoundError extends ApiError {}
/** 409: the idempotency key was used for a different request. */
export class ConflictError extends ApiError {}
/** 429: the workspace is at its concurrency limit; Retry-After says when to try again. */
export class RateLimitError extends ApiError {}
/** 5xx: a server fault; a POST is resent with the same key and body. */
export class InternalServerError extends ApiError {}

/**
 * No usable answer: the connection failed, dropped, timed out, or the body was not what the service
 * promises. For a POST the job may or may not exist, so the caller must retry with the same key.
 * `code`: `network_error` (no answer came back: refused, DNS, TLS, reset, timeout) or
 * `protocol_error` (something answered, but not as the service does).
 */
export class ApiConnectionError extends MediabatchError {
  readonly requestId: string | null;
  readonly kind: 'network' | 'protocol';
  constructor(
    message: string,
    options: { cause?: unknown; requestId?: string | null; kind?: 'network' | 'protocol' } = {},
  ) {
    const kind = options.kind ?? 'network';
    super(message, `${kind}_error`, {}, { cause: options.cause });
    this.requestId = options.requestId ?? null;
    this.kind = kind;
  }
}

/** The ledger's database stopped answering for longer than the ledger waits: the run stops, no item fails. */
export class DatabaseLostError extends MediabatchError {
  constructor(message: string) {
    super(message, 'database_lost');
  }
}

/** An error the ledger's database gave (a constraint, a bad statement, a refused login), with its SQLSTATE. */
export class DatabaseError extends MediabatchError {
  readonly sqlState: string | null;
  readonly constraint: string | null;
  constructor(message: string, sqlState: string | null, constraint: string | null) {
    super(message, 'database_error', { sqlState, constraint });
    this.sqlState = sqlState;
    this.constraint = constraint;
  }
}
