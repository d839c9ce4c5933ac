import { ExitCode, UserError } from '../errors.js';

/**
 * How long the presigned links of a bucket's gallery work (`report --html --url-lifetime`). Pure.
 * Signature Version 4 refuses a presigned URL valid for more than 7 days, so that is both the
 * default (a review usually spans days) and the limit; under a minute a link would expire before
 * a person could open the page.
 */
export const MAX_URL_LIFETIME_SECONDS = 7 * 24 * 60 * 60;
const MIN_URL_LIFETIME_SECONDS = 60;

/** A link lifetime in seconds, checked: 7 days when absent; refused outside 1 minute..7 days. */
export function checkUrlLifetime(seconds: number | null): number {
  if (seconds === null) return MAX_URL_LIFETIME_SECONDS;
  if (seconds > MAX_URL_LIFETIME_SECONDS)
    throw new UserError(
      'a presigned link may live at most 7 days (7d, 168h, 10080m), the longest S3 allows',
      ExitCode.Usage,
      'invalid_usage',
    );
  if (seconds < MIN_URL_LIFETIME_SECONDS)
    throw new UserError('a presigned link must live at least 1 minute', ExitCode.Usage, 'invalid_usage');
  return seconds;
}

/**
 * When the links stop working: the lifetime after signing, or sooner when the credentials that
 * signed them expire first (a session token from SSO or an assumed role), since S3 then refuses
 * the signature. `byCredentials` says which, so the command can warn.
 */
export function linksExpireAt(
  signedAt: Date,
  lifetimeSeconds: number,
  credentialsExpire?: Date,
): { expireAt: Date; byCredentials: boolean } {
  const byLifetime = new Date(signedAt.getTime() + lifetimeSeconds * 1000);
  if (credentialsExpire !== undefined && credentialsExpire.getTime() < byLifetime.getTime())
    return { expireAt: credentialsExpire, byCredentials: true };
  return { expireAt: byLifetime, byCredentials: false };
}
