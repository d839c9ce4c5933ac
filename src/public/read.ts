import { resolve } from 'node:path';
import { UserError } from '../errors.js';
import {
  formatProblem,
  loadManifest as loadFile,
  loadManifestText,
  type Manifest,
  type ManifestProblem,
  type ManifestResult,
} from '../manifest/index.js';
import { buildPlan, type PlanDocument } from '../report/plan-report.js';
import { buildStatus } from '../report/status-report.js';
import { checkOptions, hostOf, type LedgerOptions, ledgerOptionsSchema, placeOf } from './options.js';
import { planSource, statusSource, withLedger } from '../batch/ledger-read.js';
import { filesUnder } from '../batch/output-files.js';
import { outputFolderRefusal } from '../batch/output-owner-check.js';
import { type StatusDocument, statusDocument } from './status-document.js';

/** A manifest with problems: every one, each with its file, line and column (exit code 2). */
export class ManifestError extends UserError {
  constructor(readonly problems: ManifestProblem[]) {
    const count = problems.length;
    super(
      `${count} problem${count === 1 ? '' : 's'} in the manifest:\n${problems.map(formatProblem).join('\n')}`,
    );
    this.name = 'ManifestError';
  }
}

/** A manifest from a file, or from YAML text read as if it were a file in `baseDir`. */
export type ManifestSource = string | { yaml: string; baseDir: string; fileName?: string };

/** Reads and checks a manifest; throws ManifestError listing every problem. */
export function loadManifest(source: ManifestSource): Manifest {
  let result: ManifestResult;
  if (typeof source === 'string') result = loadFile(resolve(source));
  else if (source && typeof source.yaml === 'string' && typeof source.baseDir === 'string')
    result = loadManifestText(resolve(source.baseDir, source.fileName ?? 'manifest.yaml'), source.yaml);
  else throw new UserError('loadManifest(): give a path, or { yaml, baseDir }');
  if (!result.ok) throw new ManifestError(result.problems);
  return result.manifest;
}

/** What `run` would do now, from the ledger alone (`plan --json` without an account check). */
export function plan(manifest: Manifest, options: LedgerOptions = {}): PlanDocument {
  const checked = checkOptions('plan', ledgerOptionsSchema, options);
  const host = hostOf({ cwd: checked.cwd }, process.stderr);
  const placed = placeOf(manifest, checked, host);
  const refusal = outputFolderRefusal({
    manifest: placed.manifest,
    ledgerPath: placed.ledgerPath,
    cwd: host.cwd,
  });
  // Another batch's folder: run refuses it before any request, so plan says the same.
  if (refusal !== null) throw new UserError(`run would refuse this manifest: ${refusal}`);
  const outputFiles = filesUnder(placed.manifest.outputDir, placed.manifest.file);
  return withLedger(placed.manifest, checked.ledger, host, { sandbox: checked.sandbox ?? false }, (ledger) =>
    buildPlan(placed.manifest, planSource(ledger), null, Date.now(), {
      outputFiles,
      previousBody: (attempt) => ledger?.getAttempt(attempt.id).requestBody,
      previousVars: (attempt) => ledger?.getAttempt(attempt.id).vars,
    }),
  );
}

/** Where each item stands in the ledger (`status --json`). */
export function status(manifest: Manifest, options: LedgerOptions = {}): StatusDocument {
  const checked = checkOptions('status', ledgerOptionsSchema, options);
  const host = hostOf({ cwd: checked.cwd }, process.stderr);
  return withLedger(manifest, checked.ledger, host, { sandbox: checked.sandbox ?? false }, (ledger, note) =>
    statusDocument(buildStatus(manifest, statusSource(ledger), Date.now()), note.service),
  );
}
