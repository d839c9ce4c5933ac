import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Output URLs carry their own expiry and an HMAC over (job, file index, expiry), so downloads need
 * no API key and a URL cannot be stretched or pointed at another job's file.
 */
export class UrlSigner {
  readonly #secret: Buffer;

  constructor(secret: Buffer = randomBytes(32)) {
    this.#secret = secret;
  }

  /** For a state file: a restarted sandbox must accept the URLs it handed out before. */
  get secretHex(): string {
    return this.#secret.toString('hex');
  }

  sign(jobId: string, index: number, expiresMs: number): string {
    return createHmac('sha256', this.#secret).update(`${jobId}\n${index}\n${expiresMs}`).digest('hex');
  }

  /** The query string of a signed URL valid until `expiresMs` (epoch milliseconds). */
  query(jobId: string, index: number, expiresMs: number): string {
    return `expires=${expiresMs}&sig=${this.sign(jobId, index, expiresMs)}`;
  }

  verify(jobId: string, index: number, expires: string | null, signature: string | null): number | null {
    if (
      expires === null ||
      signature === null ||
      !/^\d{1,16}$/.test(expires) ||
      !/^[0-9a-f]{64}$/.test(signature)
    ) {
      return null;
    }
    const expiresMs = Number(expires);
    const expected = Buffer.from(this.sign(jobId, index, expiresMs), 'hex');
    return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? expiresMs : null;
  }
}
