import type { z } from 'zod';
import { CampaignIdSchema } from '../campaigns.js';
import { StoreIdParam, TenantIdSchema } from '../http.js';
import { EventIdParam } from '../ingest.js';
import { ROUTES, type RouteId, type RouteSpec } from '../routes.js';
import { TokenId } from '../tenant-tokens.js';
import { componentRef, namedSchemas } from './components.js';
import { ERROR_DESCRIPTIONS, ERROR_EXAMPLES, PATH_EXAMPLES } from './examples.js';
import { toJsonSchema, toJsonSchemas, type JsonSchema } from './json-schema.js';
import { ROUTE_DOCS, type RouteDoc } from './route-docs.js';
import { SECURITY_SCHEMES, securityFor } from './security.js';

/** Where local mode and the stack serve the document (unauthenticated). */
export const OPENAPI_PATH = '/openapi.json';

/** The schema each path parameter is validated with by the handlers. */
const PATH_PARAMS: Record<keyof typeof PATH_EXAMPLES, z.ZodType> = {
  storeId: StoreIdParam,
  tenantId: TenantIdSchema,
  eventId: EventIdParam,
  tokenId: TokenId,
  campaignId: CampaignIdSchema,
};

const isPathParam = (name: string): name is keyof typeof PATH_EXAMPLES => name in PATH_PARAMS;

const pathParameters = (resource: string) =>
  [...resource.matchAll(/\{(\w+)\}/g)].map(([, name = '']) => {
    if (!isPathParam(name)) throw new Error(`no schema for path parameter ${name} of ${resource}`);
    return {
      name,
      in: 'path',
      required: true,
      schema: toJsonSchema(PATH_PARAMS[name]),
      example: PATH_EXAMPLES[name],
    };
  });

const queryParameters = (query: z.ZodObject | undefined) =>
  Object.entries(query?.shape ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema: toJsonSchema(schema as z.ZodType),
  }));

const errorResponseName = (status: number): string => `Error${status}`;

const requestBody = (doc: RouteDoc) =>
  doc.body && {
    required: doc.body.required,
    content: {
      'application/json': {
        schema: { $ref: componentRef(doc.body.schema) },
        // x-status: what this example is answered with (the documentation test sends each one).
        examples: Object.fromEntries(
          Object.entries(doc.body.examples).map(([name, { summary, value, status }]) => [
            name,
            { summary, value, 'x-status': status },
          ]),
        ),
      },
    },
  };

const operation = (route: RouteSpec & { id: RouteId }) => {
  const doc = ROUTE_DOCS[route.id];
  const responses: Record<string, unknown> = {};
  for (const { status, description } of doc.success) {
    responses[String(status)] = {
      description,
      ...(doc.response
        ? {
            content: {
              'application/json': {
                schema: { $ref: componentRef(doc.response.schema) },
                example: doc.response.example,
              },
            },
          }
        : {}),
    };
  }
  for (const status of doc.errors)
    responses[String(status)] = { $ref: `#/components/responses/${errorResponseName(status)}` };
  const body = requestBody(doc);
  return {
    operationId: route.id,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: securityFor(route.auth),
    parameters: [...pathParameters(route.resource), ...queryParameters(doc.query)],
    ...(body ? { requestBody: body } : {}),
    responses,
  };
};

const errorResponses = (): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [status, example] of Object.entries(ERROR_EXAMPLES)) {
    out[errorResponseName(Number(status))] = {
      description: ERROR_DESCRIPTIONS[Number(status)] ?? 'error',
      content: {
        'application/json': { schema: { $ref: componentRef('Error') }, example: { error: example } },
      },
    };
  }
  return out;
};

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Record<string, unknown>;
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * The OpenAPI 3.1 document of every route in ROUTES, generated from the zod schemas the handlers validate
 * with (request bodies, path and query parameters) and those of their answers (response-schemas.ts).
 */
export const buildOpenApiDocument = (): OpenApiDocument => {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of ROUTES as readonly (RouteSpec & { id: RouteId })[]) {
    paths[route.resource] = { ...paths[route.resource], [route.method.toLowerCase()]: operation(route) };
  }
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'openApiDocument',
      tags: ['Meta'],
      summary: 'This document',
      security: [],
      responses: {
        '200': {
          description: 'the OpenAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Attention Queue API',
      version: '1',
      description:
        'Per-store task queues without per-store consumers. Integrators submit tasks with a tenant token; ' +
        'operators manage stores and tokens through the admin routes (IAM on AWS, the admin bearer token printed by npm start in local mode). ' +
        'Every non-2xx answer has the body {"error":{"code","message","details"?}}.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [
      { url: 'http://localhost:3000', description: 'local mode (npm start)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/prod',
        description: 'a deployed stack (its ApiUrl output)',
        variables: { apiId: { default: 'abcdef1234' }, region: { default: 'us-east-1' } },
      },
    ],
    tags: [
      { name: 'Integrator', description: 'Submitting tasks and polling their status (tenant token)' },
      { name: 'Stores', description: 'Store configuration (admin)' },
      { name: 'Tokens', description: 'Integrator credentials (admin)' },
      { name: 'Operations', description: 'Backlog, redrive, purge and measures (admin)' },
      {
        name: 'Campaigns',
        description: 'Campaign windows: a plan or overrides between two instants (admin)',
      },
      { name: 'Meta', description: 'This document' },
    ],
    paths,
    components: {
      schemas: toJsonSchemas(namedSchemas(), componentRef),
      responses: errorResponses(),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
};

let cached: OpenApiDocument | undefined;
/** Built once per process: the schemas do not change while it runs. */
export const openApiDocument = (): OpenApiDocument => (cached ??= buildOpenApiDocument());
