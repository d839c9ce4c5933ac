import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { shownFromCwd } from '../../documents/shown-path.js';
import {
  checkOwner,
  claimFolder,
  type FolderOwner,
  markerText,
  markerVerdict,
  OWNER_MARKER,
  type OwnerVerdict,
  parseMarker,
  passFolder,
} from '../../downloads/output-owner.js';
import { UserError } from '../../errors.js';
import { describeService, namesSharedLedger } from '../../ledger/index.js';
import { isS3Uri, type Manifest, type ManifestHead, outputChild } from '../../manifest/index.js';
import type { MarkerObject, OutputStore } from '../../storage/output-store.js';
import type { Batch } from '../resolve/resolve-batch.js';
import { storeFix } from './save-check.js';

/**
 * The output folder's owner as the commands see it (docs/manifest.md, "Who owns an output
 * folder"): `run` and `import` claim it for their ledger before anything is sent; `plan` reads
 * who owns it and says what `run` would do.
 */

interface FolderContext {
  manifest: ManifestHead;
  ledgerShown: string;
  /** The service this ledger runs against, for the marker (informative). */
  service: string;
  /** Where paths are shown from. */
  cwd: string;
  /** The ledger this manifest uses when none is named, to suggest leaving a wrong one out. */
  defaultLedger?: string;
  /** The ledger was named by the caller (`ledger`): the name itself may be the mistake. */
  ledgerNamed?: boolean;
}

/** The folder context of a batch, for the service it runs against. */
export function folderContextOf(batch: Batch<ManifestHead>, service: string): FolderContext {
  return {
    manifest: batch.manifest,
    ledgerShown: batch.ledgerShown,
    service,
    cwd: batch.cwd,
    defaultLedger: batch.defaultLedger,
    ledgerNamed: batch.named.ledger !== undefined,
  };
}

/**
 * Claims the output folder for this ledger, or refuses (exit 2) when another ledger owns it.
 * A folder that cannot be written (full disk, no permission, a file in its place) is not a
 * reason to stop here: the run goes on as before, its downloads say what is wrong and a re-run
 * saves them, and claims the folder then. Returns that warning, or null.
 */
export async function claimOutputFolder(context: FolderContext, store: OutputStore): Promise<string | null> {
  const { manifest, ledgerShown, service } = context;
  const me: FolderOwner = { manifest: manifest.name, ledger: ledgerShown, service };
  let verdict: OwnerVerdict;
  try {
    const claimedAt = new Date().toISOString();
    verdict = store.marker
      ? await claimMarkerObject(store.marker, store.root, me, claimedAt)
      : claimFolder(manifest.outputDir, me, claimedAt);
  } catch (error) {
    return (
      `cannot write the owner marker into the output folder ${shownFromCwd(context.cwd, manifest.outputDir)} ` +
      `(${(error as Error).message}); the next run claims it`
    );
  }
  const refusal = ownerRefusal(verdict, context);
  if (refusal !== null) throw new UserError(`${refusal}; nothing was sent`, 'output_owned');
  return null;
}

/** Refuses (exit 2) a folder another ledger owns, without writing anything. */
export async function refuseOthersOutputFolder(context: FolderContext, store: OutputStore): Promise<void> {
  const refusal = await outputLocationRefusal(context, store);
  if (refusal !== null) throw new UserError(`${refusal}; nothing was sent`, 'output_owned');
}

/** What `run` would say about the output location, read without writing anything; null: nothing. */
export async function outputLocationRefusal(
  context: Omit<FolderContext, 'service'>,
  store: OutputStore,
): Promise<string | null> {
  if (!isS3Uri(context.manifest.outputDir)) return outputFolderRefusal(context);
  const me = { manifest: context.manifest.name, ledger: context.ledgerShown };
  const { marker } = store;
  const verdict = marker ? await markerObjectVerdict(marker, context.manifest.outputDir, me) : null;
  return verdict === null ? null : ownerRefusal(verdict, context);
}

/**
 * The same for a local folder, synchronously (the library's `plan()`); null for an `s3://`
 * location, whose marker only a request can read (docs/api.md).
 */
export function outputFolderRefusal(context: Omit<FolderContext, 'service'>): string | null {
  if (isS3Uri(context.manifest.outputDir)) return null;
  const me = { manifest: context.manifest.name, ledger: context.ledgerShown };
  return ownerRefusal(checkOwner(context.manifest.outputDir, me), context);
}

/** A bucket's marker, read: as checkOwner reads a folder's. */
async function markerObjectVerdict(
  marker: MarkerObject,
  root: string,
  me: Pick<FolderOwner, 'manifest' | 'ledger'>,
): Promise<OwnerVerdict> {
  const text = await marker.read().catch((error: unknown) => {
    const fix = storeFix(root, (error as { code?: string }).code);
    throw new UserError(
      `the output location ${root} cannot be used: could not read its owner marker (${(error as Error).message})${fix ? `. ${fix}` : ''}. Nothing was sent`,
      'output_unusable',
    );
  });
  return markerVerdict(text === null ? null : parseMarker(root, text), me);
}

async function claimMarkerObject(
  marker: MarkerObject,
  root: string,
  me: FolderOwner,
  claimedAt: string,
): Promise<OwnerVerdict> {
  const seen = await markerObjectVerdict(marker, root, me);
  if (seen.kind !== 'unclaimed') return seen;
  await marker.write(markerText(root, me, claimedAt));
  return { kind: 'mine' };
}

function ownerRefusal(verdict: OwnerVerdict, context: Omit<FolderContext, 'service'>): string | null {
  if (verdict.kind === 'mine' || verdict.kind === 'unclaimed') return null;
  const { manifest, cwd } = context;
  const folder = shownFromCwd(cwd, manifest.outputDir);
  const marker = shownFromCwd(cwd, outputChild(manifest.outputDir, OWNER_MARKER));
  if (verdict.kind === 'unreadable')
    return `the output folder ${folder} has an owner marker ${marker} that cannot be read (${verdict.reason}); move it away if no other batch writes to this folder`;
  const { owner } = verdict;
  const example = shownFromCwd(cwd, otherFolder(manifest, owner));
  if (sameBatchOtherLedger(owner, context)) return wrongLedgerRefusal(owner, context, folder, example);
  return (
    `the output folder ${folder} belongs to another batch: manifest ${owner.manifest}, ledger ` +
    `${shownFromCwd(cwd, owner.ledger)} (${describeService(owner.service)}). Running this one into it could ` +
    'overwrite the files that batch paid for.\n' +
    `  Give ${manifest.name} a folder of its own: set output.dir in ${shownFromCwd(cwd, manifest.file)} ` +
    `(for example ${example}).\n` +
    `  If that batch and its ledger are gone for good, delete ${marker} to let this ledger claim the ` +
    'folder (files it did not write are never overwritten)'
  );
}

/**
 * A ledger named by the caller, while the folder's marker names this manifest and a ledger that is
 * there: most likely the name is the mistake, and starting another ledger (another folder) would
 * pay for every item again. Without a named ledger the default one is in use, and an owner
 * elsewhere is another batch (a copied project, say).
 */
function sameBatchOtherLedger(owner: FolderOwner, context: Omit<FolderContext, 'service'>): boolean {
  if (owner.manifest !== context.manifest.name || isS3Uri(context.manifest.outputDir)) return false;
  // The batch's record moved to a shared database (copy-ledger): that is where it goes on.
  if (namesSharedLedger(owner.ledger)) return true;
  if (!context.ledgerNamed) return false;
  return existsSync(ownerLedger(owner));
}

const ownerLedger = (owner: FolderOwner): string =>
  owner.ledgerAt !== undefined && existsSync(owner.ledgerAt) ? owner.ledgerAt : owner.ledger;

function wrongLedgerRefusal(
  owner: FolderOwner,
  context: Omit<FolderContext, 'service'>,
  folder: string,
  example: string,
): string {
  const { manifest, cwd, ledgerShown } = context;
  const theirs = shownFromCwd(cwd, ownerLedger(owner));
  const isDefault =
    context.defaultLedger !== undefined && resolve(context.defaultLedger) === resolve(ownerLedger(owner));
  return (
    `the output folder ${folder} belongs to ${manifest.name}'s ledger ${theirs}, not to ${shownFromCwd(cwd, ledgerShown)}. ` +
    (context.ledgerNamed ? 'The ledger named is most likely the wrong one.\n' : '\n') +
    `  To go on with the ledger that owns the folder: \`ledger\` ${theirs}${isDefault ? ' (or no `ledger` at all: it is the default)' : ''}.\n` +
    `  Only to start ${manifest.name} over with this new ledger, paying for every item again, give it a folder of its own: ` +
    `set output.dir in ${shownFromCwd(cwd, manifest.file)} (for example ${example})`
  );
}

/** A free-looking sibling folder to suggest: named after this manifest, else numbered. */
function otherFolder(manifest: ManifestHead, owner: FolderOwner): string {
  if (isS3Uri(manifest.outputDir)) return `${manifest.outputDir}-${manifest.name}`;
  const parent = dirname(manifest.outputDir);
  return owner.manifest !== manifest.name && basename(manifest.outputDir) !== manifest.name
    ? join(parent, manifest.name)
    : `${manifest.outputDir}-2`;
}

/**
 * After the batch's record was copied to another ledger (copy-ledger): the output location's claim
 * passes to the copy, if the ledger copied from held it, so that runs on the copy save there and
 * the old ledger no longer may. True when it passed.
 */
export async function passOutputLocation(
  manifest: Manifest,
  store: OutputStore,
  from: string,
  to: string,
): Promise<boolean> {
  const me = { manifest: manifest.name, ledger: from };
  if (!isS3Uri(manifest.outputDir)) return passFolder(manifest.outputDir, me, to);
  const marker = store.marker;
  const text = marker ? await marker.read() : null;
  if (!marker || text === null) return false;
  const owner = parseMarker(store.root, text);
  if ('problem' in owner || markerVerdict(owner, me).kind !== 'mine') return false;
  await marker.write(markerText(store.root, { ...owner, ledger: to }, new Date().toISOString()));
  return true;
}
