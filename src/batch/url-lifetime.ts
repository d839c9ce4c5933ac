import { UserError } from '../errors.js';
import { parseDuration } from '../cli/values/duration.js';

/**
 * How long the presigned links of a bucket's gallery work (`report --html --url-lifetime`). Pure.
 * Signature Version 4 refuses a presigned URL valid for more than 7 days, so that is both the
 * default (a review usually spans days) and the limit; under a minute a link would expire before
 * a person could open the page.
 */
export const MAX_URL_LIFETIME_SECONDS = 7 * 24 * 60 * 60;
const MIN_URL_LIFETIME_SECONDS = 60;

/** `--url-lifetime` in seconds: 7 days when absent; exit 2 outside 1 minute..7 days. */
export function parseUrlLifetime(text: string | undefined): number {
  if (text === undefined) return MAX_URL_LIFETIME_SECONDS;
  const seconds = parseDuration(text, '--url-lifetime') / 1000;
  if (seconds > MAX_URL_LIFETIME_SECONDS)
    throw new UserError(
      `--url-lifetime may be at most 7d (168h, 10080m), the longest a presigned S3 URL can live; got '${text}'`,
    );
  if (seconds < MIN_URL_LIFETIME_SECONDS)
    throw new UserError(`--url-lifetime must be at least 1m, got '${text}'`);
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
