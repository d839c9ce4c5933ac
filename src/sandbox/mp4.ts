import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The asset is resolved from this module's own location, so it is found both when running from
 * src (vitest, tsx) and from dist (scripts/copy-assets.mjs copies it beside the compiled module).
 */
const SAMPLE_URL = new URL('./assets/sample.mp4', import.meta.url);

let sample: Buffer | undefined;

function sampleMp4(): Buffer {
  sample ??= readFileSync(SAMPLE_URL);
  return sample;
}

/**
 * The sample clip with the job id in a trailing top-level `free` box: players skip `free` boxes,
 * so the file stays playable, yet every job's bytes (and SHA-256) differ, as real outputs would.
 */
export function jobVideo(jobId: string, totalBytes?: number): Buffer {
  const text = Buffer.from(`mediabatch-sandbox job=${jobId}\n`, 'utf8');
  const room = (totalBytes ?? 0) - sampleMp4().length - 8;
  const payload = room > text.length ? Buffer.concat([text, Buffer.alloc(room - text.length, 0x20)]) : text;
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payload.length, 0);
  header.write('free', 4, 'latin1');
  return Buffer.concat([sampleMp4(), header, payload]);
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
