import SwaggerParser from '@apidevtools/swagger-parser';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { PutStoreBody } from '../../../lambdas/core/admin.js';
import { buildOpenApiDocument, OPENAPI_PATH } from '../../../lambdas/core/openapi/document.js';
import { ROUTE_DOCS } from '../../../lambdas/core/openapi/route-docs.js';
import { PLAN_NAMES } from '../../../lambdas/core/plans.js';
import { ROUTES } from '../../../lambdas/core/routes.js';
import { PayloadSchemas } from '../../../lambdas/core/task-schemas.js';

const doc = buildOpenApiDocument();
type Operation = {
  security: unknown[];
  requestBody?: {
    content: Record<string, { examples: Record<string, { value: unknown; 'x-status': number }> }>;
  };
  responses: Record<string, unknown>;
};
const op = (path: string, method: string): Operation => doc.paths[path]?.[method] as Operation;

describe('the OpenAPI document', () => {
  // 0.7 s alone, over 5 s on a loaded machine: a generous timeout, since this checks validity, not speed.
  it('is a valid OpenAPI 3.1 document (swagger-parser)', { timeout: 30_000 }, async () => {
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('declares OpenAPI 3.1.0', () => {
    expect(doc.openapi).toBe('3.1.0');
  });

  it.each(ROUTES.map((r) => [r.id, r.method, r.resource] as const))(
    'documents %s (%s %s)',
    (_id, method, resource) => {
      expect(op(resource, method.toLowerCase())).toBeDefined();
    },
  );

  it('documents the document itself, unauthenticated', () => {
    expect(op(OPENAPI_PATH, 'get').security).toEqual([]);
  });

  it.each(ROUTES.filter((r) => r.auth === 'iam').map((r) => [r.id, r] as const))(
    '%s takes SigV4 (or the local admin bearer)',
    (_id, route) => {
      expect(op(route.resource, route.method.toLowerCase()).security).toEqual([
        { sigv4: [] },
        { localAdminBearer: [] },
      ]);
    },
  );

  it.each(ROUTES.filter((r) => r.auth === 'tenant').map((r) => [r.id, r] as const))(
    '%s takes the tenant bearer token',
    (_id, route) => {
      expect(op(route.resource, route.method.toLowerCase()).security).toEqual([{ tenantBearer: [] }]);
    },
  );

  it.each(ROUTES.map((r) => [r.id, r] as const))('%s documents each of its error statuses', (id, route) => {
    const statuses = Object.keys(op(route.resource, route.method.toLowerCase()).responses);
    expect(statuses).toEqual(expect.arrayContaining(ROUTE_DOCS[id].errors.map(String)));
  });

  it('names the SigV4 scheme as API Gateway does', () => {
    expect(doc.components['securitySchemes']).toMatchObject({
      sigv4: { type: 'apiKey', 'x-amazon-apigateway-authtype': 'awsSigv4' },
    });
  });

  it('defines the contract error shape', () => {
    expect(doc.components.schemas['Error']).toMatchObject({
      required: ['error'],
      properties: { error: { required: ['code', 'message'] } },
    });
  });

  // One source of truth: the document is generated from the handlers' schemas, so it follows them.
  it("takes the store body's plans from the handler's schema", () => {
    expect(doc.components.schemas['PutStoreRequest']).toEqual(
      expect.objectContaining({
        properties: expect.objectContaining({ plan: { type: 'string', enum: [...PLAN_NAMES] } }),
      }),
    );
  });

  it('regenerates from PutStoreBody (a changed schema changes the document)', () => {
    const { $schema: _s, ...expected } = z.toJSONSchema(PutStoreBody, { io: 'input' });
    expect(doc.components.schemas['PutStoreRequest']).toEqual(expected);
  });

  it.each(Object.keys(PayloadSchemas) as (keyof typeof PayloadSchemas)[])(
    "documents the %s payload from the ingest's payload schema",
    (type) => {
      const { $schema: _s, ...expected } = z.toJSONSchema(PayloadSchemas[type], { io: 'input' });
      const variant = Object.values(doc.components.schemas).find(
        (s) => (s['properties'] as Record<string, { const?: string }> | undefined)?.['type']?.const === type,
      );
      expect((variant?.['properties'] as Record<string, unknown>)['payload']).toEqual(expected);
    },
  );

  it.each(ROUTES.filter((r) => ROUTE_DOCS[r.id].body).map((r) => [r.id, r] as const))(
    '%s has request examples, each with the status it gets',
    (_id, route) => {
      const examples = op(route.resource, route.method.toLowerCase()).requestBody?.content['application/json']
        ?.examples;
      expect(Object.values(examples ?? {}).every((e) => Number.isInteger(e['x-status']))).toBe(true);
    },
  );
});
