import { readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { shownFromCwd } from '../../documents/shown-path.js';
import { type Refusal, type TargetKind, targetRefused } from './named-target.js';
import {
  exists,
  headOf,
  isSqliteHead,
  namedFile,
  ownedFolderOf,
  ownedWords,
  ownerWords,
  PROTECTED,
  sqliteCompanion,
  type TargetGuard,
} from './protected-files.js';

/**
 * The door (named-target.ts) for a folder a command fills, audit's dispute bundle: never a
 * protected file, an output folder a batch owns or anything in one; a new or empty folder is
 * written, and an earlier folder of the command's own kind is replaced only with `force` (it is
 * evidence a person may have sent on). A file in its place, or a folder of other files, is refused
 * even with `force`: replacing it would delete what the command did not make.
 */

export interface FolderKind extends Pick<TargetKind, 'call' | 'option' | 'writes'> {
  /** Whether an existing, not empty folder is one this command wrote before. */
  isOwn(dir: string): boolean;
}

/** How the folder is written: into a new or empty one, or over an earlier one of its own. */
export type FolderWrite = 'new' | 'replace';

/** Throws `target_refused` (nothing written) unless `kind` may be written into `dir` (absolute). */
export function refuseNamedFolder(
  dir: string,
  guard: TargetGuard,
  kind: FolderKind,
  force: boolean,
): FolderWrite {
  const verdict = judgeFolder(dir, guard, kind, force);
  if (typeof verdict === 'string') return verdict;
  const shown = shownFromCwd(guard.cwd, dir);
  const never = `\`${kind.call}\` never writes`;
  const { refused, what } = verdict;
  const messages: Partial<Record<Refusal, string>> = {
    in_owned_folder: `${shown} is in ${what}; ${never} there, not even with \`force\`. Nothing was written; name a folder outside it`,
    output_folder: `${shown} is ${what}; ${never} there, not even with \`force\`. Nothing was written; name another folder`,
    file: `${shown} is a file; ${kind.writes} goes into a new or empty folder. Nothing was written; name a folder`,
    not_empty: `${shown} is a folder that is not empty and holds nothing \`${kind.call}\` wrote; nothing was written. Name a new or empty folder`,
    own_needs_force: `${shown} holds ${what} that \`${kind.call}\` wrote before; nothing was written. Name a new or empty folder, or add \`force\` to replace it`,
  };
  const message =
    messages[refused] ??
    `${shown} is ${what}; ${never} over it, not even with \`force\`. Nothing was written; name a folder`;
  throw targetRefused(dir, kind, refused, what, message);
}

type Verdict = FolderWrite | { refused: Refusal; what: string };

function judgeFolder(dir: string, guard: TargetGuard, kind: FolderKind, force: boolean): Verdict {
  const named = namedFile(dir, guard);
  if (named !== null) return { refused: named, what: PROTECTED[named] };
  const owned = ownedFolderOf(dir, guard);
  if (owned !== null)
    return owned.dir === resolve(dir)
      ? { refused: 'output_folder', what: `the output folder of ${ownerWords(owned)}` }
      : { refused: 'in_owned_folder', what: ownedWords(owned, guard.cwd) };
  if (!exists(dir)) return 'new';
  if (sqliteCompanion(dir)) return { refused: 'sqlite_companion', what: PROTECTED.sqlite_companion };
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true)
    return isSqliteHead(headOf(dir))
      ? { refused: 'sqlite', what: PROTECTED.sqlite }
      : { refused: 'file', what: 'a file' };
  if (readdirSync(dir).length === 0) return 'new';
  if (!kind.isOwn(dir)) return { refused: 'not_empty', what: 'a folder of other files' };
  return force ? 'replace' : { refused: 'own_needs_force', what: kind.writes };
}
