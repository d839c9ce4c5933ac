import { describe, expect, it } from 'vitest';
import { type DecideOptions, decideItem } from '../../src/batch/plan-decisions/plan-decisions.js';
import { deletedAfterSaving, type ItemFiles, remedy } from '../../src/documents/file-problems.js';
import type { RecordedRequest } from '../../src/runner/item-plan.js';
import { requestHash } from '../../src/runner/request.js';
import { attempt, item, record } from './records.js';

/** The attempt's request as recorded: these entries were sent for the item as it is. */
const asSent: RecordedRequest = (attempt) => attempt;

const NOW = Date.parse('2026-11-26T12:00:00.000Z');

function files(problem: 'missing' | 'altered' | 'touched', expiresAt: string | null): ItemFiles {
  return {
    problems: [{ path: '/p/out/a.mp4', problem, detail: 'x' }],
    savedAt: '2026-11-25T10:00:00.000Z',
    jobId: 'job_1',
    expiresAt,
  };
}

describe('what a run does about a saved file not as saved', () => {
  it('fetches it again for free while the service holds the output', () => {
    expect(remedy(files('missing', '2026-11-27T10:00:00.000Z'), NOW)).toBe(
      'run fetches it again from job job_1 for free (no new generation, the service keeps it until 2026-11-27T10:00:00.000Z)',
    );
    // No expiry recorded: the service is asked; it is not called gone.
    expect(remedy(files('altered', null), NOW)).toMatch(/^run fetches it again from job job_1 for free/);
  });

  it('after the expiry, says it was saved, then deleted, and that only --regenerate-expired pays', () => {
    const gone = files('missing', '2026-11-26T11:00:00.000Z');
    expect(deletedAfterSaving(gone)).toBe(
      'saved on 2026-11-25T10:00:00.000Z, then deleted from the disk; the service no longer holds it (its outputs expired on 2026-11-26T11:00:00.000Z)',
    );
    expect(deletedAfterSaving(files('altered', null))).toMatch(/then altered on the disk;/);
    expect(remedy(gone, NOW)).toMatch(/: only run `regenerateExpired` pays for it again$/);
  });

  it('leaves a file only modified since to the run, which compares its SHA-256', () => {
    expect(remedy(files('touched', '2026-11-26T11:00:00.000Z'), NOW)).toBe(
      'run compares its SHA-256 and fetches it again if it differs',
    );
  });
});

describe("plan's decision for a done item whose saved file is not as saved", () => {
  const clip = item('a', { seconds: 2 });
  const hash = requestHash(clip);
  const entry = {
    itemId: 'a',
    record: record(clip, 'done'),
    attempt: attempt({ itemId: 'a', requestHash: hash, filesSaved: true }),
  };
  const decide = (extra: Partial<DecideOptions>) =>
    decideItem(clip, entry, { regenerateExpired: false, nowMs: NOW, ...extra }, asSent);

  it('is unchanged when every file is as saved', () => {
    expect(decide({ files: new Map() }).label).toBe('done');
  });

  it('is a free refetch within the retention, and expired after it, submitted only on request', () => {
    const held = new Map([['a', files('missing', '2026-11-27T00:00:00.000Z')]]);
    expect(decide({ files: held })).toMatchObject({ label: 'refetch', submit: false });
    const gone = new Map([['a', files('missing', '2026-11-26T00:00:00.000Z')]]);
    expect(decide({ files: gone })).toMatchObject({ label: 'expired', submit: false });
    expect(decide({ files: gone, regenerateExpired: true })).toMatchObject({
      label: 'expired',
      submit: true,
    });
  });

  it('reads an item the run already found expired after saving by its own words', () => {
    const expired = {
      ...entry,
      record: record(clip, 'expired', {
        errorMessage: 'saved on D, then deleted from the disk; the service no longer holds it',
      }),
    };
    expect(decideItem(clip, expired, { regenerateExpired: false }, asSent).reason).toBe(
      'saved on D, then deleted from the disk; the service no longer holds it; run `regenerateExpired` pays for it again',
    );
    const never = { ...expired, attempt: { ...entry.attempt, filesSaved: false } };
    expect(decideItem(clip, never, { regenerateExpired: true }, asSent).reason).toBe(
      'outputs were deleted before they were saved: generated and paid for again',
    );
  });
});
