import { basename, dirname, join } from 'node:path';
import { fileLocation, type LedgerLocation, namedLocation, type PostgresEnv } from '../../ledger/index.js';
import {
  isS3Uri,
  type Manifest,
  type ManifestHead,
  parseS3Uri,
  s3Beside,
  s3Uri,
} from '../../manifest/index.js';

/**
 * Where a batch lives, computed here and nowhere else: its ledger (`.mediabatch/<name>.sqlite`
 * beside the manifest, or the path given), and for the embedded sandbox a ledger and an output
 * location of its own, so a demo's placeholder videos and spend never meet a real service's
 * (docs/services.md).
 */
export interface Placement<M extends ManifestHead = Manifest> {
  manifest: M;
  ledger: LedgerLocation;
  /** The ledger as shown: the file's path, or the database's URL without its password. */
  ledgerShown: string;
}

export function placeBatch<M extends ManifestHead>(
  manifest: M,
  options: { ledger: string | undefined; sandbox: boolean; cwd: string; postgresEnv?: PostgresEnv },
): Placement<M> {
  const placed = options.sandbox ? { ...manifest, outputDir: sandboxLocation(manifest.outputDir) } : manifest;
  if (options.ledger) {
    const ledger = namedLocation(options.ledger, options.cwd, options.postgresEnv ?? {});
    return { manifest: placed, ledger, ledgerShown: ledger.shown };
  }
  const folder = join(dirname(manifest.file), '.mediabatch');
  const ledgerFolder = options.sandbox ? join(folder, 'sandbox') : folder;
  const path = join(ledgerFolder, `${manifest.name}.sqlite`);
  return { manifest: placed, ledger: fileLocation(path), ledgerShown: path };
}

/**
 * A sandbox run's output location: the last folder moves into a `sandbox` folder beside it, so
 * `out/demo` becomes `out/sandbox/demo`, `out` becomes `sandbox/out`, and `s3://b/renders/demo`
 * becomes `s3://b/renders/sandbox/demo`, the same rule for a folder and a bucket (the words of
 * `--sandbox`'s help, docs/services.md). Beside, never inside: the real folder's `plan` would
 * list a sandbox folder within it as files no item owns.
 */
function sandboxLocation(outputDir: string): string {
  const location = isS3Uri(outputDir) ? parseS3Uri(outputDir) : null;
  if (location !== null && !('problem' in location)) return s3Uri(s3Beside(location, 'sandbox'));
  return join(dirname(outputDir), 'sandbox', basename(outputDir));
}

/** The embedded sandbox keeps its jobs beside the ledger (docs/sandbox-state.md). */
export const sandboxStatePath = (ledgerPath: string): string => `${ledgerPath}.sandbox.jsonl`;
