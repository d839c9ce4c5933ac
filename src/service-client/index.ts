export { type ApiResult, type CallOptions, type ClientOptions, MediaGenClient } from './client.js';
export { parseRetryAfter } from './http-errors.js';
export * from './schemas.js';
