import { readFile, stat } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { copyVerified } from '../../downloads/copy-verified.js';
import { candidateFiles, type FoundOutput, findOutputs } from '../../downloads/files-on-disk.js';
import { takePath } from '../../downloads/preserve-take.js';
import type { SavedFile } from '../../downloads/save-job-files.js';
import { sidecarPathFor } from '../../downloads/sidecar.js';
import { writeFileAtomically } from '../../downloads/write-atomically.js';
import type { ImportedJob, RunLedger } from '../../ledger/index.js';
import { isS3Uri, type Manifest, namedOutputPath, outputChild } from '../../manifest/index.js';
import type { ImportPlan } from './import-plan.js';

/**
 * `import` adopting the outputs a lost ledger saved (docs/import.md, "Outputs found on disk"):
 * each succeeded job's files found by their sidecars, in the output folder (recorded where they
 * lie) or in a folder the user moved them to (`filesFrom`, copied back under the manifest's
 * names), and recorded as saved on the job's attempt, with no download and no charge.
 */

export interface DiskOutputs {
  /** Job id -> its files found, with whether they lie elsewhere and are to be copied back. */
  found: Map<string, Array<FoundOutput & { aside: boolean }>>;
}

/** What adopting one job's files came to. */
export type Adopted =
  | { kind: 'saved'; files: string[]; copied: number }
  | { kind: 'refused'; problem: string };

/**
 * The succeeded jobs' outputs on disk: the folders the manifest's items save into first, then each
 * of `filesFrom` with its subfolders. A job found in place keeps those files. None for a bucket.
 */
export async function outputsOnDisk(
  manifest: Manifest,
  filesFrom: readonly string[],
  plan: ImportPlan,
): Promise<DiskOutputs> {
  const found: DiskOutputs['found'] = new Map();
  if (isS3Uri(manifest.outputDir)) return { found };
  const jobs = new Map(
    plan.attempts
      .filter((entry) => entry.job.status === 'succeeded')
      .map((entry) => [entry.job.id, entry.itemId]),
  );
  if (jobs.size === 0) return { found };
  const folders = new Set(
    manifest.items.map((item) => dirname(outputChild(manifest.outputDir, item.name ?? item.id))),
  );
  const inPlace = await findOutputs(
    [...folders].flatMap((folder) => candidateFiles(folder, false)),
    manifest.name,
    jobs,
  );
  for (const [jobId, outputs] of inPlace)
    found.set(
      jobId,
      outputs.map((output) => ({ ...output, aside: false })),
    );
  const elsewhere = filesFrom.flatMap((folder) => candidateFiles(folder, true));
  if (elsewhere.length === 0) return { found };
  for (const [jobId, outputs] of await findOutputs(elsewhere, manifest.name, jobs))
    if (!found.has(jobId))
      found.set(
        jobId,
        outputs.map((output) => ({ ...output, aside: true })),
      );
  return { found };
}

/**
 * What each found job's sidecar records of its attempt (the take, the exact body sent, when it was
 * committed, the variables), by job id: the new ledger keeps them, so its sidecars stay the same.
 */
export function attemptsFound(disk: DiskOutputs): Map<string, Partial<ImportedJob>> {
  return new Map(
    [...disk.found].map(([jobId, [first]]) => {
      const { requestBody, createdAt, vars } = first!.provenance;
      return [
        jobId,
        {
          take: first!.take,
          ...(requestBody === null ? {} : { requestBody }),
          ...(createdAt === null ? {} : { createdAt }),
          vars,
        },
      ];
    }),
  );
}

/**
 * Places one job's found files (in place: as they are; aside: copied back to the manifest's name
 * for the item's current take, its take name for an earlier one) and records them saved on its
 * attempt. A copy refused (another file holds the name) records nothing.
 */
export async function adoptJobFiles(
  ledger: RunLedger,
  attemptId: number,
  outputs: ReadonlyArray<FoundOutput & { aside: boolean }>,
  target: { outputDir: string; name: string; current: boolean } | null,
): Promise<Adopted> {
  const ordered = [...outputs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files: SavedFile[] = [];
  let copied = 0;
  try {
    for (const [idx, output] of ordered.entries()) {
      const path = output.aside && target ? placeOf(target, output, idx, ordered.length) : output.path;
      if (path !== output.path) {
        if ((await copyVerified(output.path, path, output)).kind === 'copied') copied += 1;
        await copySidecar(path, output.sidecar);
      }
      const { mtimeMs } = await stat(path);
      files.push({ idx, path, bytes: output.bytes, sha256: output.sha256, mtimeMs });
    }
  } catch (error) {
    return { kind: 'refused', problem: (error as Error).message };
  }
  // The take's check comes back with its files, as its sidecar recorded it: the rebuilt ledger says
  // what the lost one did, and the run after it leaves the sidecars as they were.
  const check = ordered.find((output) => output.provenance.check)?.provenance.check;
  if (check)
    await ledger.recordCheckedFiles(attemptId, files, {
      outcome: check.outcome,
      reason: check.reason,
      video: null,
      score: check.score ?? null,
      checks: null,
    });
  else await ledger.recordFilesSaved(attemptId, files);
  return { kind: 'saved', files: files.map((file) => file.path), copied };
}

function placeOf(
  target: { outputDir: string; name: string; current: boolean },
  output: FoundOutput,
  idx: number,
  count: number,
): string {
  const ext = extname(output.path).slice(1) || 'bin';
  const path = namedOutputPath(target.outputDir, target.name, idx, count, ext);
  return target.current ? path : takePath(path, output.take);
}

/** The sidecar goes back beside its file as it was written, unless the same text is there. */
async function copySidecar(path: string, text: string): Promise<void> {
  const sidecar = sidecarPathFor(path);
  if ((await readFile(sidecar, 'utf8').catch(() => null)) === text) return;
  await writeFileAtomically(sidecar, text);
}
