import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type SidecarCheck, sidecarPathFor } from './sidecar.js';
import { fileMatches } from './verify-file.js';

/**
 * The outputs a lost ledger saved, found again by their provenance sidecars (docs/import.md,
 * "Outputs found on disk"): a file is a job's output when the sidecar beside it names that job of
 * this manifest and the file's bytes match the size and SHA-256 that sidecar records. Anything
 * less (no sidecar, another manifest's, other bytes) leaves the file a stranger, and
 * `strangerReason` says which, for `plan`'s stray files.
 */

export interface FoundOutput {
  jobId: string;
  itemId: string;
  /** The take the sidecar records (1 for the first). */
  take: number;
  /** Where the file lies now. */
  path: string;
  /** The sidecar's text, as written by the run that saved the file. */
  sidecar: string;
  bytes: number;
  sha256: string;
  /** What the lost ledger recorded of the request, as the sidecar tells it. */
  provenance: Provenance;
}

export interface Provenance {
  /** The exact body sent (its `request`, compact as mediabatch writes it); null when absent. */
  requestBody: string | null;
  createdAt: string | null;
  /** The template variables (JSON text), null without. */
  vars: string | null;
  /** The take's check as the sidecar recorded it (docs/checks.md); null when it names none. */
  check: SidecarCheck | null;
}

/** What a sidecar says of its file, when it is one of mediabatch's. */
interface SidecarClaim {
  manifest: string;
  item: string;
  take: number;
  jobId: string;
  bytes: number;
  sha256: string;
  provenance: Provenance;
  /** A copy of an earlier take (its sidecar's `copied_from`): its job made another take's bytes. */
  copy: boolean;
}

/** A folder walked at most this deep, over at most this many files: a bound on a wrong path. */
const MAX_DEPTH = 8;
const MAX_FILES = 200_000;

/** The files of `folder` (its subfolders too with `deep`), outputs only: sidecars and temporary files left out. */
export function candidateFiles(folder: string, deep: boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // missing or unreadable: nothing to find there
    }
    for (const entry of entries) {
      if (found.length >= MAX_FILES) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (deep && depth < MAX_DEPTH) walk(path, depth + 1);
      } else if (!entry.name.endsWith('.json') && !entry.name.startsWith('.')) found.push(path);
    }
  };
  walk(folder, 0);
  return found;
}

/** A sidecar's `check`, when it is one mediabatch writes (sidecar.ts): else none. */
function checkOf(value: unknown): SidecarCheck | null {
  const check = value as { outcome?: unknown; reason?: unknown; score?: unknown } | null | undefined;
  if (check?.outcome !== 'passed' && check?.outcome !== 'failed' && check?.outcome !== 'unchecked')
    return null;
  if (check.reason !== null && typeof check.reason !== 'string') return null;
  const shown: SidecarCheck = { outcome: check.outcome, reason: check.reason };
  if (typeof check.score === 'number') shown.score = check.score;
  return shown;
}

function readClaim(text: string): SidecarClaim | null {
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    const file = doc.file as { bytes?: unknown; sha256?: unknown } | undefined;
    if (typeof doc.manifest !== 'string' || typeof doc.item !== 'string' || typeof doc.job_id !== 'string')
      return null;
    if (typeof file?.bytes !== 'number' || typeof file.sha256 !== 'string') return null;
    const take = Number.isSafeInteger(doc.take) && (doc.take as number) >= 1 ? (doc.take as number) : 1;
    const { manifest, item, job_id: jobId } = doc as { manifest: string; item: string; job_id: string };
    const provenance = {
      requestBody:
        typeof doc.request === 'object' && doc.request !== null ? JSON.stringify(doc.request) : null,
      createdAt: typeof doc.created_at === 'string' ? doc.created_at : null,
      vars: doc.vars === undefined ? null : JSON.stringify(doc.vars),
      check: checkOf(doc.check),
    };
    const copy = typeof doc.copied_from === 'object' && doc.copied_from !== null;
    return { manifest, item, take, jobId, bytes: file.bytes, sha256: file.sha256, provenance, copy };
  } catch {
    return null;
  }
}

function sidecarText(path: string): string | null {
  try {
    return readFileSync(sidecarPathFor(path), 'utf8');
  } catch {
    return null;
  }
}

/**
 * The outputs among `files` whose sidecar names one of `jobs` (job id -> its item) of this
 * manifest and whose bytes match it, by job id. Only those files are read whole.
 */
export async function findOutputs(
  files: readonly string[],
  manifestName: string,
  jobs: ReadonlyMap<string, string>,
): Promise<Map<string, FoundOutput[]>> {
  const found = new Map<string, FoundOutput[]>();
  for (const path of files) {
    const text = sidecarText(path);
    const claim = text === null ? null : readClaim(text);
    // A copy is adopted as a copy (adopt-copies.ts), never as another output of its result's job.
    if (
      claim === null ||
      claim.copy ||
      claim.manifest !== manifestName ||
      jobs.get(claim.jobId) !== claim.item
    )
      continue;
    if (!(await fileMatches(path, claim.bytes, claim.sha256))) continue;
    const { jobId, item: itemId, take, bytes, sha256, provenance } = claim;
    const output: FoundOutput = { jobId, itemId, take, path, sidecar: text!, bytes, sha256, provenance };
    found.set(claim.jobId, [...(found.get(claim.jobId) ?? []), output]);
  }
  return found;
}

/** A copy found on disk: its sidecar says which item and take it is, and whose job made its bytes. */
export interface FoundCopy {
  itemId: string;
  take: number;
  jobId: string;
  path: string;
  bytes: number;
  sha256: string;
}

/** The copies among `files` whose sidecar is this manifest's and whose bytes match it. */
export async function findCopies(files: readonly string[], manifestName: string): Promise<FoundCopy[]> {
  const found: FoundCopy[] = [];
  for (const path of files) {
    const text = sidecarText(path);
    const claim = text === null ? null : readClaim(text);
    if (claim === null || !claim.copy || claim.manifest !== manifestName) continue;
    if (!(await fileMatches(path, claim.bytes, claim.sha256))) continue;
    const { item: itemId, take, jobId, bytes, sha256 } = claim;
    found.push({ itemId, take, jobId, path, bytes, sha256 });
  }
  return found;
}

/**
 * Why a file in the output folder that the ledger did not write is not taken for one of this
 * manifest's outputs (plan's stray files); null for a sidecar, whose video says it all.
 */
export function strangerReason(path: string, manifestName: string): string | null {
  if (path.endsWith('.json')) return null;
  const checked = checkedClaim(path, manifestName);
  if (typeof checked === 'string') return checked;
  return `its sidecar names job ${checked.jobId} of item ${checked.item}, which this ledger holds no saved output of: only an import into a new ledger adopts such a file`;
}

/** The sidecar's claim on the file at `path`, checked against its bytes; or why it does not hold. */
function checkedClaim(path: string, manifestName: string): SidecarClaim | string {
  const text = sidecarText(path);
  if (text === null) return 'no sidecar beside it names the job that made it';
  const claim = readClaim(text);
  if (claim === null) return 'its sidecar is not one mediabatch wrote';
  if (claim.manifest !== manifestName) return `its sidecar says it belongs to the manifest ${claim.manifest}`;
  let bytes: Buffer;
  try {
    if (statSync(path).size !== claim.bytes) return 'its size differs from the one its sidecar records';
    bytes = readFileSync(path);
  } catch {
    return 'it cannot be read';
  }
  if (createHash('sha256').update(bytes).digest('hex') !== claim.sha256)
    return 'its bytes do not match the SHA-256 its sidecar records';
  return claim;
}

/**
 * The files among `paths` (and their sidecars) that a run saved for one of `jobs` (job id -> item,
 * this ledger's succeeded jobs whose files it has not recorded) and was stopped before committing:
 * the job's output, not strangers (docs/results.md). Returns those paths, and the items they are of.
 */
export function savedBeforeCommitOf(
  paths: readonly string[],
  manifestName: string,
  jobs: ReadonlyMap<string, string>,
): { paths: Set<string>; items: Set<string> } {
  const found = { paths: new Set<string>(), items: new Set<string>() };
  if (jobs.size === 0) return found;
  for (const path of paths) {
    if (path.endsWith('.json')) continue;
    const claim = checkedClaim(path, manifestName);
    if (typeof claim === 'string' || claim.copy || jobs.get(claim.jobId) !== claim.item) continue;
    found.paths.add(path);
    found.paths.add(sidecarPathFor(path));
    found.items.add(claim.item);
  }
  return found;
}
