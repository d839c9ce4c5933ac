import { describe, expect, it } from 'vitest';
import { globMatches } from '../../src/batch/run-settings/item-selection.js';
import {
  classifyPreflightError,
  preflightDelays,
  suggestBaseUrl,
} from '../../src/batch/service/preflight.js';
import { ensureSameService, serviceIdentity } from '../../src/batch/service/service-identity.js';
import { retryFailedNotice } from '../../src/commands/run/retry-failed.js';
import { ApiConnectionError, ApiError } from '../../src/errors.js';
import { type AttemptRecord, type ItemRecord, newItemRecord } from '../../src/ledger/records.js';
import { SANDBOX_IDENTITY } from '../../src/ledger/service.js';
import type { ManifestItem } from '../../src/manifest/index.js';
import { requestHash } from '../../src/runner/request.js';

function apiError(status: number, code: string | null): ApiError {
  return new ApiError({
    status,
    type: null,
    serviceCode: code,
    param: null,
    requestId: null,
    retryAfter: null,
    message: 'x',
  });
}

describe('service identity', () => {
  it('is the base URL with spelling variants folded together', () => {
    expect(serviceIdentity('HTTPS://Api.Example.com:443/v1/')).toBe('https://api.example.com/v1');
    expect(serviceIdentity('http://user:pw@127.0.0.1:4010/v1?x=1#y')).toBe('http://127.0.0.1:4010/v1');
    expect(serviceIdentity('http://127.0.0.1:4010/v1')).not.toBe(serviceIdentity('http://localhost:4010/v1'));
  });

  it('lets an unbound ledger or its own service through, and refuses any other', () => {
    expect(() => ensureSameService(null, 'https://a/v1', '/w/.mediabatch/x.sqlite', '/w')).not.toThrow();
    expect(() => ensureSameService('https://a/v1', 'https://a/v1', '/w/l.sqlite', '/w')).not.toThrow();
    expect(() =>
      ensureSameService(SANDBOX_IDENTITY, 'https://a/v1', '/w/.mediabatch/x.sqlite', '/w'),
    ).toThrow(
      /belongs to the embedded sandbox \(`sandbox`\), not https:\/\/a\/v1[\s\S]*`ledger` \.mediabatch\/x\.a\.sqlite[\s\S]*`sandbox`/,
    );
  });
});

describe('pre-flight rules', () => {
  it('tells a wrong address from a missing service and a refused account', () => {
    expect(classifyPreflightError(apiError(404, 'route_not_found'))).toBe('wrong_route');
    expect(classifyPreflightError(apiError(404, null))).toBe('wrong_route');
    expect(classifyPreflightError(apiError(401, 'invalid_api_key'))).toBe('refused');
    expect(classifyPreflightError(apiError(402, 'wallet_not_enabled'))).toBe('refused');
    expect(classifyPreflightError(apiError(503, null))).toBe('unavailable');
    expect(classifyPreflightError(apiError(400, 'invalid_request'))).toBe('not_the_service');
    expect(classifyPreflightError(new ApiConnectionError('html', { kind: 'protocol' }))).toBe(
      'not_the_service',
    );
    const refused = new ApiConnectionError('refused', {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyPreflightError(refused)).toBe('unreachable');
    const noName = new ApiConnectionError('no such name', {
      cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }),
    });
    expect(classifyPreflightError(noName)).toBe('no_such_host');
    const dnsDown = new ApiConnectionError('dns down', {
      cause: Object.assign(new Error('x'), { code: 'EAI_AGAIN' }),
    });
    expect(classifyPreflightError(dnsDown)).toBe('unreachable');
    const slow = new ApiConnectionError('slow', {
      cause: Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
    });
    expect(classifyPreflightError(slow)).toBe('slow');
  });

  it('spreads a few tries over the whole window', () => {
    expect(preflightDelays(30_000)).toEqual([2000, 4000, 8000, 16_000]);
    expect(preflightDelays(1500).reduce((a, b) => a + b, 0)).toBe(1500);
  });

  it('suggests /v1 only where it is missing', () => {
    expect(suggestBaseUrl('http://127.0.0.1:4010')).toBe('http://127.0.0.1:4010/v1');
    expect(suggestBaseUrl('https://api.example.com/api')).toBe('https://api.example.com/api/v1');
    expect(suggestBaseUrl('https://api.example.com/v1')).toBeNull();
  });
});

describe('--only globs', () => {
  it('match whole ids with * and ?, and nothing else is special', () => {
    expect(globMatches('beach-*', 'beach-sunrise')).toBe(true);
    expect(globMatches('beach-*', 'a-beach-x')).toBe(false);
    expect(globMatches('c?ty', 'city')).toBe(true);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('a+(b)', 'a+(b)')).toBe(true);
  });
});

describe('--retry-failed notice', () => {
  const item = (id: string, maxCostMicros: number | null = null): ManifestItem =>
    ({
      id,
      model: 'm',
      input: { prompt: id, seconds: 2 },
      metadata: {},
      maxCostMicros,
    }) as unknown as ManifestItem;
  const failed = (it: ManifestItem, code: string): ItemRecord => ({
    ...newItemRecord(it.id, requestHash(it)),
    state: 'failed',
    errorCode: code,
  });

  it('counts final failures by code and prices them; transient ones and 409 are not its business', () => {
    const items = [item('a', 100_000), item('b', 50_000), item('c'), item('d'), item('e')];
    const records = [
      failed(items[0]!, 'content_rejected'),
      failed(items[1]!, 'invalid_parameter'),
      failed(items[2]!, 'retries_exhausted'),
      failed(items[3]!, 'idempotency_key_reused'),
      { ...newItemRecord('e', requestHash(items[4]!)), state: 'done' as const },
    ];
    const notice = retryFailedNotice(items, records, [] as AttemptRecord[], 1_000_000);
    expect(notice?.message).toBe(
      '`retryFailed`: 2 failed item(s) go out again with new keys (content_rejected: 1, invalid_parameter: 1), for about $0.15 more, within the $1.00 left of budget_usd\n' +
        '`retryFailed`: 1 item(s) refused with idempotency_key_reused (409) are not retried: inspect the ledger, then edit them\n',
    );
    expect(retryFailedNotice(items, [records[4]!], [], null)).toBeNull();
  });
});
