import { isS3Uri } from '../manifest/index.js';
import { DiskStore } from './disk-store.js';
import type { OutputStore } from './output-store.js';

/**
 * The store of an output location. The S3 store (and with it the AWS SDK) is loaded only for an
 * `s3://` location, so runs to a local folder pay nothing for it at start-up. `env` holds the
 * AWS_* settings the caller was given; the SDK is never left to read the process's own.
 */
export async function openOutputStore(root: string, env: NodeJS.ProcessEnv): Promise<OutputStore> {
  if (!isS3Uri(root)) return new DiskStore(root);
  const { S3Store } = await import('./s3-store.js');
  return S3Store.open(root, env);
}
