import { describe, expect, it } from 'vitest';
import { ApiConnectionError, ApiError } from '../../src/errors.js';
import { decideSubmitError, refusalSettlesAttempt } from '../../src/runner/policy.js';
import {
  combineStops,
  extendStreak,
  type FailureStreak,
  formatDuration,
  isOutage,
  NO_STREAK,
  OUTAGE_REPORT_EVERY_MS,
  outageReportDue,
  stopLoss,
  storeRefusal,
} from '../../src/runner/stop-rules.js';

function apiError(status: number, code: string | null, param: string | null = null): ApiError {
  return new ApiError({
    status,
    type: null,
    serviceCode: code,
    param,
    requestId: 'req_1',
    retryAfter: null,
    message: `${status} ${code}`,
  });
}

const half = () => 0.5;

describe('causes that are the same for every item', () => {
  it('a 404 on a submission stops the run instead of failing the item', () => {
    expect(decideSubmitError(apiError(404, 'route_not_found'), 0, half, 1)).toMatchObject({
      kind: 'service_route',
      code: 'route_not_found',
    });
    expect(decideSubmitError(apiError(404, null), 0, half, 1)).toMatchObject({
      kind: 'service_route',
      code: 'http_404',
    });
  });

  it('a 404 settles an attempt only if no earlier send of it went unanswered', () => {
    const decision = decideSubmitError(apiError(404, 'route_not_found'), 0, half, 1);
    expect(refusalSettlesAttempt(decision, false)).toBe(true);
    expect(refusalSettlesAttempt(decision, true)).toBe(false);
  });

  it('a 400 carries the field it names, for the stop-loss', () => {
    expect(decideSubmitError(apiError(400, 'invalid_parameter', 'model'), 0, half, 1)).toMatchObject({
      kind: 'item_failed',
      code: 'invalid_parameter',
      signature: 'invalid_parameter on model',
    });
  });
});

describe('combineStops', () => {
  const drain = { kind: 'draining' } as const;
  const refused = { kind: 'account_refused', code: 'invalid_api_key', message: 'no' } as const;
  const unknown = (jobId: string) =>
    ({ kind: 'ledger_disagrees', jobs: [{ jobId, itemId: `item-${jobId}` }] }) as const;

  it('keeps the stop that asks most of the user, and the first of equals', () => {
    expect(combineStops(null, drain)).toBe(drain);
    expect(combineStops(drain, refused)).toBe(refused);
    expect(combineStops(refused, drain)).toBe(refused);
    expect(combineStops(unknown('a'), refused)).toBe(refused);
    expect(combineStops(drain, unknown('a'))).toEqual(unknown('a'));
    const loss = { kind: 'stop_loss', signature: 'x', items: ['a', 'b', 'c'] } as const;
    expect(combineStops(loss, drain)).toBe(loss);
    expect(combineStops(loss, { ...loss, signature: 'y' })).toBe(loss);
  });

  it('adds up unknown jobs, each once', () => {
    const both = combineStops(combineStops(unknown('a'), unknown('b')), unknown('a'));
    expect(both).toEqual({
      kind: 'ledger_disagrees',
      jobs: [
        { jobId: 'a', itemId: 'item-a' },
        { jobId: 'b', itemId: 'item-b' },
      ],
    });
  });
});

describe('the stop-loss', () => {
  const fold = (outcomes: Array<[string, string | null]>): FailureStreak =>
    outcomes.reduce((streak, [item, failure]) => extendStreak(streak, item, failure), NO_STREAK);

  it('stops after three different items in a row fail alike', () => {
    const streak = fold([
      ['a', 'invalid_parameter on model'],
      ['b', 'invalid_parameter on model'],
      ['c', 'invalid_parameter on model'],
    ]);
    expect(stopLoss(streak)).toEqual({
      kind: 'stop_loss',
      signature: 'invalid_parameter on model',
      items: ['a', 'b', 'c'],
    });
  });

  it('a success or a different failure in between starts over; one item twice counts once', () => {
    expect(
      stopLoss(
        fold([
          ['a', 'x'],
          ['b', 'x'],
          ['c', null],
          ['d', 'x'],
        ]),
      ),
    ).toBeNull();
    expect(
      stopLoss(
        fold([
          ['a', 'x'],
          ['b', 'y'],
          ['c', 'x'],
        ]),
      ),
    ).toBeNull();
    expect(
      stopLoss(
        fold([
          ['a', 'x'],
          ['a', 'x'],
          ['b', 'x'],
        ]),
      ),
    ).toBeNull();
    expect(
      stopLoss(
        fold([
          ['a', 'x'],
          ['a', 'x'],
          ['b', 'x'],
          ['c', 'x'],
        ]),
      ),
    ).not.toBeNull();
  });

  it('starts from nothing, and a success brings it back there', () => {
    expect(NO_STREAK).toEqual({ signature: null, items: [] });
    expect(
      fold([
        ['a', 'x'],
        ['b', null],
      ]),
    ).toEqual({ signature: null, items: [] });
    expect(
      fold([
        ['a', 'x'],
        ['b', null],
        ['c', 'x'],
      ]),
    ).toEqual({ signature: 'x', items: ['c'] });
    // Nothing failed, so there is nothing to stop for, however low the limit.
    expect(stopLoss(NO_STREAK, 0)).toBeNull();
    expect(stopLoss(fold([['a', 'x']]), 1)).toEqual({ kind: 'stop_loss', signature: 'x', items: ['a'] });
  });

  it('never counts content_rejected, which judges one prompt', () => {
    expect(
      stopLoss(
        fold([
          ['a', 'content_rejected'],
          ['b', 'content_rejected'],
          ['c', 'content_rejected'],
        ]),
      ),
    ).toBeNull();
  });
});

describe('outages', () => {
  it('counts only answers that never came or a failing service', () => {
    expect(isOutage(new ApiConnectionError('reset'))).toBe(true);
    expect(isOutage(new ApiConnectionError('not json', { kind: 'protocol' }))).toBe(false);
    expect(isOutage(apiError(503, null))).toBe(true);
    // A plain 500 and a request timeout are the service failing as a whole too.
    expect(isOutage(apiError(500, 'internal_error'))).toBe(true);
    expect(isOutage(apiError(408, null))).toBe(true);
    expect(isOutage(apiError(499, null))).toBe(false);
    expect(isOutage(apiError(404, 'route_not_found'))).toBe(false);
    expect(isOutage(new Error('not an answer of the service'))).toBe(false);
    expect(isOutage(apiError(400, 'invalid_parameter'))).toBe(false);
    expect(isOutage(apiError(429, 'concurrency_limited'))).toBe(false);
  });

  it('reports at the start, then once a minute', () => {
    expect(outageReportDue(null, 5)).toBe(true);
    expect(outageReportDue(0, OUTAGE_REPORT_EVERY_MS - 1)).toBe(false);
    expect(outageReportDue(0, OUTAGE_REPORT_EVERY_MS)).toBe(true);
    const last = 1_700_000_000_000;
    expect(outageReportDue(last, last + OUTAGE_REPORT_EVERY_MS - 1)).toBe(false);
    expect(outageReportDue(last, last + OUTAGE_REPORT_EVERY_MS)).toBe(true);
  });

  it('says how long in words a person reads at a glance', () => {
    expect(formatDuration(45_400)).toBe('45s');
    expect(formatDuration(130_000)).toBe('2m10s');
    expect(formatDuration(3_720_000)).toBe('1h02m');
    expect(formatDuration(59_400)).toBe('59s');
    expect(formatDuration(60_000)).toBe('1m00s');
    expect(formatDuration(65_000)).toBe('1m05s');
    expect(formatDuration(3_599_000)).toBe('59m59s');
    expect(formatDuration(3_600_000)).toBe('1h00m');
    expect(formatDuration(-5_000)).toBe('0s');
  });
});

describe('storeRefusal: save errors that are the same for every item', () => {
  it.each([
    ['ENOSPC', 'the disk holding /out is full: free some space'],
    ['EDQUOT', 'the disk quota for /out is used up: free some space or raise the quota'],
    ['EROFS', '/out is on a read-only file system: remount it read-write'],
    ['EACCES', "mediabatch may not write in /out: fix the folder's owner or permissions"],
    ['NoSuchBucket', 'the bucket of /out does not exist: create it, or fix output.dir'],
    [
      'InvalidAccessKeyId',
      'the storage does not know the access key used for /out: check AWS_ACCESS_KEY_ID or AWS_PROFILE',
    ],
    [
      'SignatureDoesNotMatch',
      'the storage refused the signature of requests to /out: check AWS_SECRET_ACCESS_KEY',
    ],
    ['AccessDenied', 'the credentials may not write to /out: grant them s3:PutObject there'],
    ['ExpiredToken', 'the session token for /out has expired: renew AWS_SESSION_TOKEN'],
    [
      'CredentialsProviderError',
      'no AWS credentials were found for /out: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with a profile in ~/.aws/config',
    ],
  ])('%s stops the run and says what to fix', (code, message) => {
    expect(storeRefusal(code, '/out')).toEqual({ kind: 'disk_refuses', code, folder: '/out', message });
  });

  it.each([['EISDIR'], ['ENOTEMPTY'], ['EIO'], ['ECONNRESET'], ['toString'], [undefined]])(
    '%s concerns one item or the transfer: no stop',
    (code) => {
      expect(storeRefusal(code, '/out')).toBeNull();
    },
  );

  it('outranks a drain and the stop-loss, and yields to a refused account', () => {
    const disk = storeRefusal('ENOSPC', '/out')!;
    expect(combineStops({ kind: 'draining' }, disk)).toBe(disk);
    expect(combineStops({ kind: 'stop_loss', signature: 'x', items: ['a'] }, disk)).toBe(disk);
    const refused = { kind: 'account_refused', code: 'c', message: 'm' } as const;
    expect(combineStops(disk, refused)).toBe(refused);
    expect(combineStops(refused, disk)).toBe(refused);
  });
});
