import type { NameMove } from '../downloads/move-saved.js';
import type { SavedFile } from '../downloads/save-job-files.js';
import type { SidecarCheck, SidecarFacts, SidecarFile } from '../downloads/sidecar.js';
import type { VideoFacts } from '../downloads/video-facts.js';
import type { Job } from '../service-client/schemas.js';

/**
 * Where a run's outputs go: a local folder (disk-store.ts) or an `s3://` location (s3-store.ts).
 * The runner sees only this: each store keeps the same promises its own way (docs/storage.md):
 * only a whole, verified file is ever placed under its name, a file this ledger did not write is
 * never replaced, and an earlier take is preserved before a new one takes its name.
 */
export interface OutputStore {
  /** The folder or `s3://bucket/prefix`, as the ledger's paths begin. */
  readonly root: string;
  /** Saving comes before spending: whether the store takes a file now (see StoreProbe). */
  probe(neededBytes: number): Promise<StoreProbe>;
  /** Removes what an interrupted run left half-written; returns how many. */
  /**
   * Removes what a killed run left (temporary files, unfinished uploads). With `idleMs`, only what
   * nothing has written to for that long: another live runner sharing the location may be writing
   * the rest.
   */
  cleanUp(idleMs?: number): Promise<number>;
  /** Saves every file of a succeeded job, and its sidecars; durable once it returns `saved`. */
  saveJob(request: SaveJobRequest): Promise<StoreSaveOutcome>;
  /**
   * Whether the file saved at `file.path` is there with exactly its size and SHA-256 (`intact`),
   * gone, or holds other bytes: a re-run fetches it again either way, and says which.
   */
  check(file: SidecarFile): Promise<'intact' | 'missing' | 'altered'>;
  /**
   * The saved file at `path` (of `bytes` bytes) read as a video, its container only
   * (downloads/video-facts.ts): what the checks of a take judge (docs/checks.md).
   */
  videoFacts(path: string, bytes: number): Promise<VideoFacts>;
  /** Writes each file's provenance sidecar unless an identical one is there; returns how many. */
  ensureSidecars(facts: SidecarFacts, files: readonly SidecarFile[]): Promise<number>;
  /** Throws (code EEXIST) when `target` holds a file the ledger did not write and other bytes. */
  refuseForeign(
    target: string,
    written: Written,
    writtenByLedger: (path: string) => Promise<boolean>,
  ): Promise<void>;
  /** Keeps `current` (and its sidecar) as `kept`; false when there was nothing to keep. */
  preserveEarlier(current: string, kept: string, expected: Written): Promise<boolean>;
  /**
   * A copy of the saved file `from` (checked to hold exactly `expected`) placed at `to`, a take
   * reused by another item (runner/reuse-takes.ts); its modification time, or null for an object.
   */
  copySaved(from: string, to: string, expected: Written): Promise<{ mtimeMs: number | null }>;
  /**
   * A renamed item's saved files (and sidecars) under their new names too, after checking that no
   * new name holds anything else (code EEXIST, nothing placed then); the old names stay until
   * dropOldNames, which runs once the ledger records the new ones (docs/manifest.md).
   */
  linkNewNames(moves: readonly NameMove[]): Promise<void>;
  dropOldNames(moves: readonly NameMove[]): Promise<void>;
  /** The files directly in each of these folders (paths or URIs, as `root` begins). */
  filesIn(folders: readonly string[]): Promise<string[]>;
  /**
   * A bucket's owner marker (downloads/output-owner.ts), read and written as an object; null for a
   * folder, whose marker output-owner.ts claims with a hard link so that racing runs cannot both win.
   */
  readonly marker: MarkerObject | null;
}

export type { NameMove } from '../downloads/move-saved.js';

export interface MarkerObject {
  read(): Promise<string | null>;
  write(text: string): Promise<void>;
}

export interface Written {
  bytes: number;
  sha256: string;
}

export interface SaveJobRequest {
  job: Job;
  itemId: string;
  /** Where the files go below the root (output.name), without extension. */
  name: string;
  /** Save under this take's name (`<name>.take2.mp4`) instead of the item's own. */
  take?: number;
  /** Runs once a file is whole and verified, before it takes `target` (refuse foreign, keep take). */
  beforePlace: (target: string, written: Written) => Promise<void>;
  /** Fetches the job again, for fresh signed URLs. */
  refreshJob: () => Promise<Job>;
  /** Provenance to write beside each file; null: output.sidecars is off. */
  sidecar: SidecarFacts | null;
  /**
   * Judges the placed files before their sidecars are written, so each sidecar is written once,
   * with the take's check (docs/checks.md); absent: they are written without one.
   */
  judge?: (files: readonly SavedFile[]) => Promise<SidecarCheck | null>;
  timeoutMs?: number;
}

export type StoreSaveOutcome =
  | { kind: 'saved'; files: SavedFile[] }
  | { kind: 'expired' }
  /**
   * `local`: the store failed, not the transfer from the service. `code`: why, when the cause is
   * the same for every item (ENOSPC, EROFS, AccessDenied, NoSuchBucket, ...): the run stops.
   * `unreachable`: the store did not answer; worth waiting out like an outage of the service.
   */
  | { kind: 'error'; message: string; local?: boolean; code?: string; unreachable?: boolean };

export type StoreProbe =
  | { ok: true }
  /** `step` names what failed; `code` is its errno or S3 error code, when it has one. */
  | { ok: false; step: string; code: string | null; reason: string }
  | { ok: false; step: 'free space'; code: 'ENOSPC'; freeBytes: number; reason: string };
