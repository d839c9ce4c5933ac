import { statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { shownFromCwd } from '../../documents/shown-path.js';
import { UserError } from '../../errors.js';
import {
  isSharedLocation,
  type LedgerLocation,
  namedLocation,
  openLedger,
  type StoredDefinition,
} from '../../ledger/index.js';
import { type BatchDefinition, manifestOfDefinition, parseDefinition } from '../../manifest/definition.js';
import { isS3Uri, type Manifest } from '../../manifest/index.js';
import { closestMatch } from '../../suggest.js';
import { environmentOf } from '../resolve/resolve-batch.js';
import { readSettings } from '../resolve/settings.js';

/**
 * A runner without a copy of the manifest (docs/shared-ledger.md, "Adding a machine"): the shared
 * batch's current revision, read from its PostgreSQL ledger alone, as the manifest every command
 * then runs. Where the outputs go comes from the definition: an `s3://` location as it is, or a
 * folder relative to the manifest's folder, which this machine names (`outputDir`).
 */

export interface DefinedBatchRequest {
  /** The shared ledger's `postgres://` URL (its password, or PGPASSWORD's, never shown). */
  ledger: string | undefined;
  /** The batch's name, its manifest's `name`. */
  batch: string;
  /** Where the definition's output folder is on this machine. */
  outputDir: string | undefined;
  cwd: string;
  /** Default: the process's (resolve-batch.ts, environmentOf). */
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * The batch's current revision as a manifest, or a refusal (exit 2) that says what to give. It only
 * reads: what a refusal leaves undone is the caller's to say (a run submits nothing, a status shows
 * nothing).
 */
export async function definedManifest(request: DefinedBatchRequest): Promise<Manifest> {
  const settings = readSettings(environmentOf(request.env));
  const location =
    request.ledger === undefined ? null : namedLocation(request.ledger, request.cwd, settings.postgresEnv);
  if (location === null || !isSharedLocation(location))
    throw new UserError(
      `batch "${request.batch}" is read from the definition a shared ledger stores: give \`ledger\`, its postgres:// ` +
        "URL (a SQLite ledger keeps no definition: its manifest is the batch's)",
      'invalid_option',
      { option: 'ledger' },
    );
  const stored = await currentDefinition(location, request, settings.reconnectWithinMs);
  const definition = parseDefinition(stored.definition);
  return manifestOfDefinition(definition, rootOnThisMachine(definition, request, stored.revision));
}

async function currentDefinition(
  location: LedgerLocation,
  request: DefinedBatchRequest,
  reconnectWithinMs: number,
): Promise<StoredDefinition> {
  let stored: StoredDefinition | null;
  let defined: string[] = [];
  try {
    // Read-only: a batch the database does not know reads as one without a definition.
    const ledger = await openLedger(location, request.batch, join(request.cwd, `${request.batch}.yaml`), {
      readonly: true,
      reconnectWithinMs,
    });
    try {
      stored = (await ledger.definitions?.current()) ?? null;
      if (stored === null) defined = (await ledger.definitions?.definedNames(MANY_BATCHES + 1)) ?? [];
    } finally {
      await ledger.close();
    }
  } catch (error) {
    throw new UserError(
      `cannot read the ledger ${location.shown}: ${(error as Error).message}`,
      'ledger_unusable',
    );
  }
  if (stored !== null) return stored;
  throw definitionMissing(request.batch, location.shown, defined);
}

/** How many batch names a refusal lists; past it, their count. */
const LISTED_BATCHES = 10;
/** How many names are read for "did you mean"; past it, "more than". */
const MANY_BATCHES = 1000;

/**
 * No definition of the batch named: the name closest to it among the batches the database
 * defines ("did you mean"), and those batches when they are few, else how many there are.
 */
function definitionMissing(batch: string, ledger: string, defined: readonly string[]): UserError {
  const suggestion = closestMatch(batch, defined);
  const count = defined.length > MANY_BATCHES ? `more than ${MANY_BATCHES}` : String(defined.length);
  const holds =
    defined.length === 0
      ? 'it defines no batch yet'
      : defined.length <= LISTED_BATCHES
        ? `the batch${defined.length === 1 ? '' : 'es'} it defines: ${defined.join(', ')}`
        : `it defines ${count} batches`;
  const head = `${ledger} holds no definition of batch "${batch}"`;
  const words =
    suggestion !== null
      ? `${head}, did you mean "${suggestion}"? (${holds})`
      : `${head} (${holds}): no runner has run it with its manifest on this ledger yet, or the name is not ` +
        `the manifest's 'name'. Run it once with its manifest and this \`ledger\` (\`only\` naming one item, ` +
        "if the rest is for the other runners): that stores the manifest as the batch's definition, which " +
        'runners without a copy then run';
  return new UserError(words, 'definition_missing', {
    batch,
    ledger,
    suggestion,
    batches: defined.length <= LISTED_BATCHES ? [...defined] : null,
  });
}

/**
 * The folder standing for the manifest's on this machine: for an `s3://` output, the working
 * folder (nothing is saved under it); for a folder relative to the manifest's, the one holding
 * `outputDir` as the definition's `output.dir` holds it, so files are recorded by the same
 * relative paths on every machine.
 */
function rootOnThisMachine(
  definition: BatchDefinition,
  request: DefinedBatchRequest,
  revision: number,
): string {
  const dir = definition.output.dir;
  const what = `batch "${request.batch}" (revision ${revision}) saves to ${dir}`;
  if (isS3Uri(dir)) {
    if (request.outputDir === undefined) return resolve(request.cwd);
    throw new UserError(`${what}, a bucket every runner reaches: leave \`outputDir\` out`, 'invalid_option', {
      option: 'outputDir',
    });
  }
  const segments = dir.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..'))
    throw outputDirUnknown(
      `${what}, outside the manifest's folder: the runners that defined it record its files by their paths on their own machines, so only a runner with the manifest can run it (or define it with an output.dir inside the manifest's folder, or in S3)`,
      request,
    );
  if (request.outputDir === undefined)
    throw outputDirUnknown(
      `${what}, a folder relative to the manifest's, and this runner has no manifest: give \`outputDir\`, where that folder, shared with the batch's other runners, is on this machine`,
      request,
    );
  const given = resolve(request.cwd, request.outputDir);
  let root = given;
  for (const segment of [...segments].reverse()) {
    if (basename(root) !== segment)
      throw outputDirUnknown(
        `${what}, relative to the manifest's folder, and every runner records its files so (${dir}/<name>): ` +
          `\`outputDir\` must be that folder on this machine, a path ending in ${dir}, not ${shownFromCwd(request.cwd, given)}`,
        request,
      );
    root = dirname(root);
  }
  if (!isFolder(given))
    throw outputDirUnknown(
      `${what}: \`outputDir\` ${shownFromCwd(request.cwd, given)} is not a folder on this machine; mount the batch's shared output folder there`,
      request,
    );
  return root;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function outputDirUnknown(words: string, request: DefinedBatchRequest): UserError {
  return new UserError(words, 'output_dir_unknown', {
    option: 'outputDir',
    batch: request.batch,
  });
}
