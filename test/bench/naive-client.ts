import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { request } from 'undici';

/**
 * The client a user would write from the interface spec in an afternoon, as the yardstick for
 * mediabatch's request count and makespan:
 * - p-limit at the account's concurrency limit (read once from GET /account);
 * - per item: POST with a fresh Idempotency-Key (429 or 5xx: wait Retry-After, same key again);
 * - then GET /jobs/{id} every Retry-After until the job is final;
 * - then download every file with undici into the output folder.
 * It is given the benefit of the doubt: it never polls before waiting one Retry-After (the POST
 * answer carries none, so it waits the last value it has seen, starting with the service's), and
 * it neither fsyncs nor records anything durable, which only makes it faster.
 */

export interface NaiveJobBody {
  model?: string;
  input: Record<string, unknown>;
  metadata?: Record<string, string>;
}

export interface NaiveResult {
  submitted: number;
  succeeded: number;
  failed: number;
  /** Epoch ms when the last file was written. */
  lastSavedAt: number;
}

interface Job {
  id: string;
  status: string;
  output: { files: Array<{ type: string; url: string }> };
}

const FINAL = new Set(['succeeded', 'failed', 'canceled']);

export async function runNaiveClient(options: {
  baseUrl: string;
  apiKey: string;
  bodies: NaiveJobBody[];
  outDir: string;
  /** What the user read as the service's poll interval, in seconds. */
  retryAfterSeconds: number;
}): Promise<NaiveResult> {
  const auth = { authorization: `Bearer ${options.apiKey}` };
  let retryAfter = options.retryAfterSeconds;
  const learn = (header: string | string[] | undefined) => {
    const value = Number(Array.isArray(header) ? header[0] : header);
    if (Number.isFinite(value) && value > 0) retryAfter = value;
  };

  const account = await request(`${options.baseUrl}/account`, { headers: auth });
  const { concurrency } = (await account.body.json()) as { concurrency: { limit: number } };
  const limit = pLimit(concurrency.limit);
  await mkdir(options.outDir, { recursive: true });
  const result: NaiveResult = { submitted: 0, succeeded: 0, failed: 0, lastSavedAt: 0 };

  const one = async (body: NaiveJobBody, index: number) => {
    const key = randomUUID();
    let job: Job;
    for (;;) {
      const answer = await request(`${options.baseUrl}/videos/generation`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      if (answer.statusCode === 202) {
        job = (await answer.body.json()) as Job;
        break;
      }
      await answer.body.dump();
      if (answer.statusCode !== 429 && answer.statusCode < 500) {
        throw new Error(`POST answered ${answer.statusCode}`);
      }
      learn(answer.headers['retry-after']);
      await sleep(retryAfter * 1000);
    }
    result.submitted += 1;
    while (!FINAL.has(job.status)) {
      await sleep(retryAfter * 1000);
      const answer = await request(`${options.baseUrl}/jobs/${job.id}`, { headers: auth });
      learn(answer.headers['retry-after']);
      job = (await answer.body.json()) as Job;
    }
    if (job.status !== 'succeeded') {
      result.failed += 1;
      return;
    }
    for (const [n, file] of job.output.files.entries()) {
      const download = await request(file.url);
      await pipeline(download.body, createWriteStream(join(options.outDir, `item-${index}-${n}.mp4`)));
    }
    result.succeeded += 1;
    result.lastSavedAt = Math.max(result.lastSavedAt, Date.now());
  };

  await Promise.all(options.bodies.map((body, index) => limit(() => one(body, index))));
  return result;
}
