import { UserError } from '../../errors.js';
import { brokenLifetimeBound, LINK_LIFETIME_SECONDS } from '../../link-lifetime.js';

/**
 * How long the presigned links of a bucket's gallery work (the option `urlLifetimeSeconds`). Pure.
 * The longest S3 allows, 7 days, is both the default (a review usually spans days) and the limit.
 */
export const MAX_URL_LIFETIME_SECONDS = LINK_LIFETIME_SECONDS.max;

/** A link lifetime in seconds, checked: 7 days when absent; refused outside 1 minute..7 days. */
export function checkUrlLifetime(seconds: number | null): number {
  if (seconds === null) return MAX_URL_LIFETIME_SECONDS;
  const broken = brokenLifetimeBound(seconds);
  if (broken === null) return seconds;
  throw new UserError(
    broken === 'max'
      ? 'a presigned link may live at most 7 days (7d, 168h, 10080m), the longest S3 allows'
      : 'a presigned link must live at least 1 minute',
    'invalid_usage',
    { option: 'urlLifetimeSeconds', value: seconds, ...LINK_LIFETIME_SECONDS },
  );
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
