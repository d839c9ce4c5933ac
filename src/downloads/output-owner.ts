import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { isS3Uri } from '../manifest/index.js';

/**
 * Who an output folder belongs to. The first run of a ledger writes a small marker into the
 * folder; any other ledger pointing at it is refused before it sends anything, so two batches can
 * never take turns overwriting each other's paid files (docs/manifest.md, "Who owns an output
 * folder").
 *
 * An owner is a ledger file and a batch in it (one ledger file may hold several manifests'
 * batches). The ledger is recorded relative to the folder, so a project copied or moved as a
 * whole keeps its claim, and a lost ledger rebuilt at the same path (`import`) is its owner still.
 * Markers from before that named the ledger by its absolute path; see movedWithProject for when
 * one of those still counts as this project's.
 */

export const OWNER_MARKER = '.mediabatch-owner.json';

export interface FolderOwner {
  /** The manifest's `name` (the ledger's batch). */
  manifest: string;
  /** The ledger file, absolute. */
  ledger: string;
  /** The service the claiming run ran against (informative; the ledger itself is bound to one). */
  service: string;
  /** Read from a marker that gave the ledger as an absolute path (a bucket's, or an older folder's). */
  absolute?: true;
  /**
   * Where the ledger was when it claimed the folder, absolute (a folder's marker's `ledger_at`):
   * a ledger kept outside the project (`--ledger` elsewhere) stays put while the project moves.
   */
  ledgerAt?: string;
}

/** What a run may do with an output folder. */
export type OwnerVerdict =
  | { kind: 'unclaimed' }
  /** `moved`: an older marker of this project from before it moved (movedWithProject). */
  | { kind: 'mine'; moved?: true }
  | { kind: 'other'; owner: FolderOwner }
  | { kind: 'unreadable'; reason: string };

/** A ledger named by an address (postgres://...), not a file: never relative to anything. */
const isAddress = (ledger: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(ledger);

/** Pure: whether `marker` (the folder's marker, parsed, or null when there is none) names `me`. */
export function ownerVerdict(
  marker: FolderOwner | null,
  me: Pick<FolderOwner, 'manifest' | 'ledger'>,
): OwnerVerdict {
  if (marker === null) return { kind: 'unclaimed' };
  const sameLedger = marker.ledger === me.ledger || marker.ledgerAt === me.ledger;
  return sameLedger && marker.manifest === me.manifest ? { kind: 'mine' } : { kind: 'other', owner: marker };
}

/**
 * Pure: the marker's text for an owner: the ledger relative to the folder (it moves with the
 * project), and where it is now (it stays put while the project moves without it).
 */
export function markerText(folder: string, owner: FolderOwner, claimedAt: string): string {
  // A bucket is no folder to be relative to: its marker names the ledger's absolute path. A shared
  // ledger is named by its database's address (no password), the same for every runner.
  const kept = isS3Uri(folder) || isAddress(owner.ledger);
  const ledger = kept ? owner.ledger : relative(folder, owner.ledger) || owner.ledger;
  return `${JSON.stringify(
    {
      mediabatch_output_folder: 1,
      manifest: owner.manifest,
      ledger,
      ...(kept ? {} : { ledger_at: owner.ledger }),
      service: owner.service,
      claimed_at: claimedAt,
    },
    null,
    2,
  )}\n`;
}

/** Pure: the marker's text back to an owner (ledger made absolute), or why it cannot be read. */
export function parseMarker(folder: string, text: string): FolderOwner | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'it is not JSON' };
  }
  const fields = (value ?? {}) as Record<string, unknown>;
  const { manifest, ledger, service, ledger_at: ledgerAt } = fields;
  if (fields.mediabatch_output_folder !== 1 || typeof manifest !== 'string' || typeof ledger !== 'string')
    return { problem: 'it is not a mediabatch owner marker' };
  const asGiven = isAbsolute(ledger) || isAddress(ledger);
  return {
    manifest,
    ledger: asGiven ? ledger : resolve(folder, ledger),
    service: typeof service === 'string' ? service : 'unknown',
    ...(asGiven ? { absolute: true as const } : {}),
    ...(typeof ledgerAt === 'string' && isAbsolute(ledgerAt) ? { ledgerAt } : {}),
  };
}

/**
 * Pure: whether a folder marker naming another ledger by its absolute path (as markers did before
 * they were written relative to the folder) is this project's own, moved as a whole since: same
 * batch (manifest name), same ledger file name, and nothing left at the old path (`exists`). A
 * ledger still at the old path keeps its folder: it is another batch's, or the original a copy
 * was made from (a copy with such a marker is refused, the safe way to be wrong). A marker
 * written relative to the folder never needs this: it moves, and is copied, with the project. Only checkOwner (a folder) asks, never a bucket's marker: a bucket is shared by
 * whoever points at it and does not move with a project, so a ledger "gone" from this machine
 * may be alive on another.
 */
export function movedWithProject(
  owner: FolderOwner,
  me: Pick<FolderOwner, 'manifest' | 'ledger'>,
  exists: (path: string) => boolean,
): boolean {
  return (
    owner.absolute === true &&
    owner.manifest === me.manifest &&
    basename(owner.ledger) === basename(me.ledger) &&
    !exists(owner.ledger)
  );
}

/** Reads the folder's marker: null when there is none. */
function readMarker(folder: string): FolderOwner | { problem: string } | null {
  let text: string;
  try {
    text = readFileSync(join(folder, OWNER_MARKER), 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT' || (error as { code?: unknown }).code === 'ENOTDIR')
      return null;
    return { problem: (error as Error).message };
  }
  return parseMarker(folder, text);
}

/** Reads who owns `folder`, as `me` sees it; writes nothing. */
export function checkOwner(folder: string, me: Pick<FolderOwner, 'manifest' | 'ledger'>): OwnerVerdict {
  const verdict = markerVerdict(readMarker(folder), me);
  if (verdict.kind === 'other' && movedWithProject(verdict.owner, me, existsSync))
    return { kind: 'mine', moved: true };
  return verdict;
}

/** Pure: the verdict on a marker as read (parsed, or why it cannot be), null when there is none. */
export function markerVerdict(
  marker: FolderOwner | { problem: string } | null,
  me: Pick<FolderOwner, 'manifest' | 'ledger'>,
): OwnerVerdict {
  if (marker !== null && 'problem' in marker) return { kind: 'unreadable', reason: marker.problem };
  return ownerVerdict(marker, me);
}

/**
 * Claims `folder` for `me` when nobody has (creating the folder), and returns the verdict as it
 * stands after: `mine` once claimed. The marker is written whole under a temporary name and linked
 * into place only if no marker is there yet, so two first runs racing for one folder cannot both
 * win, and a crash never leaves half a marker.
 */
export function claimFolder(folder: string, me: FolderOwner, claimedAt: string): OwnerVerdict {
  const seen = checkOwner(folder, me);
  if (seen.kind === 'mine' && seen.moved) {
    // The old marker is rewritten in today's form, relative: the claim now moves with the project
    // without guessing, and a file appearing later at the old path cannot take it away.
    writeMarker(folder, me, claimedAt, (temp, marker) => renameSync(temp, marker));
    return { kind: 'mine' };
  }
  if (seen.kind !== 'unclaimed') return seen;
  mkdirSync(folder, { recursive: true });
  try {
    // Linked, not renamed: only if no marker is there yet.
    writeMarker(folder, me, claimedAt, linkSync);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    return checkOwner(folder, me);
  }
  return { kind: 'mine' };
}

/**
 * Passes `folder`'s claim from the ledger `from` to the ledger `to` (a batch's whole record copied
 * there): only if `from` holds it, keeping the service it was claimed for. False otherwise, the
 * folder untouched.
 */
export function passFolder(
  folder: string,
  from: Pick<FolderOwner, 'manifest' | 'ledger'>,
  to: string,
): boolean {
  const marker = readMarker(folder);
  if (marker === null || 'problem' in marker || checkOwner(folder, from).kind !== 'mine') return false;
  const owner = { manifest: from.manifest, ledger: to, service: marker.service };
  writeMarker(folder, owner, new Date().toISOString(), (temp, path) => renameSync(temp, path));
  return true;
}

/** Writes the marker whole under a temporary name, then puts it in place with `place`. */
function writeMarker(
  folder: string,
  me: FolderOwner,
  claimedAt: string,
  place: (temp: string, marker: string) => void,
): void {
  // A download's temporary suffix (TEMP_SUFFIX in save-file.ts, not imported: that would load the
  // HTTP client into plan), so a run killed right here has it removed on the next start.
  const temp = join(folder, `.mediabatch-owner.${process.pid}.mbtmp`);
  try {
    writeFileSync(temp, markerText(folder, me, claimedAt), { mode: 0o644 });
    place(temp, join(folder, OWNER_MARKER));
  } finally {
    rmSync(temp, { force: true });
  }
}
