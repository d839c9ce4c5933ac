export { type ApiResult, type CallOptions, type ClientOptions, MediaGenClient } from './client.js';
export { ApiConnectionError, ApiError, parseRetryAfter } from './errors.js';
export * from './schemas.js';
