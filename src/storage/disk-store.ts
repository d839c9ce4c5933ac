import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { copyOver } from '../downloads/copy-verified.js';
import { dropOldNames, linkNewNames, type NameMove } from '../downloads/move-saved.js';
import { preserveEarlierFile, refuseForeignFile } from '../downloads/preserve-take.js';
import { saveJobFiles } from '../downloads/save-job-files.js';
import { probeFolder } from '../downloads/save-probe.js';
import { ensureSidecars, type SidecarFacts, type SidecarFile, withCheck } from '../downloads/sidecar.js';
import { syncFolder } from '../downloads/sync-folder.js';
import { removeTempFiles, savedFileState } from '../downloads/verify-file.js';
import { readVideoFile, type VideoFacts } from '../downloads/video-facts.js';
import type { OutputStore, SaveJobRequest, StoreProbe, StoreSaveOutcome, Written } from './output-store.js';

/** Outputs in a local folder: the download modules of src/downloads, behind the store's face. */
export class DiskStore implements OutputStore {
  readonly root: string;
  readonly marker = null;
  /** Folders made by earlier saves (see saveJobFiles). */
  readonly #madeFolders = new Set<string>();

  constructor(folder: string) {
    this.root = folder;
  }

  async probe(neededBytes: number): Promise<StoreProbe> {
    const probe = await probeFolder(this.root, neededBytes);
    return probe.ok ? { ok: true } : probe;
  }

  cleanUp(idleMs?: number): Promise<number> {
    return removeTempFiles(this.root, idleMs);
  }

  /**
   * The files, each placed after beforePlace, then their sidecars, then one fsync of their folder
   * that makes every rename durable before the ledger records them: files and sidecars share
   * their folder, so one fsync (an open, fsync, close) covers them all.
   */
  async saveJob(request: SaveJobRequest): Promise<StoreSaveOutcome> {
    const outcome = await saveJobFiles(request.job, {
      outputDir: this.root,
      itemId: request.itemId,
      name: request.name,
      beforePlace: request.beforePlace,
      ...(request.take === undefined ? {} : { take: request.take }),
      refreshJob: request.refreshJob,
      ...(request.timeoutMs ? { timeoutMs: request.timeoutMs } : {}),
      syncFolder: false,
      madeFolders: this.#madeFolders,
    });
    if (outcome.kind !== 'saved') return outcome;
    const check = request.judge ? await request.judge(outcome.files) : null;
    if (request.sidecar)
      await ensureSidecars(withCheck(request.sidecar, check), outcome.files, {
        syncFolder: false,
        fresh: true,
      });
    await Promise.all([...new Set(outcome.files.map((file) => dirname(file.path)))].map(syncFolder));
    return outcome;
  }

  videoFacts(path: string): Promise<VideoFacts> {
    return readVideoFile(path);
  }

  check(file: SidecarFile): Promise<'intact' | 'missing' | 'altered'> {
    return savedFileState(file.path, file.bytes, file.sha256);
  }

  ensureSidecars(facts: SidecarFacts, files: readonly SidecarFile[]): Promise<number> {
    return ensureSidecars(facts, files);
  }

  refuseForeign(
    target: string,
    written: Written,
    writtenByLedger: (path: string) => Promise<boolean>,
  ): Promise<void> {
    return refuseForeignFile(target, written, writtenByLedger);
  }

  preserveEarlier(current: string, kept: string, expected: Written): Promise<boolean> {
    return preserveEarlierFile(current, kept, expected);
  }

  copySaved(from: string, to: string, expected: Written): Promise<{ mtimeMs: number | null }> {
    return copyOver(from, to, expected);
  }

  linkNewNames(moves: readonly NameMove[]): Promise<void> {
    return linkNewNames(moves);
  }

  dropOldNames(moves: readonly NameMove[]): Promise<void> {
    return dropOldNames(moves);
  }

  async filesIn(folders: readonly string[]): Promise<string[]> {
    return folders.flatMap(filesDirectlyIn);
  }
}

/** The files directly in a folder; none when it does not exist yet. */
function filesDirectlyIn(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => !entry.isDirectory())
      .map((entry) => join(folder, entry.name));
  } catch {
    return [];
  }
}
