/**
 * How long a presigned link may live, for the CLI's flag and the library's option alike: S3's
 * Signature Version 4 refuses a presigned URL valid for more than 7 days, and under a minute a link
 * would expire before a person could open the page.
 */
export const LINK_LIFETIME_SECONDS = { min: 60, max: 7 * 24 * 60 * 60 } as const;

/** The bound `seconds` breaks: `max` past 7 days, `min` under a minute; null within them. */
export function brokenLifetimeBound(seconds: number): 'min' | 'max' | null {
  if (seconds > LINK_LIFETIME_SECONDS.max) return 'max';
  return seconds < LINK_LIFETIME_SECONDS.min ? 'min' : null;
}
