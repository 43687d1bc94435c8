import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { errorBody } from '../../lambdas/core/http.js';
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
  extra?: (method: string, path: string) => { status: number; body: unknown } | undefined;
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
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent) return;
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = req.method ?? 'GET';
      if (url.pathname === '/health' && method === 'GET') {
        return options.isReady() ? send(200, { status: 'ok' }) : send(503, { status: 'starting' });
      }
      const extra = options.extra?.(method, url.pathname);
      if (extra) return send(extra.status, extra.body);
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
      const { route } = match;
      if (route.auth === 'tenant') {
        if (!authorization) return send(401, errorBody('unauthorized', 'missing credential'));
        try {
          const decision = await options.authorizer({
            type: 'TOKEN',
            authorizationToken: authorization,
            methodArn: `${LOCAL_ARN}/${method}${url.pathname}`,
          });
          Object.assign(authorizer, decision.context ?? {}, { principalId: decision.principalId });
        } catch (error) {
          // As API Gateway: the authorizer's "Unauthorized" is a 401; any other failure is AUTHORIZER_FAILURE (503 here and in the stack).
          if ((error as Error).message === 'Unauthorized')
            return send(401, errorBody('unauthorized', 'missing or invalid credential'));
          return send(503, errorBody('dependency_unavailable', 'the credential could not be checked; retry'));
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
