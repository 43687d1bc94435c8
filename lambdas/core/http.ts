import { z } from 'zod';
import { AppError, PayloadTooLargeError, ValidationError } from './errors.js';
import { STORE_ID_PATTERN } from './names.js';

/** What a use case sees of an HTTP request, whether it came from API Gateway or from local mode. */
export interface HttpRequest {
  method: string;
  resource: string;
  pathParameters: Record<string, string>;
  /** Query string parameters (absent when the request had none). */
  query?: Record<string, string>;
  headers: Record<string, string>;
  body: string | undefined;
  /** Set by the authorizer for integrator routes. */
  tenantId?: string;
  /** Who called an admin route (IAM principal on AWS, "local-admin" in local mode). */
  caller?: string;
  requestId: string;
}

export interface HttpResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): HttpResponse => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});

export const errorBody = (code: string, message: string, details?: unknown) => ({
  error: { code, message, ...(details === undefined ? {} : { details }) },
});

export const errorResponse = (error: unknown): HttpResponse => {
  if (error instanceof AppError)
    return json(error.status, errorBody(error.code, error.message, error.details));
  return json(500, errorBody('internal_error', 'an unexpected error occurred'));
};

/** Single-task bodies and batch bodies have separate limits (413 beyond them). */
export const MAX_TASK_BODY_BYTES = 64 * 1024;
export const MAX_BATCH_BODY_BYTES = 1024 * 1024;

export const parseJsonBody = (request: HttpRequest, limitBytes: number): unknown => {
  const raw = request.body ?? '';
  if (Buffer.byteLength(raw, 'utf8') > limitBytes) throw new PayloadTooLargeError(limitBytes);
  const contentType = headerOf(request, 'content-type');
  if (contentType !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new AppError(415, 'unsupported_media_type', 'content-type must be application/json');
  }
  if (raw.trim() === '') throw new ValidationError('body: a JSON object is required');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw) as unknown;
  } catch {
    throw new ValidationError('body: not valid JSON');
  }
  // Every route's body is an object; say so plainly rather than through a schema's "expected object".
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError('body: must be a JSON object');
  }
  if (depthExceeds(parsed, MAX_JSON_DEPTH)) {
    throw new ValidationError(`body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return parsed;
};

/**
 * JSON.parse copes with any nesting, but JSON.stringify (the work message, the per-task size check) recurses
 * and would overflow the stack on a hostile body such as 500,000 nested arrays: refuse it up front.
 */
export const MAX_JSON_DEPTH = 32;

/** Iterative, so the check itself cannot overflow. */
const depthExceeds = (root: unknown, max: number): boolean => {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
};

export const headerOf = (request: Pick<HttpRequest, 'headers'>, name: string): string | undefined => {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(request.headers)) if (key.toLowerCase() === lower) return value;
  return undefined;
};

const describePath = (path: PropertyKey[]): string =>
  path.length === 0
    ? 'body'
    : path
        .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
        .join('.')
        .replace(/\.\[/g, '[');

/** zod → 400 whose message names the first offending field; every issue is listed in details. */
export const validate = <T>(schema: z.ZodType<T>, value: unknown, pathPrefix: PropertyKey[] = []): T => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: describePath([...pathPrefix, ...issue.path]),
    message: issue.message,
  }));
  const first = issues[0] ?? { field: 'body', message: 'invalid' };
  throw new ValidationError(`${first.field}: ${first.message}`, { issues });
};

export const StoreIdParam = z.string().regex(STORE_ID_PATTERN, 'must be 1–48 characters of [A-Za-z0-9_-]');

/** The `{storeId}` path parameter, validated (store ids become queue names). */
export const storeIdOf = (request: Pick<HttpRequest, 'pathParameters'>): string =>
  validate(StoreIdParam, request.pathParameters['storeId'], ['storeId']);

/** A tenant id, in a path parameter or a body (1–64 characters of [A-Za-z0-9_-]). */
export const TenantIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 characters of [A-Za-z0-9_-]');

/** The `{tenantId}` path parameter, validated. */
export const tenantIdOf = (request: Pick<HttpRequest, 'pathParameters'>): string =>
  validate(TenantIdSchema, request.pathParameters['tenantId'], ['tenantId']);
