import { createHmac } from 'node:crypto';

/**
 * The signature of a notification, in the header SIGNATURE_HEADER: `t=<unix seconds>,v1=<hex>`,
 * where the hex is HMAC-SHA256 under MEDIABATCH_NOTIFY_SECRET of `<t>.<body>`. Signing the
 * timestamp with the body lets a receiver refuse a replayed request (docs/overnight.md shows the
 * check), as Stripe's and Slack's webhooks do.
 */
export const SIGNATURE_HEADER = 'x-mediabatch-signature';

export function signatureHeader(secret: string, body: string, timestampSeconds: number): string {
  const t = Math.floor(timestampSeconds);
  const digest = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${digest}`;
}
