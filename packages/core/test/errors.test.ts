import { describe, expect, it } from 'vitest';
import {
  AppError,
  ERRORS,
  ErrorCode,
  conflict,
  errorKindOf,
  forbidden,
  invalidRequest,
  notFound,
  rateLimited,
  unauthorized,
} from '../src/errors.js';

describe('the error table', () => {
  it('gives each reason the status and SPEC code the README lists', () => {
    expect(Object.fromEntries(Object.entries(ERRORS).map(([kind, { status, code }]) => [kind, `${status} ${code}`]))).toEqual({
      invalid: '400 INVALID_REQUEST',
      unauthorized: '401 UNAUTHORIZED',
      forbidden: '403 FORBIDDEN',
      notFound: '404 NOT_FOUND',
      conflict: '409 INVALID_REQUEST',
      tooLarge: '413 INVALID_REQUEST',
      unsupportedMediaType: '415 INVALID_REQUEST',
      rateLimited: '429 RATE_LIMITED',
      internal: '500 INTERNAL_ERROR',
      unavailable: '503 INTERNAL_ERROR',
    });
    // Every code of SPEC §7 (and RATE_LIMITED) has at least one reason.
    expect(new Set(Object.values(ERRORS).map((entry) => entry.code))).toEqual(new Set(Object.values(ErrorCode)));
  });

  it('makes errors from a reason alone: status and code follow, details and headers are kept', () => {
    const taken = conflict('This slug is already taken', [{ field: 'slug', message: 'is already taken' }]);
    expect(taken).toBeInstanceOf(AppError);
    expect(taken).toMatchObject({
      kind: 'conflict',
      status: 409,
      code: 'INVALID_REQUEST',
      details: [{ field: 'slug', message: 'is already taken' }],
    });
    expect([invalidRequest('x'), unauthorized(), forbidden(), notFound()].map((error) => error.status)).toEqual([400, 401, 403, 404]);
    expect(rateLimited('slow down', 0.2)).toMatchObject({ status: 429, code: 'RATE_LIMITED', headers: { 'Retry-After': '1' } });
    expect(rateLimited('slow down', 41.5).headers).toEqual({ 'Retry-After': '42' });
  });

  it('finds the reason of a bare status, and none for a status the table does not name', () => {
    expect(errorKindOf(415)).toBe('unsupportedMediaType');
    expect(errorKindOf(503)).toBe('unavailable');
    expect(errorKindOf(405)).toBeUndefined();
  });
});
