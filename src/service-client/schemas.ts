import { z } from 'zod';

/**
 * Wire shapes of the service's v1 API, strict both ways: a missing or extra property is a protocol
 * error, because the service promises exactly these fields and the runner's safety rests on them.
 */

const usdString = z.string().regex(/^\d+\.\d{6}$/, 'decimal string with exactly six decimal places');
const isoTimestamp = z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'ISO 8601 date-time');

export const jobStatusSchema = z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']);
export type JobStatus = z.infer<typeof jobStatusSchema>;

const jobFileSchema = z.strictObject({ type: z.string(), url: z.string() });

export const jobSchema = z.strictObject({
  id: z.string().startsWith('job_'),
  object: z.literal('job'),
  capability: z.string(),
  model: z.string().nullable(),
  status: jobStatusSchema,
  input: z.record(z.string(), z.unknown()),
  output: z.strictObject({ files: z.array(jobFileSchema) }),
  cost: z.strictObject({ amount_usd: usdString, refunded_usd: usdString }),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: isoTimestamp,
  completed_at: isoTimestamp.nullable(),
  expires_at: isoTimestamp.nullable(),
});
export type Job = z.infer<typeof jobSchema>;

export const jobListSchema = z.strictObject({
  object: z.literal('list'),
  data: z.array(jobSchema),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});
export type JobList = z.infer<typeof jobListSchema>;

export const accountSchema = z.strictObject({
  object: z.literal('account'),
  balance: z.strictObject({ amount_usd: usdString, enabled: z.boolean() }),
  concurrency: z.strictObject({ active: z.number().int().min(0), limit: z.number().int().min(0) }),
});
export type Account = z.infer<typeof accountSchema>;

export const errorEnvelopeSchema = z.strictObject({
  error: z.strictObject({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    request_id: z.string(),
    param: z.string().optional(),
  }),
});

/** Body of POST /videos/generation as mediabatch sends it. */
export interface CreateVideoJobBody {
  model?: string;
  input: Record<string, unknown>;
  max_cost_usd?: string;
  metadata?: Record<string, unknown>;
}

export interface ListJobsQuery {
  status?: readonly JobStatus[];
  api_key_id?: number;
  created_after?: string;
  created_before?: string;
  limit?: number;
  cursor?: string;
}
