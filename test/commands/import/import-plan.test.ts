import { describe, expect, it } from 'vitest';
import {
  chooseAdopted,
  importedItemState,
  matchesRequest,
  metadataAttempt,
  planImport,
} from '../../../src/commands/import/import-plan.js';
import type { ManifestItem } from '../../../src/manifest/index.js';
import type { Job } from '../../../src/service-client/schemas.js';

const item = (id: string, prompt = `prompt ${id}`): ManifestItem => ({
  id,
  model: 'acme-video-2',
  input: { prompt, seconds: 2 },
  metadata: { campaign: 'spring' },
  maxCostMicros: null,
});

let clock = 0;
function job(
  of: ManifestItem,
  status: Job['status'],
  extra: { attempt?: number; files?: number; manifest?: string; input?: Record<string, unknown> } = {},
): Job {
  clock += 1;
  return {
    id: `job_${of.id}_${clock}`,
    object: 'job',
    capability: 'video.generation',
    model: 'acme-video-2',
    status,
    input: extra.input ?? of.input,
    output: {
      files: Array.from({ length: extra.files ?? (status === 'succeeded' ? 1 : 0) }, () => ({
        type: 'video',
        url: 'u',
      })),
    },
    cost: { amount_usd: '0.100000', refunded_usd: status === 'failed' ? '0.100000' : '0.000000' },
    error: status === 'failed' ? { code: 'model_busy', message: 'busy' } : null,
    metadata: {
      campaign: 'spring',
      'mediabatch.manifest': extra.manifest ?? 'spring',
      'mediabatch.item': of.id,
      'mediabatch.attempt': String(extra.attempt ?? 1),
    },
    created_at: new Date(Date.UTC(2030, 0, 1, 0, 0, clock)).toISOString(),
    completed_at: null,
    expires_at: null,
  };
}

describe('import: matching a job to an item', () => {
  it('needs the same model, input and user metadata', () => {
    const a = item('a');
    expect(matchesRequest(job(a, 'succeeded'), a)).toBe(true);
    expect(matchesRequest(job(a, 'succeeded', { input: { seconds: 2, prompt: 'prompt a' } }), a)).toBe(true);
    expect(matchesRequest(job(a, 'succeeded', { input: { prompt: 'prompt a', seconds: 3 } }), a)).toBe(false);
    expect(matchesRequest({ ...job(a, 'succeeded'), model: 'acme-video-3' }, a)).toBe(false);
    expect(matchesRequest({ ...job(a, 'succeeded'), model: 'acme-video-3' }, { ...a, model: null })).toBe(
      true,
    );
    const retagged = job(a, 'succeeded');
    retagged.metadata = { ...retagged.metadata, campaign: 'autumn' };
    expect(matchesRequest(retagged, a)).toBe(false);
  });

  it('reads the attempt number, 0 when it is not one', () => {
    const a = item('a');
    expect(metadataAttempt(job(a, 'failed', { attempt: 7 }))).toBe(7);
    const odd = job(a, 'failed');
    odd.metadata['mediabatch.attempt'] = 'x';
    expect(metadataAttempt(odd)).toBe(0);
  });
});

describe('import: which job an item adopts', () => {
  const a = item('a');
  it('succeeded first, then unfinished, then the newest failure', () => {
    const failedOld = job(a, 'failed');
    const running = job(a, 'running');
    const succeeded = job(a, 'succeeded');
    const failedNew = job(a, 'failed');
    expect(chooseAdopted([failedOld, running, succeeded, failedNew])).toBe(succeeded);
    expect(chooseAdopted([failedOld, running, failedNew])).toBe(running);
    expect(chooseAdopted([failedOld, failedNew])).toBe(failedNew);
    expect(chooseAdopted([])).toBeNull();
  });

  it('prefers a success whose outputs still exist, then the newest', () => {
    const gone = job(a, 'succeeded', { files: 0 });
    const kept = job(a, 'succeeded');
    const newerGone = job(a, 'succeeded', { files: 0 });
    expect(chooseAdopted([gone, kept, newerGone])).toBe(kept);
    expect(chooseAdopted([gone, newerGone])).toBe(newerGone);
  });
});

describe('import: the plan of a whole manifest', () => {
  it('adopts per item, numbers the adopted job last and above every attempt seen, and lists the rest', () => {
    const [a, b, c] = [item('a'), item('b'), item('c')];
    const aFailed = job(a, 'failed', { attempt: 1 });
    const aDone = job(a, 'succeeded', { attempt: 2 });
    const aLater = job(a, 'failed', { attempt: 3 });
    const bOld = job(b, 'succeeded', { attempt: 1, input: { prompt: 'old b', seconds: 2 } });
    const gone = job(item('removed'), 'succeeded');
    const other = job(a, 'succeeded', { manifest: 'autumn' });
    const plan = planImport('spring', [a, b, c], [aFailed, aDone, aLater, bOld, gone, other, aDone]);

    expect([...plan.adopted]).toEqual([['a', aDone]]);
    const rows = plan.attempts.map((row) => [row.itemId, row.job.id, row.seq, row.current, row.adopted]);
    expect(rows).toEqual([
      ['a', aFailed.id, 1, true, false],
      ['a', aLater.id, 2, true, false],
      ['a', aDone.id, 3, true, true],
      ['b', bOld.id, 1, false, false],
      ['removed', gone.id, 1, false, false],
    ]);
    expect(plan.unmatched.map((entry) => [entry.job.id, entry.reason])).toEqual([
      [bOld.id, 'changed_request'],
      [gone.id, 'unknown_item'],
    ]);
  });

  it('keeps the next attempt number above one the lost ledger used', () => {
    const a = item('a');
    const only = job(a, 'running', { attempt: 4 });
    expect(planImport('spring', [a], [only]).attempts.map((row) => row.seq)).toEqual([4]);
  });
});

describe('import: the state an item gets', () => {
  const a = item('a');
  it.each([
    ['queued', null, 'in_flight', null],
    ['running', null, 'in_flight', null],
    ['failed', null, 'failed', 'model_busy'],
    ['canceled', null, 'failed', 'canceled'],
    ['succeeded', 'saved', 'done', null],
    ['succeeded', 'expired', 'expired', 'expired'],
    ['succeeded', 'not_saved', 'in_flight', null],
  ] as const)('%s job, files %s: %s', (status, save, state, errorCode) => {
    expect(importedItemState(job(a, status), save)).toEqual({ state, errorCode });
  });

  it('no job: pending', () => {
    expect(importedItemState(null, null)).toEqual({ state: 'pending', errorCode: null });
  });
});
