import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AppError, PayloadTooLargeError, ValidationError } from '../../../lambdas/core/errors.js';
import {
  errorResponse,
  headerOf,
  json,
  MAX_JSON_DEPTH,
  parseJsonBody,
  validate,
  type HttpRequest,
} from '../../../lambdas/core/http.js';

const request = (body: string | undefined, headers: Record<string, string> = {}): HttpRequest => ({
  method: 'POST',
  resource: '/v1/stores/{storeId}/tasks',
  pathParameters: {},
  headers,
  body,
  requestId: 'r',
});

/** The error a synchronous call throws (asserted outside any catch). */
const thrownBy = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('validate', () => {
  const Schema = z.object({
    sku: z.string().min(1),
    items: z.array(z.object({ quantity: z.number().int() })),
  });

  it('returns the parsed value', () => {
    expect(validate(Schema, { sku: 'A', items: [] })).toEqual({ sku: 'A', items: [] });
  });

  it('throws a ValidationError (400)', () => {
    expect(() => validate(Schema, { sku: '', items: [] })).toThrow(ValidationError);
  });

  it('names the offending field first in the message', () => {
    expect(() => validate(Schema, { sku: '', items: [] })).toThrow(/^sku: /);
  });

  it('names a field inside an array with an index', () => {
    expect(() => validate(Schema, { sku: 'A', items: [{ quantity: 1 }, { quantity: 1.5 }] })).toThrow(
      /^items\[1\]\.quantity: /,
    );
  });

  it('puts the caller’s path prefix in front', () => {
    expect(() => validate(z.string().regex(/^a+$/), 'b', ['storeId'])).toThrow(/^storeId: /);
  });

  it('calls a whole-body problem "body"', () => {
    expect(() => validate(Schema, 'not an object')).toThrow(/^body: /);
  });

  it('lists every issue in the details', () => {
    expect((thrownBy(() => validate(Schema, { sku: '', items: 'x' })) as ValidationError).details).toEqual({
      issues: [
        { field: 'sku', message: expect.any(String) },
        { field: 'items', message: expect.any(String) },
      ],
    });
  });
});

describe('parseJsonBody', () => {
  it('parses a JSON body', () => {
    expect(parseJsonBody(request('{"a":[1]}', { 'content-type': 'application/json' }), 100)).toEqual({
      a: [1],
    });
  });

  it('answers 413 for a body over the limit', () => {
    expect(() => parseJsonBody(request('{"a":"12345"}'), 10)).toThrow(PayloadTooLargeError);
  });

  it('measures the limit in UTF-8 bytes', () => {
    // 6 characters, 12 bytes.
    expect(() => parseJsonBody(request('"ééééé"'), 11)).toThrow(PayloadTooLargeError);
  });

  it('accepts a body exactly at the limit', () => {
    expect(parseJsonBody(request('{"a":"12"}'), 10)).toEqual({ a: '12' });
  });

  it.each(['[]', '[{"eventId":"a"}]', '7', '"text"', 'null', 'true'])(
    'answers 400 naming body when the JSON is %s, not an object',
    (raw) => {
      expect(thrownBy(() => parseJsonBody(request(raw), 100))).toEqual(
        new ValidationError('body: must be a JSON object'),
      );
    },
  );

  it('refuses nesting deeper than MAX_JSON_DEPTH without overflowing the stack', () => {
    const deep = `{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(thrownBy(() => parseJsonBody(request(deep), 1_000_000))).toEqual(
      new ValidationError(`body: nested deeper than ${MAX_JSON_DEPTH} levels`),
    );
  });

  it('accepts nesting exactly MAX_JSON_DEPTH deep', () => {
    const raw = `${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}{}${'}'.repeat(MAX_JSON_DEPTH - 1)}`;
    expect(() => parseJsonBody(request(raw), 10_000)).not.toThrow();
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'answers 415 for content-type %s',
    (contentType) => {
      expect(
        thrownBy(() => parseJsonBody(request('{}', { 'content-type': contentType }), 100)),
      ).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    },
  );

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/vnd.api+json',
  ])('accepts content-type %s', (contentType) => {
    expect(parseJsonBody(request('{}', { 'Content-Type': contentType }), 100)).toEqual({});
  });

  it('accepts a body without a content-type', () => {
    expect(parseJsonBody(request('{}'), 100)).toEqual({});
  });

  it.each([undefined, '', '   '])('answers 400 for an empty body (%j)', (body) => {
    expect(() => parseJsonBody(request(body), 100)).toThrow('body: a JSON object is required');
  });

  it('answers 400 for a body that is not JSON', () => {
    expect(() => parseJsonBody(request('{"a":'), 100)).toThrow('body: not valid JSON');
  });
});

describe('headerOf', () => {
  it('finds a header whatever its case', () => {
    expect(headerOf({ headers: { 'Idempotency-Key': 'k' } }, 'idempotency-key')).toBe('k');
  });

  it('is undefined for a missing header', () => {
    expect(headerOf({ headers: {} }, 'authorization')).toBeUndefined();
  });
});

describe('errorResponse', () => {
  it('answers an AppError with its status and the contract’s body', () => {
    expect(errorResponse(new AppError(429, 'throttled', 'slow down'))).toEqual({
      status: 429,
      body: { error: { code: 'throttled', message: 'slow down' } },
    });
  });

  it('hides an unexpected error behind a 500', () => {
    expect(errorResponse(new TypeError('x is undefined'))).toEqual({
      status: 500,
      body: { error: { code: 'internal_error', message: 'an unexpected error occurred' } },
    });
  });
});

describe('json', () => {
  it('leaves headers out unless given', () => {
    expect(json(200, { a: 1 })).toEqual({ status: 200, body: { a: 1 } });
  });
});
