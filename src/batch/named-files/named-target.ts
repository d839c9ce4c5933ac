import { statSync } from 'node:fs';
import { shownFromCwd } from '../../documents/shown-path.js';
import { type Fields, UserError } from '../../errors.js';
import { ledgerFileOf } from '../../ledger/index.js';
import type { ManifestHead } from '../../manifest/index.js';
import { withLedger } from '../ledger/ledger-read.js';
import type { Batch } from '../resolve/resolve-batch.js';
import {
  headOf,
  isSqliteHead,
  ledgerFiles,
  namedFile,
  ownedFileKind,
  ownedFolderOf,
  ownedWords,
  PROTECTED,
  type ProtectedKind,
  savedKind,
  sqliteCompanion,
  type TargetGuard,
  targetNames,
} from './protected-files.js';
import { savedFilesNamed } from './saved-names.js';

export type { TargetGuard } from './protected-files.js';

/**
 * The one door for every file written at a path a person names (docs/results.md, "The door for
 * named files"): `plan --out`, `export --out`, `report --html`, `copy-ledger --to` and the library
 * calls behind them; audit's bundle folder comes through `refuseNamedFolder` (named-folder.ts).
 * It refuses before anything is written: the files the command reads, any ledger and what is
 * beside it, anything in an output folder a batch owns, links to any of these (protected-files.ts),
 * a folder, and an existing file of another kind unless `force`. A file of the command's own kind,
 * recognised by its first bytes, is replaced: the command wrote it.
 */

/** What a command writes at a named path, and how it knows a file it wrote before. */
export interface TargetKind {
  /** The public function that writes it, named in refusals (the CLI words it as its command and flag). */
  call: string;
  /** The option that names the path, by its API name. */
  option: string;
  /** What it writes, as "name a file for ...": 'the gallery', 'the approved plan'. */
  writes: string;
  /** Of an existing file that is not its own kind: 'is not a gallery page mediabatch wrote'. */
  notOwn: string;
  /** Whether an existing file is one of its own, from its first bytes. */
  isOwn(head: Buffer): boolean;
  /** Whether `force` may replace a file of another kind (never a protected one). */
  forceable: boolean;
  /** Another way out, after "Name a new file". */
  elsewhere?: string;
  /** The gallery: a page of its own may stand in its batch's own output folder, at a name this accepts. */
  inOutputFolder?: (path: string) => boolean;
}

/** Why a target is refused: a protected kind, or one of the door's own reasons. */
export type Refusal =
  | ProtectedKind
  | 'folder'
  | 'foreign'
  | 'in_owned_folder'
  /** A folder target's own: the output folder itself, a file in its place, a folder of other files, an earlier bundle without `force`. */
  | 'output_folder'
  | 'file'
  | 'not_empty'
  | 'own_needs_force';

type Verdict = { write: 'new' | 'own' | 'forced' } | { refused: Refusal; what: string };

/** What the door needs of a batch: the files it reads and keeps, its output location and owner. */
export function targetGuard(batch: Batch<ManifestHead>): TargetGuard {
  const { manifest } = batch;
  return {
    cwd: batch.cwd,
    named: [
      [manifest.file, 'manifest'],
      ...(manifest.itemsFrom === undefined ? [] : [[manifest.itemsFrom, 'items_from'] as const]),
      ...ledgerFiles(ledgerFileOf(batch.ledger)),
    ],
    outputDir: manifest.outputDir,
    owner: { manifest: manifest.name, ledger: batch.ledgerShown },
  };
}

export interface DoorOptions {
  force: boolean;
  /**
   * The saved files the ledger records under the given names (saved-names.ts). Asked only when it
   * matters: before `force` replaces a file, and to name a refused file better.
   */
  saved?: (names: string[]) => Promise<readonly string[]>;
}

/** The saved files of the batch's ledger under the given names, read only when the door asks. */
export const savedFilesOf =
  (batch: Batch<ManifestHead>) =>
  (names: string[]): Promise<string[]> =>
    withLedger(batch, (ledger) => savedFilesNamed(ledger, names));

/** Throws `target_refused` (nothing written) unless `kind` may be written at `path` (absolute). */
export async function refuseNamedTarget(
  path: string,
  guard: TargetGuard,
  kind: TargetKind,
  options: DoorOptions,
): Promise<void> {
  let verdict = judgeFile(path, guard, kind, options.force, new Set());
  const unsure =
    'write' in verdict ? verdict.write === 'forced' : ['foreign', 'owned_file'].includes(verdict.refused);
  if (unsure && options.saved)
    verdict = judgeFile(path, guard, kind, options.force, new Set(await options.saved(targetNames(path))));
  if ('refused' in verdict) throw refusal(path, guard, kind, verdict);
}

/** The door's decision, in order: each step may refuse; only the last ones write over a file. */
function judgeFile(
  path: string,
  guard: TargetGuard,
  kind: TargetKind,
  force: boolean,
  saved: ReadonlySet<string>,
): Verdict {
  const named = namedFile(path, guard);
  if (named !== null) return { refused: named, what: PROTECTED[named] };
  const owned = ownedFolderOf(path, guard);
  const home = owned?.ours === true && kind.inOutputFolder?.(path) === true;
  // Nothing there, or a link to nothing: writing makes the name, or replaces the link, never what it names.
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    if (owned === null || home) return { write: 'new' };
    return { refused: 'in_owned_folder', what: ownedWords(owned, guard.cwd) };
  }
  if (stat.isDirectory()) return { refused: 'folder', what: 'a folder' };
  if (sqliteCompanion(path)) return { refused: 'sqlite_companion', what: PROTECTED.sqlite_companion };
  const head = headOf(path);
  if (owned !== null && !(home && kind.isOwn(head))) {
    const what = ownedFileKind(path, saved);
    const words = what === 'owned_file' ? `a file in ${ownedWords(owned, guard.cwd)}` : PROTECTED[what];
    return { refused: what, what: words };
  }
  if (kind.isOwn(head)) return { write: 'own' };
  if (isSqliteHead(head)) return { refused: 'sqlite', what: PROTECTED.sqlite };
  const inLedger = savedKind(path, saved);
  if (inLedger !== null) return { refused: inLedger, what: PROTECTED[inLedger] };
  if (force && kind.forceable) return { write: 'forced' };
  return { refused: 'foreign', what: `a file that ${kind.notOwn}` };
}

/** The refusal's words: what the file is, that nothing was written, and the way out. */
function refusal(
  path: string,
  guard: TargetGuard,
  kind: TargetKind,
  { refused, what }: { refused: Refusal; what: string },
): UserError {
  const shown = shownFromCwd(guard.cwd, path);
  const never = `\`${kind.call}\` never writes`;
  const evenForced = kind.forceable ? ', not even with `force`' : '';
  const message =
    refused === 'foreign'
      ? `${shown} exists and ${kind.notOwn}; nothing was written. Name a new file${kind.elsewhere ?? ''}${kind.forceable ? ', or add `force` to replace it' : ''}`
      : refused === 'folder'
        ? `${shown} is a folder; name a file for ${kind.writes}. Nothing was written`
        : refused === 'in_owned_folder'
          ? `${shown} is in ${what}; ${never} there${evenForced}. Nothing was written; name a file outside it`
          : `${shown} is ${what}; ${never} over it${evenForced}. Nothing was written; name another file`;
  return targetRefused(path, kind, refused, refused === 'foreign' ? null : what, message);
}

/** A refusal as the door words its fields: the option, the call, the target, the reason and what it is. */
export function targetRefused(
  path: string,
  kind: Pick<TargetKind, 'call' | 'option'>,
  reason: Refusal,
  guarded: string | null,
  message: string,
): UserError {
  const fields: Fields = { option: kind.option, call: kind.call, target: path, reason, guarded };
  return new UserError(message, 'target_refused', fields);
}
