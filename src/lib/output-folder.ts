import { basename, dirname, join, relative } from 'node:path';
import {
  checkOwner,
  claimFolder,
  type FolderOwner,
  OWNER_MARKER,
  type OwnerVerdict,
} from '../downloads/output-owner.js';
import { UserError } from '../errors.js';
import { describeService } from '../ledger/service.js';
import type { Manifest } from '../manifest/index.js';

/**
 * The output folder's owner as the commands see it (docs/manifest.md, "Who owns an output
 * folder"): `run` and `import` claim it for their ledger before anything is sent; `plan` reads
 * who owns it and says what `run` would do.
 */

interface FolderContext {
  manifest: Manifest;
  ledgerPath: string;
  /** The service this ledger runs against, for the marker (informative). */
  service: string;
  /** Where paths are shown from. */
  cwd: string;
}

/**
 * Claims the output folder for this ledger, or refuses (exit 2) when another ledger owns it.
 * A folder that cannot be written (full disk, no permission, a file in its place) is not a
 * reason to stop here: the run goes on as before, its downloads say what is wrong and a re-run
 * saves them, and claims the folder then. Returns that warning, or null.
 */
export function claimOutputFolder(context: FolderContext): string | null {
  const { manifest, ledgerPath, service } = context;
  const me: FolderOwner = { manifest: manifest.name, ledger: ledgerPath, service };
  let verdict: OwnerVerdict;
  try {
    verdict = claimFolder(manifest.outputDir, me, new Date().toISOString());
  } catch (error) {
    return (
      `cannot write the owner marker into the output folder ${shown(context.cwd, manifest.outputDir)} ` +
      `(${(error as Error).message}); the next run claims it`
    );
  }
  const refusal = ownerRefusal(verdict, context);
  if (refusal !== null) throw new UserError(`${refusal}; nothing was sent`);
  return null;
}

/** Refuses (exit 2) a folder another ledger owns, without writing anything. */
export function refuseOthersOutputFolder(context: FolderContext): void {
  const refusal = outputFolderRefusal(context);
  if (refusal !== null) throw new UserError(`${refusal}; nothing was sent`);
}

/** What `run` would say about the output folder, read without writing anything; null: nothing. */
export function outputFolderRefusal(context: Omit<FolderContext, 'service'>): string | null {
  const verdict = checkOwner(context.manifest.outputDir, {
    manifest: context.manifest.name,
    ledger: context.ledgerPath,
  });
  return ownerRefusal(verdict, context);
}

function ownerRefusal(verdict: OwnerVerdict, context: Omit<FolderContext, 'service'>): string | null {
  if (verdict.kind === 'mine' || verdict.kind === 'unclaimed') return null;
  const { manifest, cwd } = context;
  const folder = shown(cwd, manifest.outputDir);
  const marker = shown(cwd, join(manifest.outputDir, OWNER_MARKER));
  if (verdict.kind === 'unreadable')
    return `the output folder ${folder} has an owner marker ${marker} that cannot be read (${verdict.reason}); move it away if no other batch writes to this folder`;
  const { owner } = verdict;
  const example = shown(cwd, otherFolder(manifest, owner));
  return (
    `the output folder ${folder} belongs to another batch: manifest ${owner.manifest}, ledger ` +
    `${shown(cwd, owner.ledger)} (${describeService(owner.service)}). Running this one into it could ` +
    'overwrite the files that batch paid for.\n' +
    `  Give ${manifest.name} a folder of its own: set output.dir in ${shown(cwd, manifest.file)} ` +
    `(for example ${example}).\n` +
    `  If that batch and its ledger are gone for good, delete ${marker} to let this ledger claim the ` +
    'folder (files it did not write are never overwritten)'
  );
}

/** A free-looking sibling folder to suggest: named after this manifest, else numbered. */
function otherFolder(manifest: Manifest, owner: FolderOwner): string {
  const parent = dirname(manifest.outputDir);
  return owner.manifest !== manifest.name && basename(manifest.outputDir) !== manifest.name
    ? join(parent, manifest.name)
    : `${manifest.outputDir}-2`;
}

function shown(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}
