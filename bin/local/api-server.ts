import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { INTEGRATOR_API, NO_USAGE_KEY_MESSAGE } from '../../lambdas/config/topology.js';
import { errorBody } from '../../lambdas/core/http.js';
import { OPENAPI_PATH, openApiDocument } from '../../lambdas/core/openapi/document.js';
import { matchRoute, type RouteFunction } from '../../lambdas/core/routes.js';

/**
 * Local stand-in for API Gateway: matches the same route table, runs the same Lambda authorizer for
 * integrator routes, checks the local admin token where AWS checks IAM, and calls the same ingest and
 * admin handlers with REST (v1) proxy events.
 */
export interface ApiServerOptions {
  port: number;
  adminToken: string;
  handlers: Record<RouteFunction, (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>>;
  authorizer: (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
  isReady: () => boolean;
  /** Extra read-only routes (status pages); return undefined to fall through. */
  extra?: (
    method: string,
    path: string,
  ) => { status: number; body: unknown; headers?: Record<string, string> } | undefined;
  /** How long an authorizer decision is reused, as API Gateway does (default INTEGRATOR_API's); 0 disables. */
  authorizerCacheSeconds?: number;
  /**
   * Token bucket per usage key (one per tenant) on integrator routes, as the stack's usage plan (default
   * INTEGRATOR_API's rate and burst); null disables it. A missing usage key is refused either way.
   */
  tenantThrottle?: { ratePerSecond: number; burst: number } | null;
}

/** What API Gateway keeps of an Allow, usage key included (it is cached with the decision). */
type Decision = Pick<APIGatewayAuthorizerResult, 'principalId' | 'context' | 'usageIdentifierKey'>;

/**
 * API Gateway's authorizer cache: an Allow is reused per Authorization header value for the TTL, so a
 * revoked token keeps working until its entry expires. Refusals are not cached (a new token works at once).
 */
export class AuthorizerCache {
  private readonly entries = new Map<string, { decision: Decision; until: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): Decision | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.decision;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, decision: Decision): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      const now = this.now();
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(key, { decision, until: this.now() + this.ttlMs });
  }
}

/**
 * Token buckets keyed by the authorizer's usage key, as API Gateway's usage plan keys its per-key throttle:
 * every token of a tenant carries the tenant's key, so a tenant has one bucket whatever its token count.
 */
export class TenantThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** undefined when the request may pass, else the seconds to wait (for Retry-After). */
  take(usageKey: string): number | undefined {
    const now = this.now();
    const bucket = this.buckets.get(usageKey) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(usageKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }
}

/** API Gateway's own ceiling on a request body. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

class TooLarge extends Error {}

const readBody = (req: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new TooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const LOCAL_ARN = 'arn:aws:execute-api:local:000000000000:local/local';

export const startApiServer = async (
  options: ApiServerOptions,
): Promise<{ url: string; server: Server; stop(): Promise<void> }> => {
  const authorizerCache = new AuthorizerCache(
    (options.authorizerCacheSeconds ?? INTEGRATOR_API.authorizerCacheSeconds) * 1000,
  );
  const throttleSettings =
    options.tenantThrottle === undefined
      ? { ratePerSecond: INTEGRATOR_API.tenantRatePerSecond, burst: INTEGRATOR_API.tenantBurst }
      : options.tenantThrottle;
  const throttle = throttleSettings
    ? new TenantThrottle(throttleSettings.ratePerSecond, throttleSettings.burst)
    : undefined;
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent) return;
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(typeof body === 'string' || body === undefined ? body : JSON.stringify(body));
    };
    void (async () => {
      const method = req.method ?? 'GET';
      // Not `new URL(req.url, base)`: a path such as `//x` would parse as a host and throw.
      let url: URL;
      try {
        url = new URL(`http://localhost${req.url?.startsWith('/') ? req.url : '/'}`);
      } catch {
        return send(400, errorBody('bad_request', 'malformed request target'));
      }
      if (url.pathname === '/health' && method === 'GET') {
        return options.isReady() ? send(200, { status: 'ok' }) : send(503, { status: 'starting' });
      }
      // Unauthenticated and static, as on AWS (a MOCK integration there).
      if (url.pathname === OPENAPI_PATH && method === 'GET') return send(200, openApiDocument());
      const extra = options.extra?.(method, url.pathname);
      if (extra) return send(extra.status, extra.body, extra.headers);
      if (!options.isReady()) return send(503, errorBody('not_ready', 'the local stack is still starting'));
      const match = matchRoute(method, url.pathname);
      if (match.kind === 'not_found')
        return send(404, errorBody('route_not_found', `no route for ${method} ${url.pathname}`));
      if (match.kind === 'method_not_allowed')
        return send(405, errorBody('method_not_allowed', `${method} is not allowed on ${url.pathname}`));
      let body: string | undefined;
      try {
        body = await readBody(req);
      } catch (error) {
        if (error instanceof TooLarge)
          return send(413, errorBody('payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`));
        throw error;
      }
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers[key] = value;
      const authorization = headers['authorization'];
      const authorizer: Record<string, string> = {};
      let usageKey: string | undefined;
      const { route } = match;
      if (route.auth === 'tenant') {
        if (!authorization) return send(401, errorBody('unauthorized', 'missing credential'));
        try {
          let decision = authorizerCache.get(authorization);
          if (!decision) {
            decision = await options.authorizer({
              type: 'TOKEN',
              authorizationToken: authorization,
              methodArn: `${LOCAL_ARN}/${method}${url.pathname}`,
            });
            authorizerCache.set(authorization, decision);
          }
          Object.assign(authorizer, decision.context ?? {}, { principalId: decision.principalId });
          usageKey = decision.usageIdentifierKey ?? undefined;
        } catch (error) {
          // As API Gateway: the authorizer's "Unauthorized" is a 401; any other failure is AUTHORIZER_FAILURE (503 here and in the stack).
          if ((error as Error).message === 'Unauthorized')
            return send(401, errorBody('unauthorized', 'missing or invalid credential'));
          return send(503, errorBody('dependency_unavailable', 'the credential could not be checked; retry'));
        }
        // Integrator routes require a usage key (apiKeyRequired): without one API Gateway answers 403.
        if (!usageKey) return send(403, errorBody('forbidden', NO_USAGE_KEY_MESSAGE));
        const wait = throttle?.take(usageKey);
        if (wait !== undefined) {
          return send(429, errorBody('throttled', 'too many requests for this tenant; retry later'), {
            'retry-after': String(wait),
          });
        }
      } else if (route.auth === 'iam') {
        const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
        if (!token || !sameSecret(token, options.adminToken)) {
          return send(
            401,
            errorBody('unauthorized', 'admin routes need Authorization: Bearer $ADMIN_TOKEN in local mode'),
          );
        }
      }
      const event: APIGatewayProxyEvent = {
        resource: route.resource,
        path: url.pathname,
        httpMethod: method,
        headers,
        multiValueHeaders: {},
        queryStringParameters: url.search ? Object.fromEntries(url.searchParams) : null,
        multiValueQueryStringParameters: null,
        pathParameters: match.pathParameters,
        stageVariables: null,
        body: body ?? null,
        isBase64Encoded: false,
        requestContext: {
          requestId: randomUUID(),
          resourcePath: route.resource,
          httpMethod: method,
          path: url.pathname,
          stage: 'local',
          accountId: '000000000000',
          apiId: 'local',
          protocol: 'HTTP/1.1',
          requestTimeEpoch: Date.now(),
          resourceId: route.id,
          authorizer: route.auth === 'tenant' ? authorizer : null,
          identity: {
            userArn: route.auth === 'iam' ? 'local-admin' : null,
            sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
            userAgent: headers['user-agent'] ?? null,
          } as APIGatewayProxyEvent['requestContext']['identity'],
        } as APIGatewayProxyEvent['requestContext'],
      };
      const result = await options.handlers[route.fn](event);
      const outHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(result.headers ?? {})) outHeaders[k] = String(v);
      send(result.statusCode, result.body, outHeaders);
    })().catch((error: unknown) => {
      send(500, errorBody('internal_error', `local API failed: ${String(error)}`));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
