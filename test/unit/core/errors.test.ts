import { describe, expect, it } from 'vitest';
import {
  AppError,
  ConditionFailedError,
  ConflictError,
  DependencyError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  ValidationError,
} from '../../../lambdas/core/errors.js';

describe('error hierarchy', () => {
  it.each([
    {
      error: new ValidationError('bad', { field: 'x' }),
      name: 'ValidationError',
      status: 400,
      code: 'invalid_request',
      retryable: false,
      message: 'bad',
    },
    {
      error: new UnauthorizedError(),
      name: 'UnauthorizedError',
      status: 401,
      code: 'unauthorized',
      retryable: false,
      message: 'missing or invalid credential',
    },
    {
      error: new ForbiddenError(),
      name: 'ForbiddenError',
      status: 403,
      code: 'forbidden',
      retryable: false,
      message: 'this credential does not own the store',
    },
    {
      error: new NotFoundError('store_not_found', 'no store'),
      name: 'NotFoundError',
      status: 404,
      code: 'store_not_found',
      retryable: false,
      message: 'no store',
    },
    {
      error: new ConflictError('store_exists', 'taken'),
      name: 'ConflictError',
      status: 409,
      code: 'store_exists',
      retryable: false,
      message: 'taken',
    },
    {
      error: new PayloadTooLargeError(1024),
      name: 'PayloadTooLargeError',
      status: 413,
      code: 'payload_too_large',
      retryable: false,
      message: 'request body exceeds 1024 bytes',
    },
    {
      error: new DependencyError('sqs down'),
      name: 'DependencyError',
      status: 503,
      code: 'dependency_unavailable',
      retryable: true,
      message: 'sqs down',
    },
  ])('$name answers $status $code', ({ error, name, status, code, retryable, message }) => {
    expect(error).toBeInstanceOf(AppError);
    expect({
      name: error.name,
      status: error.status,
      code: error.code,
      retryable: error.retryable,
      message: error.message,
    }).toEqual({ name, status, code, retryable, message });
  });

  it('keeps validation details for the answer body', () => {
    expect(new ValidationError('bad', { field: 'x' }).details).toEqual({ field: 'x' });
  });

  it('keeps the cause of a dependency failure only when there is one', () => {
    const cause = new Error('timeout');
    expect(new DependencyError('sqs down', cause).cause).toBe(cause);
    expect('cause' in new DependencyError('sqs down')).toBe(false);
  });

  it('names a lost condition and carries the item that stood in its way', () => {
    const error = new ConditionFailedError({ storeId: 's1' });
    expect([error.name, error.message, error.current]).toEqual([
      'ConditionFailedError',
      'condition failed',
      { storeId: 's1' },
    ]);
  });
});
