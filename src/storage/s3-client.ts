import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';

/**
 * The S3 client of an `s3://` output location, configured the way AWS tools are (docs/storage.md):
 * credentials, region and profile from the SDK's own chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_REGION, AWS_PROFILE and the shared config files), an endpoint from
 * AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL. The SDK is imported here only, when a location is used,
 * so local-disk runs never load it.
 */

/** Path-style or virtual-hosted addressing (MEDIABATCH_S3_ADDRESSING). */
export type Addressing = 'path' | 'virtual';

export interface S3Settings {
  endpoint: string | null;
  addressing: Addressing;
  region: string | null;
  /** Keys given in the environment; null: the SDK's chain finds them (profiles, SSO, roles). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

/** Pure: the settings the environment asks for; a custom endpoint defaults to path-style. */
export function s3Settings(env: NodeJS.ProcessEnv): S3Settings | { problem: string } {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || null;
  if (endpoint !== null && !/^https?:\/\/[^\s/]+/i.test(endpoint))
    return { problem: `the S3 endpoint ${JSON.stringify(endpoint)} is not an http(s) URL` };
  const asked = env.MEDIABATCH_S3_ADDRESSING;
  if (asked !== undefined && asked !== '' && asked !== 'path' && asked !== 'virtual')
    return { problem: `MEDIABATCH_S3_ADDRESSING must be "path" or "virtual", not ${JSON.stringify(asked)}` };
  // Local servers have no wildcard DNS for bucket.host names; AWS itself prefers virtual-hosted.
  const addressing: Addressing = asked ? (asked as Addressing) : endpoint !== null ? 'path' : 'virtual';
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const credentials =
    accessKeyId && secretAccessKey
      ? {
          accessKeyId,
          secretAccessKey,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        }
      : null;
  return { endpoint, addressing, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || null, credentials };
}

/** Standard retries (throttling and 5xx), bounded so that an unreachable endpoint is told soon. */
const MAX_ATTEMPTS = 4;

export async function createS3Client(settings: S3Settings): Promise<S3Client> {
  const { S3Client } = await import('@aws-sdk/client-s3');
  const config: S3ClientConfig = {
    retryMode: 'standard',
    maxAttempts: MAX_ATTEMPTS,
    forcePathStyle: settings.addressing === 'path',
    // The SDK's default adds CRC checksums with aws-chunked bodies, which S3-compatible servers
    // (Swift, older MinIO, Ceph) refuse; mediabatch checks SHA-256 itself.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // A custom endpoint without a region in the environment: any region signs for it.
    ...(settings.region ? { region: settings.region } : settings.endpoint ? { region: 'us-east-1' } : {}),
  };
  return new S3Client(config);
}
