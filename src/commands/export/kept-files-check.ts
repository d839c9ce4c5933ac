import type { KeptTakeOf } from '../../batch/ledger/batch-takes.js';
import type { KeptFileProblem } from '../../documents/kept-records.js';
import { checkSavedFile } from '../../downloads/saved-file-check.js';
import { isS3Uri, parseS3Uri } from '../../manifest/index.js';
import { openOutputStore } from '../../storage/open-store.js';
import type { OutputStore } from '../../storage/output-store.js';

type Judged = Pick<KeptFileProblem, 'problem' | 'detail'> | null;
type SavedFile = KeptTakeOf['take']['files'][number];

/**
 * `export --kept` checks each kept file before a pipeline publishes it (docs/gallery.md): a file
 * on disk is read whole and its SHA-256 compared with the one the ledger recorded; an object in a
 * bucket is asked for (a HEAD) and its size and the SHA-256 stored with it compared. Only what is
 * not as saved is returned, in the records' order; nothing is changed.
 */
export async function keptFileProblems(
  kept: readonly KeptTakeOf[],
  storageEnv: NodeJS.ProcessEnv,
  shown: (path: string) => string,
): Promise<KeptFileProblem[]> {
  const buckets = new Map<string, Promise<OutputStore>>();
  const problems: KeptFileProblem[] = [];
  for (const { group, take } of kept)
    for (const file of take.files) {
      const judged = isS3Uri(file.path) ? await objectCheck(file, buckets, storageEnv) : diskCheck(file);
      if (judged !== null) problems.push({ id: group, item: take.itemId, path: shown(file.path), ...judged });
    }
  return problems;
}

/** A file on disk, its content read: missing, or altered in size or SHA-256. */
function diskCheck(file: SavedFile): Judged {
  const judged = checkSavedFile(file.path, { bytes: file.bytes, sha256: file.sha256, mtimeMs: null }, true);
  if (judged.check === 'intact') return null;
  return { problem: judged.check === 'missing' ? 'missing' : 'altered', detail: judged.detail };
}

/** An object, asked of its bucket (one client per bucket); a bucket that does not answer is said. */
async function objectCheck(
  file: SavedFile,
  buckets: Map<string, Promise<OutputStore>>,
  storageEnv: NodeJS.ProcessEnv,
): Promise<Judged> {
  const location = parseS3Uri(file.path);
  if ('problem' in location)
    return { problem: 'unchecked', detail: `not an s3:// location: ${location.problem}` };
  const root = `s3://${location.bucket}`;
  try {
    let store = buckets.get(root);
    if (store === undefined) {
      store = openOutputStore(root, storageEnv);
      buckets.set(root, store);
    }
    const state = await (await store).check(file);
    if (state === 'intact') return null;
    return {
      problem: state,
      detail:
        state === 'missing'
          ? 'no object at this key'
          : 'its size or SHA-256 differs from the one recorded when saved',
    };
  } catch (error) {
    return { problem: 'unchecked', detail: `the bucket could not be asked: ${(error as Error).message}` };
  }
}
