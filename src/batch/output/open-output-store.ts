import { UserError } from '../../errors.js';
import type { ManifestHead } from '../../manifest/index.js';
import { openOutputStore } from '../../storage/open-store.js';
import type { OutputStore } from '../../storage/output-store.js';
import type { Batch } from '../resolve/resolve-batch.js';

/**
 * Opens the store of an output location for a command. A location the environment cannot reach
 * as configured (a malformed AWS_ENDPOINT_URL_S3, an unknown MEDIABATCH_S3_ADDRESSING) is the
 * user's to fix: exit 2, before anything is sent.
 */
export async function openStoreOrRefuse(
  batch: Pick<Batch<ManifestHead>, 'manifest' | 'settings'>,
): Promise<OutputStore> {
  const root = batch.manifest.outputDir;
  try {
    return await openOutputStore(root, batch.settings.storageEnv);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'S3Settings')
      throw new UserError(
        `cannot use the output location ${root}: ${(error as Error).message}`,
        'setting_invalid',
      );
    throw error;
  }
}
