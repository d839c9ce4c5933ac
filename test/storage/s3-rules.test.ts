import { describe, expect, it } from 'vitest';
import { s3Settings } from '../../src/storage/s3-client.js';
import { s3Error, s3Failure } from '../../src/storage/s3-errors.js';

/** The pure parts of the S3 store: what the environment asks for, and what a failure means. */
describe('S3 settings from the environment', () => {
  it('path-style with a custom endpoint, virtual-hosted with AWS, unless asked', () => {
    expect(s3Settings({})).toEqual({
      endpoint: null,
      addressing: 'virtual',
      region: null,
      credentials: null,
    });
    expect(s3Settings({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' })).toMatchObject({
      endpoint: 'http://127.0.0.1:9000',
      addressing: 'path',
    });
    expect(
      s3Settings({
        AWS_ENDPOINT_URL_S3: 'https://s3.example',
        AWS_ENDPOINT_URL: 'http://other',
        MEDIABATCH_S3_ADDRESSING: 'virtual',
      }),
    ).toMatchObject({ endpoint: 'https://s3.example', addressing: 'virtual' });
    expect(s3Settings({ MEDIABATCH_S3_ADDRESSING: 'path' })).toMatchObject({
      endpoint: null,
      addressing: 'path',
    });
  });

  it('takes the region and keys the AWS way', () => {
    expect(s3Settings({ AWS_DEFAULT_REGION: 'eu-west-1' })).toMatchObject({ region: 'eu-west-1' });
    expect(s3Settings({ AWS_REGION: 'us-east-2', AWS_DEFAULT_REGION: 'eu-west-1' })).toMatchObject({
      region: 'us-east-2',
    });
    expect(s3Settings({ AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 's' })).toMatchObject({
      credentials: { accessKeyId: 'AKIA1', secretAccessKey: 's' },
    });
    expect(
      s3Settings({ AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' }),
    ).toMatchObject({ credentials: { sessionToken: 't' } });
    // Half a key pair leaves the SDK's chain to find one (a profile, a role).
    expect(s3Settings({ AWS_ACCESS_KEY_ID: 'AKIA1' })).toMatchObject({ credentials: null });
  });

  it('refuses an endpoint or an addressing it cannot use, naming it', () => {
    expect(s3Settings({ AWS_ENDPOINT_URL_S3: 'minio:9000' })).toEqual({
      problem: 'the S3 endpoint "minio:9000" is not an http(s) URL',
    });
    expect(s3Settings({ MEDIABATCH_S3_ADDRESSING: 'dns' })).toEqual({
      problem: 'MEDIABATCH_S3_ADDRESSING must be "path" or "virtual", not "dns"',
    });
  });
});

describe('what an S3 failure means', () => {
  const sdkError = (name: string, status: number | undefined, message = `${name} happened`) =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });

  it('carries the bucket code of a refusal, not an outage', () => {
    expect(s3Failure(sdkError('NoSuchBucket', 404))).toEqual({
      code: 'NoSuchBucket',
      unreachable: false,
      notFound: false,
      message: 'NoSuchBucket happened',
    });
    expect(s3Failure(sdkError('SignatureDoesNotMatch', 403))).toMatchObject({
      code: 'SignatureDoesNotMatch',
      unreachable: false,
    });
  });

  it('reads a bare 404 of a HEAD as a missing object', () => {
    expect(s3Failure(sdkError('NotFound', 404, ''))).toEqual({
      code: 'NotFound',
      unreachable: false,
      notFound: true,
      message: 'HTTP 404 NotFound',
    });
    expect(s3Failure(sdkError('404', 404, 'UnknownError'))).toMatchObject({
      code: null,
      notFound: true,
      message: 'HTTP 404',
    });
  });

  it('counts no answer, timeouts and 5xx as unreachable', () => {
    expect(
      s3Failure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    ).toMatchObject({
      code: 'ECONNREFUSED',
      unreachable: true,
    });
    expect(s3Failure(Object.assign(new Error('x'), { cause: { code: 'ECONNRESET' } }))).toMatchObject({
      unreachable: true,
    });
    expect(s3Failure(sdkError('SlowDown', 503))).toMatchObject({ code: 'SlowDown', unreachable: true });
    expect(s3Failure(sdkError('Whatever', 500))).toMatchObject({ unreachable: true });
    expect(s3Failure(sdkError('TimeoutError', undefined))).toMatchObject({ unreachable: true });
    expect(s3Failure(sdkError('AccessDenied', 403))).toMatchObject({ unreachable: false });
  });

  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'EPIPE',
    'EAI_AGAIN',
    'TimeoutError',
    'RequestTimeout',
    'SlowDown',
    'ServiceUnavailable',
    'InternalError',
  ])('%s is the endpoint, not the bucket: unreachable', (code) => {
    expect(s3Failure(Object.assign(new Error('x'), { code }))).toMatchObject({ code, unreachable: true });
    expect(s3Failure(sdkError(code, 400))).toMatchObject({ code, unreachable: true });
  });

  it('reads a code however the SDK names it, and no status as no answer', () => {
    expect(s3Failure(sdkError('UnknownEndpoint', 400))).toMatchObject({ code: 'UnknownEndpoint' });
    expect(s3Failure(sdkError('ErrorDocument', 400))).toMatchObject({ code: 'ErrorDocument' });
    expect(s3Failure(sdkError('Error', 400))).toMatchObject({ code: null });
    expect(s3Failure(Object.assign(new Error('m'), { Code: 'NoSuchKey', name: 'Other' }))).toMatchObject({
      code: 'NoSuchKey',
    });
    expect(s3Failure(Object.assign(new Error('m'), { code: '', name: 'AccessDenied' }))).toMatchObject({
      code: 'AccessDenied',
      unreachable: false,
    });
    expect(s3Failure(sdkError('Odd', 0))).toMatchObject({ unreachable: true });
    expect(s3Failure(sdkError('Odd', 499))).toMatchObject({ unreachable: false, notFound: false });
    expect(s3Failure(new Error(''))).toEqual({
      code: null,
      unreachable: false,
      notFound: false,
      message: 'HTTP ?',
    });
    expect(s3Failure(null)).toMatchObject({ code: null, message: 'HTTP ?' });
  });

  it('says the code once, and blanks nothing when no credential is known', () => {
    const error = s3Error('cannot read s3://b12/k', s3Failure(sdkError('AccessDenied', 403, 'denied')), []);
    expect(error.message).toBe('cannot read s3://b12/k: denied (AccessDenied)');
    expect(s3Error('w', s3Failure(new Error('plain')), []).message).toBe('w: plain');
    expect(s3Error('w', s3Failure(new Error('plain')), [])).not.toHaveProperty('code');
  });

  it('blanks any credential a server quotes, and keeps the code for the caller', () => {
    const failure = s3Failure(
      sdkError('InvalidAccessKeyId', 403, 'key AKIAEXAMPLE and secret s3cr3t are wrong'),
    );
    const error = s3Error('cannot write s3://b12/k', failure, ['AKIAEXAMPLE', 's3cr3t']);
    expect(error.message).toBe(
      'cannot write s3://b12/k: key [credential] and secret [credential] are wrong (InvalidAccessKeyId)',
    );
    expect(error).toMatchObject({ code: 'InvalidAccessKeyId', unreachable: false });
  });
});
