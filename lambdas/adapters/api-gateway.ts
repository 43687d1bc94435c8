import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { invocationTraceHeader } from '../config/runtime-config.js';
import { AppError, DependencyError } from '../core/errors.js';
import { errorBody, errorResponse, json, type HttpRequest, type HttpResponse } from '../core/http.js';
import type { RouteId } from '../core/routes.js';
import { ROUTES } from '../core/routes.js';
import type { Telemetry } from '../core/ports.js';
import { TRACE_HEADER } from '../core/trace-header.js';

/** API Gateway REST (v1 proxy) event → the core's HttpRequest. */
export const toHttpRequest = (event: APIGatewayProxyEvent): HttpRequest => {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(event.headers ?? {}))
    if (value !== undefined) headers[key.toLowerCase()] = value;
  // In Lambda, the invocation's own trace (it continues the API stage's when the stage traces): the trace a
  // submitted task carries to the marketplace call (core/trace-header.ts). Local mode keeps the request's header.
  const invocationTrace = invocationTraceHeader();
  if (invocationTrace) headers[TRACE_HEADER] = invocationTrace;
  const body =
    event.body === null || event.body === undefined
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  const tenantId = event.requestContext?.authorizer?.['tenantId'];
  const caller = event.requestContext?.identity?.userArn ?? event.requestContext?.authorizer?.['principalId'];
  const pathParameters: Record<string, string> = {};
  for (const [key, value] of Object.entries(event.pathParameters ?? {}))
    if (value !== undefined) pathParameters[key] = value;
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(event.queryStringParameters ?? {}))
    if (value !== undefined) query[key] = value;
  return {
    method: event.httpMethod,
    resource: event.resource,
    pathParameters,
    headers,
    body,
    ...(Object.keys(query).length > 0 ? { query } : {}),
    requestId: event.requestContext?.requestId ?? 'unknown',
    ...(typeof tenantId === 'string' ? { tenantId } : {}),
    ...(typeof caller === 'string' ? { caller } : {}),
  };
};

export const toProxyResult = (response: HttpResponse): APIGatewayProxyResult => ({
  statusCode: response.status,
  headers: { 'content-type': 'application/json', ...response.headers },
  // 204 has no body (JSON.stringify(undefined) is no string).
  body: response.body === undefined ? '' : JSON.stringify(response.body),
});

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * An AWS SDK error (service fault or throttling, carrying `$metadata`) or a network failure on the way to
 * SQS or DynamoDB: the contract's 503, not a 500. Use cases wrap the calls whose failure they can explain;
 * this catches the rest, so admin routes answer like ingest does.
 */
const isDependencyFailure = (error: unknown): boolean => {
  if (typeof error !== 'object' || error === null || error instanceof AppError) return false;
  const e = error as { $metadata?: unknown; code?: string; name?: string };
  return e.$metadata !== undefined || NETWORK_CODES.has(e.code ?? '') || e.name === 'TimeoutError';
};

/** A route's use case; `telemetry` is scoped to the request (its correlation id, tenant and store). */
export type RouteHandlers = Partial<
  Record<RouteId, (request: HttpRequest, telemetry: Telemetry) => Promise<HttpResponse>>
>;

/** What every log line and metric record of one request carries: the request id is its correlation id. */
const requestFields = (request: HttpRequest, route: RouteId): Record<string, string> => {
  const storeId = request.pathParameters['storeId'];
  return {
    correlationId: request.requestId,
    route,
    ...(request.tenantId === undefined ? {} : { tenantId: request.tenantId }),
    ...(storeId === undefined ? {} : { storeId }),
  };
};

/** A Lambda proxy handler that dispatches on the API Gateway resource + method to the route's use case. */
export const createApiHandler =
  (
    handlers: RouteHandlers,
    telemetry: Telemetry & { bindInvocation?(context: Context): void },
    afterEach?: () => void,
  ) =>
  async (event: APIGatewayProxyEvent, context?: Context): Promise<APIGatewayProxyResult> => {
    if (context) telemetry.bindInvocation?.(context);
    const route = ROUTES.find((r) => r.resource === event.resource && r.method === event.httpMethod);
    const handle = route ? handlers[route.id] : undefined;
    let response: HttpResponse;
    if (!route || !handle) {
      response = json(
        404,
        errorBody('route_not_found', `no route for ${event.httpMethod} ${event.resource}`),
      );
    } else {
      const request = toHttpRequest(event);
      const scope = telemetry.scoped(requestFields(request, route.id));
      try {
        response = await handle(request, scope);
      } catch (error) {
        response = errorResponse(
          isDependencyFailure(error)
            ? new DependencyError('a dependency failed; nothing was changed', error)
            : error,
        );
        if (response.status >= 500) {
          scope.error('request failed', {
            error: String(error),
            cause: String((error as Error).cause ?? ''),
          });
        }
      } finally {
        scope.end();
      }
    }
    afterEach?.();
    return toProxyResult(response);
  };
