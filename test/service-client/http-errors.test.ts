import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  BillingError,
  ConflictError,
  InternalServerError,
  MediabatchError,
  NotFoundError,
  RateLimitError,
} from '../../src/errors.js';
import { apiErrorFrom } from '../../src/service-client/http-errors.js';

const envelope = (code: string, param?: string) => ({
  error: { type: 't', code, message: 'm', request_id: 'req_1', ...(param ? { param } : {}) },
});

describe('apiErrorFrom', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [402, BillingError],
    [404, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
  ] as const)('gives a %i its own class, still an ApiError with every field', (status, kind) => {
    const error = apiErrorFrom(status, envelope('some_code', 'input.prompt'), 'req_header', 7);
    expect(error).toBeInstanceOf(kind);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(MediabatchError);
    expect(error.name).toBe(kind.name);
    expect(error).toMatchObject({
      status,
      code: 'some_code',
      serviceCode: 'some_code',
      param: 'input.prompt',
      requestId: 'req_1',
      retryAfter: 7,
    });
  });

  it('keeps a status with no class of its own, and a body without the envelope, a plain ApiError', () => {
    const teapot = apiErrorFrom(418, envelope('x'), null, null);
    expect(teapot.constructor).toBe(ApiError);
    const proxyPage = apiErrorFrom(502, '<html>bad gateway</html>', 'req_h', null);
    expect(proxyPage).toBeInstanceOf(InternalServerError);
    expect(proxyPage).toMatchObject({ code: 'http_502', serviceCode: null, param: null, requestId: 'req_h' });
  });
});
