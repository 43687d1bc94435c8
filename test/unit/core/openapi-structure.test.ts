import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINT } from '../../../bin/aq/endpoint.js';
import { BatchDocSchema, COMPONENTS } from '../../../lambdas/core/openapi/components.js';
import {
  buildOpenApiDocument,
  OPENAPI_PATH,
  openApiDocument,
} from '../../../lambdas/core/openapi/document.js';
import { TASK_EXAMPLES } from '../../../lambdas/core/openapi/examples.js';
import { gatewayRequestModels } from '../../../lambdas/core/openapi/gateway-models.js';
import { securityFor } from '../../../lambdas/core/openapi/security.js';
import { TASK_VARIANTS, variantName } from '../../../lambdas/core/openapi/task-variants.js';
import { ROUTES } from '../../../lambdas/core/routes.js';
import { MAX_BATCH_TASKS, TASK_TYPES } from '../../../lambdas/core/task-schemas.js';
import { componentValidator } from '../../support/document-schema.js';

/** What tools built on the document rely on: names, tags, descriptions, servers, and which objects are closed. */
const doc = buildOpenApiDocument();
const schemas = doc.components.schemas;
type Operation = {
  operationId: string;
  tags: string[];
  summary: string;
  requestBody?: { content: { 'application/json': { examples: Record<string, { summary: string }> } } };
  responses: Record<string, { description?: string }>;
};
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method, op: op as Operation })),
);

describe('operations', () => {
  it('are named by their route ids, one each, plus the document itself', () => {
    const ids = operations.map((o) => o.op.operationId);
    expect([...ids].sort()).toEqual([...ROUTES.map((r) => r.id), 'openApiDocument'].sort());
    for (const route of ROUTES) {
      expect(operations.find((o) => o.op.operationId === route.id)).toMatchObject({
        path: route.resource,
        method: route.method.toLowerCase(),
      });
    }
  });

  it('each document at least one success status, all 2xx', () => {
    for (const { op } of operations) {
      const success = Object.keys(op.responses)
        .map(Number)
        .filter((s) => s < 300);
      expect(success.length).toBeGreaterThan(0);
      expect(success.every((s) => s >= 200)).toBe(true);
    }
  });

  it('serve the document at GET /openapi.json (contract)', () => {
    expect(OPENAPI_PATH).toBe('/openapi.json');
    expect(doc.paths['/openapi.json']?.['get']).toMatchObject({ operationId: 'openApiDocument' });
  });

  it('each carry one declared tag, and every declared tag is used', () => {
    const declared = (doc['tags'] as { name: string; description: string }[]).map((t) => t.name);
    for (const { op } of operations)
      expect(op.tags.length === 1 && declared.includes(op.tags[0]!)).toBe(true);
    expect(new Set(operations.map((o) => o.op.tags[0]))).toEqual(new Set(declared));
  });

  it('have a summary, each response a description, each request example a summary', () => {
    for (const { op } of operations) {
      expect(op.summary.length).toBeGreaterThan(0);
      for (const r of Object.values(op.responses))
        if (!('$ref' in r)) expect(r.description?.length).toBeGreaterThan(0);
      for (const e of Object.values(op.requestBody?.content['application/json'].examples ?? {}))
        expect(e.summary.length).toBeGreaterThan(0);
    }
    const errors = Object.values(doc.components['responses'] as Record<string, { description: string }>);
    for (const r of errors) expect(r.description.length).toBeGreaterThan(0);
    for (const t of doc['tags'] as { description: string }[]) expect(t.description.length).toBeGreaterThan(0);
  });
});

describe('servers', () => {
  const servers = doc['servers'] as { url: string; variables?: Record<string, { default: string }> }[];

  it("list local mode at the CLI's default endpoint", () => {
    expect(servers.map((s) => s.url)).toContain(DEFAULT_ENDPOINT);
  });

  it('give every URL variable a default (a deployed stack: https, execute-api)', () => {
    const deployed = servers.find((s) => s.url.startsWith('https://'));
    expect(deployed?.url).toMatch(/^https:\/\/\{apiId\}\.execute-api\.\{region\}\.amazonaws\.com\/\w+$/);
    for (const s of servers) {
      const names = [...s.url.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      for (const name of names) expect(s.variables?.[name]?.default.length).toBeGreaterThan(0);
    }
  });
});

describe('components', () => {
  it('name each task type\'s variant in PascalCase: "price.update" is PriceUpdateTask', () => {
    expect(variantName('price.update')).toBe('PriceUpdateTask');
    expect(variantName('orders.sync')).toBe('OrdersSyncTask');
    expect(TASK_VARIANTS.map((v) => v.type)).toEqual(TASK_TYPES);
    for (const v of TASK_VARIANTS)
      expect(schemas[v.name]?.['properties']).toMatchObject({ type: { const: v.type } });
  });

  it('describe a task as exactly one of the variants', () => {
    const choices = (schemas['Task']?.['oneOf'] ?? schemas['Task']?.['anyOf']) as { $ref: string }[];
    expect(choices.map((c) => c.$ref).sort()).toEqual(
      TASK_VARIANTS.map((v) => `#/components/schemas/${v.name}`).sort(),
    );
  });

  it('bound the batch as the handler does (1 to 100 tasks)', () => {
    const batch = componentValidator('BatchRequest', schemas);
    const tasks = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ ...TASK_EXAMPLES.inventory, eventId: `e-${i}` }));
    expect(batch.safeParse({ tasks: tasks(MAX_BATCH_TASKS) }).success).toBe(true);
    expect(batch.safeParse({ tasks: tasks(MAX_BATCH_TASKS + 1) }).success).toBe(false);
    expect(batch.safeParse({ tasks: [] }).success).toBe(false);
    expect(BatchDocSchema.safeParse({ tasks: tasks(1) }).success).toBe(true);
  });

  // The contract is extended, never broken: a client generated from the document must not refuse a field
  // added to an answer, while a request body is checked strictly by its handler and says so.
  it('leave answers open to added fields and close request bodies', () => {
    const closed = (name: string) => schemas[name]?.['additionalProperties'] === false;
    const requests = [
      'PutStoreRequest',
      'PatchStoreRequest',
      'PurgeRequest',
      'RotateTokenRequest',
      'PutCampaignRequest',
    ];
    const answers = Object.keys(COMPONENTS).filter(
      (n) => !requests.includes(n) && n !== 'Task' && n !== 'BatchRequest',
    );
    expect(requests.filter((n) => !closed(n))).toEqual([]);
    expect(answers.filter(closed)).toEqual([]);
    for (const v of TASK_VARIANTS) expect(closed(v.name)).toBe(true);
  });

  it('carry no $schema or $id of their own (OpenAPI 3.1 sets the dialect; an $id would re-base references)', () => {
    for (const schema of Object.values(schemas)) {
      expect(schema).not.toHaveProperty('$schema');
      expect(schema).not.toHaveProperty('$id');
    }
  });
});

describe('openApiDocument', () => {
  it('is built once per process', () => {
    expect(openApiDocument()).toBe(openApiDocument());
    expect(openApiDocument()).toEqual(doc);
  });
});

describe('security schemes', () => {
  it('are the ones the routes authenticate with: SigV4 in the Authorization header, bearer tokens', () => {
    expect(doc.components['securitySchemes']).toMatchObject({
      sigv4: { type: 'apiKey', in: 'header', name: 'Authorization' },
      tenantBearer: { type: 'http', scheme: 'bearer' },
      localAdminBearer: { type: 'http', scheme: 'bearer' },
    });
  });

  it('a route without authentication requires none', () => {
    expect(securityFor('none')).toEqual([]);
  });
});

describe('gateway models', () => {
  it('have names API Gateway takes (alphanumeric), one per integrator route with a body', () => {
    const models = Object.entries(gatewayRequestModels());
    expect(models.map(([id]) => id).sort()).toEqual(['submitBatch', 'submitTask']);
    for (const [, model] of models) expect(model.name).toMatch(/^[A-Za-z0-9]+$/);
    expect(new Set(models.map(([, m]) => m.name)).size).toBe(models.length);
  });
});
