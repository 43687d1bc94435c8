import type { Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createApiHandler, toHttpRequest, toProxyResult } from '../../../lambdas/adapters/api-gateway.js';
import {
  ConflictError,
  DependencyError,
  NotFoundError,
  ValidationError,
} from '../../../lambdas/core/errors.js';
import { json, type HttpRequest, type HttpResponse } from '../../../lambdas/core/http.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { Telemetry } from '../../../lambdas/core/ports.js';
import { apiEvent, recordingTelemetry } from '../support/fixtures.js';

describe('toHttpRequest', () => {
  it('maps method, resource, path parameters and request id', () => {
    expect(toHttpRequest(apiEvent())).toMatchObject({
      method: 'POST',
      resource: '/v1/stores/{storeId}/tasks',
      pathParameters: { storeId: 'store-1' },
      requestId: 'req-1',
    });
  });

  it('lowercases header names', () => {
    const request = toHttpRequest(
      apiEvent({ headers: { 'Content-Type': 'application/json', 'X-Custom-Thing': 'v' } }),
    );
    expect(request.headers).toEqual({ 'content-type': 'application/json', 'x-custom-thing': 'v' });
  });

  it('passes a plain body through', () => {
    expect(toHttpRequest(apiEvent({ body: '{"a":1}' })).body).toBe('{"a":1}');
  });

  it('decodes a base64 body as UTF-8', () => {
    const body = '{"title":"Café ☕"}';
    const event = apiEvent({ body: Buffer.from(body, 'utf8').toString('base64'), isBase64Encoded: true });
    expect(toHttpRequest(event).body).toBe(body);
  });

  it('maps query string parameters', () => {
    expect(toHttpRequest(apiEvent({ queryStringParameters: { limit: '5', cursor: 'abc' } })).query).toEqual({
      limit: '5',
      cursor: 'abc',
    });
  });

  it('has no query when API Gateway sends null', () => {
    expect(toHttpRequest(apiEvent({ queryStringParameters: null })).query).toBeUndefined();
  });

  it('has no body when API Gateway sends null', () => {
    expect(toHttpRequest(apiEvent({ body: null })).body).toBeUndefined();
  });

  it('takes the tenant from the authorizer context', () => {
    expect(toHttpRequest(apiEvent()).tenantId).toBe('tenant-1');
  });

  it('has no tenant without an authorizer context', () => {
    const event = apiEvent({ requestContext: { requestId: 'r' } as never });
    expect(toHttpRequest(event)).not.toHaveProperty('tenantId');
  });

  it('takes the caller from the IAM identity', () => {
    const event = apiEvent({
      requestContext: { requestId: 'r', identity: { userArn: 'arn:aws:iam::1:user/ops' } } as never,
    });
    expect(toHttpRequest(event).caller).toBe('arn:aws:iam::1:user/ops');
  });

  it('falls back to the authorizer principal as the caller', () => {
    const event = apiEvent({
      requestContext: { requestId: 'r', authorizer: { principalId: 'tenant:t1', tenantId: 't1' } } as never,
    });
    expect(toHttpRequest(event).caller).toBe('tenant:t1');
  });

  it('tolerates missing headers and path parameters', () => {
    const event = apiEvent({ headers: null as never, pathParameters: null });
    expect(toHttpRequest(event)).toMatchObject({ headers: {}, pathParameters: {} });
  });
});

describe('toProxyResult', () => {
  it('serialises the body as JSON with a JSON content type', () => {
    expect(toProxyResult(json(202, { ok: true }))).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
    });
  });

  it('adds the response’s own headers', () => {
    expect(toProxyResult(json(429, {}, { 'retry-after': '5' })).headers).toEqual({
      'content-type': 'application/json',
      'retry-after': '5',
    });
  });
});

describe('createApiHandler', () => {
  const ok = (body: unknown = { ok: true }) =>
    vi.fn<(request: HttpRequest) => Promise<HttpResponse>>(async () => json(200, body));

  it('routes by resource and method to the route’s handler', async () => {
    const submitTask = ok();
    const submitBatch = ok();
    const { telemetry } = recordingTelemetry();
    await createApiHandler({ submitTask, submitBatch }, telemetry)(apiEvent());
    expect([submitTask.mock.calls.length, submitBatch.mock.calls.length]).toEqual([1, 0]);
  });

  it('hands the handler the mapped request', async () => {
    const submitTask = ok();
    const { telemetry } = recordingTelemetry();
    await createApiHandler({ submitTask }, telemetry)(apiEvent({ body: '{}' }));
    expect(submitTask.mock.calls[0]?.[0]).toEqual(toHttpRequest(apiEvent({ body: '{}' })));
  });

  it('returns the handler’s answer as a proxy result', async () => {
    const { telemetry } = recordingTelemetry();
    const result = await createApiHandler({ submitTask: ok({ accepted: 1 }) }, telemetry)(apiEvent());
    expect(result).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"accepted":1}',
    });
  });

  it('answers 404 route_not_found for a resource it does not know', async () => {
    const { telemetry } = recordingTelemetry();
    const result = await createApiHandler(
      { submitTask: ok() },
      telemetry,
    )(apiEvent({ resource: '/v2/things', httpMethod: 'GET' }));
    expect({ status: result.statusCode, body: JSON.parse(result.body) }).toEqual({
      status: 404,
      body: { error: { code: 'route_not_found', message: 'no route for GET /v2/things' } },
    });
  });

  it('answers 404 for a known route this function does not serve', async () => {
    const { telemetry } = recordingTelemetry();
    const result = await createApiHandler(
      { submitTask: ok() },
      telemetry,
    )(apiEvent({ resource: '/admin/stores/{storeId}', httpMethod: 'PUT' }));
    expect(result.statusCode).toBe(404);
  });

  it('answers 404 for a known resource with another method', async () => {
    const { telemetry } = recordingTelemetry();
    const result = await createApiHandler(
      { submitTask: ok() },
      telemetry,
    )(apiEvent({ httpMethod: 'DELETE' }));
    expect(result.statusCode).toBe(404);
  });

  it.each([
    [new ValidationError('eventId: required', { issues: [] }), 400, 'invalid_request', 'eventId: required'],
    [
      new NotFoundError('store_not_found', 'store s does not exist'),
      404,
      'store_not_found',
      'store s does not exist',
    ],
    [
      new ConflictError('store_not_accepting', 'store s is disabled'),
      409,
      'store_not_accepting',
      'store s is disabled',
    ],
    [
      new DependencyError('the store queue is unavailable'),
      503,
      'dependency_unavailable',
      'the store queue is unavailable',
    ],
    [new Error('secret internals'), 500, 'internal_error', 'an unexpected error occurred'],
    [
      Object.assign(new Error('Rate exceeded'), {
        name: 'ThrottlingException',
        $metadata: { httpStatusCode: 400 },
      }),
      503,
      'dependency_unavailable',
      'a dependency failed; nothing was changed',
    ],
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }),
      503,
      'dependency_unavailable',
      'a dependency failed; nothing was changed',
    ],
  ])('turns %s into %d with the contract’s error body', async (error, status, code, message) => {
    const { telemetry } = recordingTelemetry();
    const failing = vi.fn(async () => {
      throw error;
    });
    const result = await createApiHandler({ submitTask: failing }, telemetry)(apiEvent());
    expect({ status: result.statusCode, error: JSON.parse(result.body).error }).toEqual({
      status,
      error: expect.objectContaining({ code, message }),
    });
  });

  it('includes validation details in the error body', async () => {
    const { telemetry } = recordingTelemetry();
    const details = { issues: [{ field: 'eventId', message: 'required' }] };
    const failing = async () => {
      throw new ValidationError('eventId: required', details);
    };
    const result = await createApiHandler({ submitTask: failing }, telemetry)(apiEvent());
    expect(JSON.parse(result.body)).toEqual({
      error: { code: 'invalid_request', message: 'eventId: required', details },
    });
  });

  it('logs a 5xx with the request’s correlation id, route, tenant, store and cause', async () => {
    const { telemetry, logs } = recordingTelemetry();
    const failing = async () => {
      throw new DependencyError('the store queue is unavailable', new Error('SQS down'));
    };
    await createApiHandler({ submitTask: failing }, telemetry)(apiEvent());
    expect(logs).toEqual([
      {
        level: 'error',
        message: 'request failed',
        fields: {
          correlationId: 'req-1',
          route: 'submitTask',
          tenantId: 'tenant-1',
          storeId: 'store-1',
          error: 'DependencyError: the store queue is unavailable',
          cause: 'Error: SQS down',
        },
      },
    ]);
  });

  it('hands the use case telemetry scoped to the request: its log lines and metrics carry the ids', async () => {
    const { telemetry, logs } = recordingTelemetry();
    const observed: unknown[] = [];
    telemetry.subscribe((observation) => observed.push(observation.properties));
    const submitTask = async (_request: unknown, scoped: Telemetry) => {
      scoped.info('task accepted', { eventId: 'e1' });
      scoped.count(MetricNames.tasksAccepted);
      return json(202, {});
    };
    await createApiHandler({ submitTask }, telemetry)(apiEvent());
    const ids = { correlationId: 'req-1', route: 'submitTask', tenantId: 'tenant-1', storeId: 'store-1' };
    expect({ logs, observed }).toEqual({
      logs: [{ level: 'info', message: 'task accepted', fields: { ...ids, eventId: 'e1' } }],
      observed: [ids],
    });
  });

  it('tells the telemetry which Lambda invocation it serves', async () => {
    const { telemetry } = recordingTelemetry();
    const bindInvocation = vi.fn();
    const context = { awsRequestId: 'lambda-req-1' } as unknown as Context;
    await createApiHandler(
      { submitTask: async () => json(202, {}) },
      Object.assign(telemetry, { bindInvocation }),
    )(apiEvent(), context);
    expect(bindInvocation.mock.calls).toEqual([[context]]);
  });

  it('does not log a 4xx as an error', async () => {
    const { telemetry, logs } = recordingTelemetry();
    const failing = async () => {
      throw new ValidationError('eventId: required');
    };
    await createApiHandler({ submitTask: failing }, telemetry)(apiEvent());
    expect(logs).toEqual([]);
  });

  it('runs afterEach once per request (metrics flush), even when the handler fails', async () => {
    const { telemetry } = recordingTelemetry();
    const afterEach = vi.fn();
    const failing = async () => {
      throw new Error('boom');
    };
    const handler = createApiHandler({ submitTask: failing }, telemetry, afterEach);
    await handler(apiEvent());
    await handler(apiEvent({ resource: '/nowhere' }));
    expect(afterEach).toHaveBeenCalledTimes(2);
  });
});
