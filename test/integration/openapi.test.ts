import fc from 'fast-check';
import { z as zod, type z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../lambdas/core/openapi/components.js';
import { openApiDocument, type OpenApiDocument } from '../../lambdas/core/openapi/document.js';
import { PATH_EXAMPLES } from '../../lambdas/core/openapi/examples.js';
import { ErrorBodySchema } from '../../lambdas/core/openapi/response-schemas.js';
import { ROUTE_DOCS } from '../../lambdas/core/openapi/route-docs.js';
import { ROUTES, type RouteId } from '../../lambdas/core/routes.js';
import { arbitraryFromSchema, mutate } from '../support/schema-arbitrary.js';
import { startTestStack, type ApiResponse, type TestStack } from '../support/harness.js';

/**
 * The document against local mode: every documented example gets its documented status and an answer of
 * the documented shape; then requests generated from the document's own schemas (valid and mutated) never
 * get a 5xx, and every 4xx has the contract's error body.
 */
let stack: TestStack;
let doc: OpenApiDocument;
/** The integrator token and its id, from the createToken example (replacing the document's placeholders). */
const live = { token: '', tokenId: '' };

beforeAll(async () => {
  stack = await startTestStack({ workerPoolSize: 1 });
});
afterAll(async () => {
  await stack?.stop();
});

/** Examples run in this order: the store and the token first, the destructive ones last. */
const ORDER: RouteId[] = [
  'putStore',
  'createToken',
  'getStore',
  'patchStore',
  'submitTask',
  'submitBatch',
  'taskStatus',
  'redriveDeadLetters',
  'listTokens',
  'backfillUsageKey',
  'backfillUsageKeys',
  'listBacklog',
  'storeMeasures',
  'putStoreCampaign',
  'listStoreCampaigns',
  'putTenantCampaign',
  'listTenantCampaigns',
  'deleteStoreCampaign',
  'deleteTenantCampaign',
  'rotateToken',
  'revokeToken',
  'purgeStoreQueue',
];

const routeOf = (id: RouteId) => ROUTES.find((r) => r.id === id)!;
const pathFor = (resource: string, params: Record<string, string>): string =>
  resource.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));

const call = (id: RouteId, params: Record<string, string>, body?: unknown): Promise<ApiResponse> => {
  const route = routeOf(id);
  const token = route.auth === 'tenant' ? live.token : stack.stack.adminToken;
  return stack.request(route.method, pathFor(route.resource, params), {
    token,
    ...(body === undefined ? {} : { body }),
  });
};

const responseSchema = (id: RouteId, status: number): z.ZodType => {
  if (status >= 400) return ErrorBodySchema;
  const response = ROUTE_DOCS[id].response;
  return response ? COMPONENTS[response.schema] : zod.undefined();
};

describe('the documented examples against local mode', () => {
  it('serves the document at GET /openapi.json without a credential', async () => {
    const res = await stack.request('GET', '/openapi.json');
    expect(res).toEqual({ status: 200, body: openApiDocument() });
    doc = res.body as unknown as OpenApiDocument;
  });

  it('orders every route', () => {
    expect([...ORDER].sort()).toEqual(ROUTES.map((r) => r.id).sort());
  });

  it('answers every example with its documented status and shape', async () => {
    const seen: { example: string; status: number; expected: number; shapeOk: boolean }[] = [];
    for (const id of ORDER) {
      const routeDoc = ROUTE_DOCS[id];
      const params = { ...PATH_EXAMPLES, tokenId: live.tokenId || PATH_EXAMPLES.tokenId };
      const examples = routeDoc.body
        ? Object.entries(routeDoc.body.examples).map(([name, e]) => ({ name, ...e }))
        : [{ name: 'call', value: undefined, status: routeDoc.success[0]!.status }];
      for (const example of examples) {
        const res = await call(id, params, example.value);
        const shapeOk = responseSchema(id, res.status).safeParse(res.body).success;
        seen.push({
          example: `${id}.${example.name}`,
          status: res.status,
          expected: example.status,
          shapeOk,
        });
        if (id === 'createToken' && res.status === 201) {
          const created = res.body as { token: string; tokenId: string };
          Object.assign(live, { token: created.token, tokenId: created.tokenId });
        }
      }
    }
    expect(seen.filter((s) => s.status !== s.expected || !s.shapeOk)).toEqual([]);
    expect(seen.length).toBeGreaterThanOrEqual(ORDER.length);
  });
});

interface Generated {
  id: RouteId;
  params: Record<string, string>;
  body?: unknown;
  raw?: string;
  query?: string;
}

const FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
/** Requests per route with a body, and for the others. */
const PER_BODY_ROUTE = 300;
const PER_OTHER_ROUTE = 40;

describe('requests generated from the document (valid and mutated)', () => {
  it(`never answers 5xx, and every 4xx is the contract error (seed ${FUZZ_SEED})`, async () => {
    const schemas = doc.components.schemas;
    live.token = await stack.tokenFor(PATH_EXAMPLES.tenantId);
    const storeIds = fc.constantFrom(
      PATH_EXAMPLES.storeId,
      'fuzz-other',
      'no-such-store',
      'bad store',
      'a'.repeat(60),
    );
    // Not '.' or '..': fetch would resolve them away and reach another route.
    const segment = (arb: fc.Arbitrary<string>) => arb.filter((s) => s !== '.' && s !== '..');
    const paramsArb = fc.record({
      storeId: storeIds,
      tenantId: fc.constantFrom(PATH_EXAMPLES.tenantId, 'other-tenant', 'bad tenant!'),
      eventId: segment(
        fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/), fc.string({ minLength: 1, maxLength: 10 })),
      ),
      tokenId: segment(
        fc.oneof(fc.stringMatching(/^[0-9a-f]{12}$/), fc.string({ minLength: 1, maxLength: 14 })),
      ),
      campaignId: segment(
        fc.oneof(
          fc.constantFrom(PATH_EXAMPLES.campaignId, 'sale-1'),
          fc.string({ minLength: 1, maxLength: 70 }),
        ),
      ),
    });
    const requests: Generated[] = [];
    for (const route of ROUTES) {
      const routeDoc = ROUTE_DOCS[route.id];
      if (routeDoc.body) {
        const valid = arbitraryFromSchema({ $ref: `#/components/schemas/${routeDoc.body.schema}` }, schemas);
        const body = fc.oneof(
          { weight: 3, arbitrary: valid.map((b) => ({ body: b })) },
          { weight: 3, arbitrary: valid.chain(mutate).map((b) => ({ body: b })) },
          { weight: 1, arbitrary: valid.map((b) => ({ raw: JSON.stringify(b).slice(0, -1) })) },
        );
        const samples = fc.sample(fc.tuple(paramsArb, body), { numRuns: PER_BODY_ROUTE, seed: FUZZ_SEED });
        for (const [params, b] of samples) requests.push({ id: route.id, params, ...b });
      } else {
        const query = fc.oneof(
          fc.constant(''),
          fc.constantFrom('?limit=5', '?limit=0', '?limit=x', '?cursor=abc', '?cursor=', '?other=1'),
        );
        const samples = fc.sample(fc.tuple(paramsArb, query), { numRuns: PER_OTHER_ROUTE, seed: FUZZ_SEED });
        for (const [params, q] of samples) requests.push({ id: route.id, params, query: q });
      }
    }
    const failures: unknown[] = [];
    let sent = 0;
    const byStatus = new Map<number, number>();
    const send = async (r: Generated): Promise<void> => {
      const route = routeOf(r.id);
      const res = await stack.request(route.method, pathFor(route.resource, r.params) + (r.query ?? ''), {
        token: route.auth === 'tenant' ? live.token : stack.stack.adminToken,
        ...(r.raw !== undefined ? { rawBody: r.raw } : r.body === undefined ? {} : { body: r.body }),
      });
      sent++;
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
      const documented = [...ROUTE_DOCS[r.id].success.map((s) => s.status), ...ROUTE_DOCS[r.id].errors];
      const shapeOk = responseSchema(r.id, res.status).safeParse(res.body).success;
      if (res.status >= 500 || !documented.includes(res.status) || !shapeOk) {
        failures.push({ request: r, status: res.status, body: res.body });
      }
    };
    // A few at a time: concurrent writes to the same store are part of what is exercised.
    for (let i = 0; i < requests.length; i += 8) await Promise.all(requests.slice(i, i + 8).map(send));
    expect(failures.slice(0, 5)).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(2_000);
    // The valid share gets through too (the store and tenant pools include the real ones).
    const accepted = [...byStatus].filter(([status]) => status < 300).reduce((n, [, c]) => n + c, 0);
    console.info(`openapi fuzz: ${sent} requests, by status ${JSON.stringify(Object.fromEntries(byStatus))}`);
    expect(accepted).toBeGreaterThan(100);
  });
});
