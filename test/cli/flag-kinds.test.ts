import { describe, expect, it } from 'vitest';
import {
  checkUrlLifetime,
  linksExpireAt,
  MAX_URL_LIFETIME_SECONDS,
} from '../../src/batch/gallery/url-lifetime.js';
import { parseKind } from '../../src/cli/flag-kinds.js';
import { UserError } from '../../src/errors.js';
import { ExitCode, exitCodeOfError } from '../../src/exit-codes.js';

/** The flag as the CLI reads it: its text through the flag table's kind. */
const parseUrlLifetime = (text: string | undefined) =>
  checkUrlLifetime(parseKind('lifetime', text, '--url-lifetime') ?? null);
const parseSince = (text: string | undefined) => parseKind('duration', text, '--since') ?? 48 * 3_600_000;

function refusal(run: () => unknown): UserError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect(exitCodeOfError((error as UserError).code)).toBe(ExitCode.Usage);
    return error as UserError;
  }
  throw new Error('expected a refusal');
}

describe('--url-lifetime', () => {
  it('is 7 days, the SigV4 maximum, when absent', () => {
    expect(MAX_URL_LIFETIME_SECONDS).toBe(604_800);
    expect(parseUrlLifetime(undefined)).toBe(604_800);
  });

  it('reads minutes, hours and days as --since does, in seconds', () => {
    expect(parseUrlLifetime('90m')).toBe(5_400);
    expect(parseUrlLifetime('12h')).toBe(43_200);
    expect(parseUrlLifetime('2d')).toBe(172_800);
    expect(parseUrlLifetime(' 1m ')).toBe(60);
  });

  it('accepts exactly 7 days in every unit, and refuses a minute more', () => {
    for (const text of ['7d', '168h', '10080m']) expect(parseUrlLifetime(text)).toBe(604_800);
    for (const text of ['8d', '169h', '10081m', '99999d']) {
      expect(refusal(() => parseUrlLifetime(text)).message).toBe(
        `--url-lifetime may be at most 7d (168h, 10080m), the longest a presigned S3 URL can live; got '${text}'`,
      );
    }
  });

  it('refuses what is not a duration of at least a minute, naming its own flag', () => {
    for (const text of ['0m', '0d', '30s', '1.5h', '-1h', 'week', '', '7']) {
      expect(refusal(() => parseUrlLifetime(text)).message).toBe(
        `--url-lifetime must be a duration such as 90m, 6h or 2d, got '${text}'`,
      );
    }
  });

  it('is checked again by the library, for an API caller: 1 minute to 7 days', () => {
    expect(checkUrlLifetime(60)).toBe(60);
    expect(refusal(() => checkUrlLifetime(604_801)).code).toBe('invalid_usage');
    expect(refusal(() => checkUrlLifetime(59)).code).toBe('invalid_usage');
  });

  it('shares its parser with import --since, which keeps its own words', () => {
    expect(parseSince('90m')).toBe(5_400_000);
    expect(parseSince(undefined)).toBe(48 * 3_600_000);
    expect(refusal(() => parseSince('30s')).message).toBe(
      "--since must be a duration such as 90m, 6h or 2d, got '30s'",
    );
  });
});

describe('when presigned links expire', () => {
  const signedAt = new Date('2030-01-01T00:00:00.000Z');

  it('is the lifetime after signing, with long-term keys', () => {
    expect(linksExpireAt(signedAt, 604_800)).toEqual({
      expireAt: new Date('2030-01-08T00:00:00.000Z'),
      byCredentials: false,
    });
    expect(linksExpireAt(signedAt, 60, new Date('2030-01-01T00:01:00.000Z')).byCredentials).toBe(false);
  });

  it('is when a session token expires, if that comes first', () => {
    const tokenEnds = new Date('2030-01-01T01:00:00.000Z');
    expect(linksExpireAt(signedAt, 43_200, tokenEnds)).toEqual({ expireAt: tokenEnds, byCredentials: true });
  });
});
