import { dirname, isAbsolute, relative } from 'node:path';
import pLimit from 'p-limit';
import type { SidecarCheck } from '../downloads/sidecar.js';
import { type AttemptRecord, type FileRecord, jobOfBytes, shownCheck } from '../ledger/index.js';
import type { OutputStore } from '../storage/output-store.js';
import { narrowRead } from './narrow-read.js';
import { sidecarFactsOf } from './provenance.js';
import type { RunContext } from './run-context.js';

/** Saved files checked at once on a re-run. */
const VERIFY_AT_ONCE = 8;

/** A saved file that is not as it was saved: gone, or other bytes. */
interface Unfit {
  path: string;
  state: 'missing' | 'altered';
}

/**
 * Marks intact saved items done; returns the attempts whose files must be fetched again (a GET
 * of the job, never a POST: the output was paid for, and the service keeps it for 48 hours).
 */
export async function verifySavedFiles(run: RunContext, attempts: AttemptRecord[]): Promise<AttemptRecord[]> {
  if (attempts.length === 0) return [];
  const filesByAttempt = new Map<number, FileRecord[]>();
  // Only these attempts' files: a shared batch's runners verify what they adopt at every turn.
  for (const file of await run.deps.ledger.listFiles(narrowRead(attempts.map((attempt) => attempt.id))))
    filesByAttempt.set(file.attemptId, [...(filesByAttempt.get(file.attemptId) ?? []), file]);
  // Checks overlap (a HEAD per object in a bucket is a round trip); their outcomes apply in order.
  const limit = pLimit(VERIFY_AT_ONCE);
  const unfit = await Promise.all(
    attempts.map((attempt) => limit(() => unfitFiles(run.deps.store, filesByAttempt.get(attempt.id) ?? []))),
  );
  const checkOf = await takeChecksOf(run, attempts);
  const refetch: AttemptRecord[] = [];
  for (const [index, attempt] of attempts.entries()) {
    const found = unfit[index]!;
    if (found === null || found.length > 0) {
      // A file gone counts first: "deleted" is the stronger word for the item, if it expires.
      const state = found?.some((file) => file.state === 'missing') === false ? 'altered' : 'missing';
      run.state.savedFileUnfit(attempt.itemId, state);
      for (const line of refetchLines(run, attempt, found)) run.deps.observer.log('warn', line);
      refetch.push(attempt);
      continue;
    }
    await restoreSidecars(run, attempt, filesByAttempt.get(attempt.id) ?? [], checkOf(attempt.id));
    if (run.state.item(attempt.itemId)?.record.state !== 'done') run.setItem(attempt.itemId, 'done');
  }
  return refetch;
}

/** The files not as saved, in file order; null when the ledger holds none for the attempt. */
async function unfitFiles(store: OutputStore, files: readonly FileRecord[]): Promise<Unfit[] | null> {
  if (files.length === 0) return null;
  const unfit: Unfit[] = [];
  for (const file of files) {
    const state = await store.check(file);
    if (state !== 'intact') unfit.push({ path: file.path, state });
  }
  return unfit;
}

/**
 * One line per file, naming it as `status` does and saying what a re-fetch costs: nothing while
 * the service still holds the outputs (by expires_at); past it, the service answers whether it does.
 */
function refetchLines(run: RunContext, attempt: AttemptRecord, unfit: Unfit[] | null): string[] {
  const expires = attempt.expiresAt;
  const held =
    expires === null || Date.parse(expires) > run.deps.clock.now()
      ? `free: no new generation${expires === null ? '' : `, the service keeps it until ${expires}`}`
      : `its outputs expired at the service on ${expires}; if they are gone, only \`regenerateExpired\` pays for it again`;
  const from = `fetching it again from job ${jobOfBytes(attempt)} (${held})`;
  if (unfit === null) return [`${attempt.itemId}: no saved file recorded; ${from}`];
  const shown = shownFromManifest(run.deps.manifest.file);
  return unfit.map(
    (file) =>
      `${attempt.itemId}: saved file ${shown(file.path)} is ${file.state === 'missing' ? 'missing' : 'altered (not the bytes saved)'}; ${from}`,
  );
}

/** Relative to the manifest's folder when inside it, as `status` and `plan` show saved files. */
function shownFromManifest(manifestFile: string): (path: string) => string {
  const folder = dirname(manifestFile);
  return (path) => {
    if (path.includes('://')) return path;
    const rel = relative(folder, path);
    return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  };
}

/**
 * The checks of the takes verified, read in one statement (a re-run verifies all its takes: a
 * statement per take was a tenth of a 30,000-item re-run, and 10,000 round trips of a shared
 * batch's re-run); only theirs when they are few (a shared batch's runner verifies the few takes
 * it adopts at every turn, narrow-read.ts). None is read when no sidecar is written.
 */
async function takeChecksOf(
  run: RunContext,
  attempts: readonly AttemptRecord[],
): Promise<(attemptId: number) => SidecarCheck | null> {
  if (run.deps.manifest.sidecars === false || attempts.length === 0) return () => null;
  const ids = narrowRead(attempts.map((attempt) => attempt.id));
  const checks = new Map(
    (await run.deps.ledger.takeChecks(ids)).map((check) => [check.attemptId, shownCheck(check)]),
  );
  return (attemptId) => checks.get(attemptId) ?? null;
}

/** A deleted or edited provenance sidecar of an intact output is written again from the ledger. */
async function restoreSidecars(
  run: RunContext,
  attempt: AttemptRecord,
  files: FileRecord[],
  /** The take's check, read with the others (null: never checked). */
  check: SidecarCheck | null,
): Promise<void> {
  const { manifest, observer } = run.deps;
  if (manifest.sidecars === false) return;
  try {
    const facts = await sidecarFactsOf(
      run.deps.ledger,
      manifest.name,
      attempt,
      await run.keptMark(attempt),
      check,
    );
    const written = await run.deps.store.ensureSidecars(facts, files);
    if (written > 0) observer.log('info', `${attempt.itemId}: restored ${written} provenance sidecar(s)`);
  } catch (error) {
    observer.log('warn', `${attempt.itemId}: cannot restore its sidecar: ${(error as Error).message}`);
  }
}
