import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/harness.js';

/**
 * Property: whatever arrives over HTTP (bodies, headers, paths, tokens; valid and hostile), local mode
 * answers 2xx or 4xx with the contract's JSON, never 5xx, and the store queues then hold exactly the
 * tasks it said it accepted. Workers are stopped for the run so nothing drains.
 */
/** 160 runs of 40: 6,400 requests in `npm test` (CI's 10-minute budget); `FUZZ_RUNS=250` sends 10,000. */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 160);
const REQUESTS_PER_RUN = 40;
const WELL_FORMED_PER_RUN = 12;
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);

const TYPES = [
  'orders.sync',
  'inventory.update',
  'price.update',
  'catalog.update',
  'shipping.notify',
  'postsale.event',
];
const eventIdArb = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 140 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'a'.repeat(128), 'a'.repeat(129), 'has space', 'ü', '../x', '%2F'),
  },
);
const skuArb = fc.oneof(fc.stringMatching(/^[A-Z0-9-]{1,12}$/), fc.string({ maxLength: 140 }));
const payloadArb = fc.oneof(
  fc.record({ sku: skuArb, quantity: fc.oneof(fc.nat(), fc.integer(), fc.double()) }),
  fc.record({
    sku: skuArb,
    amount: fc.oneof(fc.double({ min: 0.01, max: 1e6, noNaN: true }), fc.integer({ min: -5, max: 5 })),
    currency: fc.oneof(fc.constantFrom('BRL', 'USD', 'EUR'), fc.string({ maxLength: 4 })),
  }),
  fc.record({
    orderId: fc.string({ minLength: 1, maxLength: 20 }),
    carrier: fc.string(),
    trackingCode: fc.string(),
  }),
  fc.record({
    orderId: fc.string({ minLength: 1, maxLength: 20 }),
    kind: fc.constantFrom('return', 'refund', 'nope'),
    details: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })),
  }),
  fc.record({ orderId: fc.string({ minLength: 1, maxLength: 20 }) }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
  fc.jsonValue({ maxDepth: 2 }),
);
const taskArb = fc
  .record(
    {
      eventId: eventIdArb,
      type: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...TYPES) }, fc.string({ maxLength: 20 })),
      payload: payloadArb,
      entityId: fc.string({ maxLength: 300 }),
      version: fc.oneof(fc.nat(), fc.integer(), fc.double()),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  )
  .map((t) => t as Record<string, unknown>);
/** A valid inventory.update, so a good share of the traffic is accepted. */
const validTaskArb = fc.record({
  eventId: fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/),
  type: fc.constant('inventory.update'),
  payload: fc.record({ sku: fc.stringMatching(/^[A-Z0-9]{1,8}$/), quantity: fc.nat(1000) }),
});
const anyTaskArb = fc.oneof({ weight: 2, arbitrary: validTaskArb }, { weight: 2, arbitrary: taskArb });

const bodyArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: anyTaskArb.map((t) => JSON.stringify(t)) },
  {
    weight: 4,
    arbitrary: fc
      .array(anyTaskArb, { maxLength: 12 })
      .chain((tasks) =>
        fc.oneof(
          fc.constant(tasks),
          // duplicates inside one batch
          fc.constant([...tasks, ...tasks.slice(0, 2)]),
        ),
      )
      .map((tasks) => JSON.stringify({ tasks })),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      JSON.stringify({ tasks: Array.from({ length: 101 }, (_, i) => ({ eventId: `e${i}` })) }),
    ),
  },
  { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '{',
      '[]',
      'null',
      '7',
      '"x"',
      '{"tasks":null}',
      '{"__proto__":{"a":1}}',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 60_000, max: 1_200_000 })
      .map((n) => JSON.stringify({ eventId: 'big', pad: 'x'.repeat(n) })),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** Header values fetch can send: visible ASCII. */
const headerValue = fc.stringMatching(/^[\x21-\x7e]{0,60}$/);

interface Request {
  method: string;
  path: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: string | undefined;
  extraHeader: [string, string] | null;
}

describe('HTTP layer under generated traffic (fast-check)', () => {
  let t: TestStack;
  let tokens: Record<string, string>;
  const stores = ['acme-a', 'acme-b', 'globex-a', 'acme-closed'] as const;

  beforeAll(async () => {
    t = await startTestStack({ reconcileIntervalMs: 3_600_000 });
    await t.stack.stopWorkers();
    tokens = { acme: await t.tokenFor('acme'), globex: await t.tokenFor('globex') };
    const revoked = await t.admin<{ token: string; tokenId: string }>('POST', '/admin/tenants/acme/tokens');
    await t.admin('POST', `/admin/tenants/acme/tokens/${revoked.body.tokenId}/revoke`);
    tokens['revoked'] = revoked.body.token;
    await t.createStore('acme-a', { tenantId: 'acme', marketplace: 'amazon', plan: 'pro' });
    await t.createStore('acme-b', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    await t.createStore('globex-a', { tenantId: 'globex', marketplace: 'amazon', plan: 'basic' });
    await t.createStore('acme-closed', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'disabled',
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it(`answers ${RUNS * REQUESTS_PER_RUN} generated requests with 2xx/4xx only, and enqueues exactly what it accepted`, async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);

    const storeArb = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...stores) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('nope', 'a'.repeat(49), '%ZZ', '%2e%2e', 'acme-a%2F..', 'ACME-A'),
      },
      { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9%._~-]{1,20}$/) },
    );
    const pathArb = fc.oneof(
      { weight: 5, arbitrary: storeArb.map((s) => `/v1/stores/${s}/tasks`) },
      { weight: 4, arbitrary: storeArb.map((s) => `/v1/stores/${s}/tasks/batch`) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(storeArb, eventIdArb)
          .map(([s, e]) => `/v1/stores/${s}/tasks/${encodeURIComponent(e) || 'x'}`),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '/admin/stores/acme-a',
          '/admin/tenants/acme/tokens',
          '/admin/tenants/acme/tokens/0123456789ab/revoke',
          '/admin/stores/acme-a/dead-letters/redrive',
        ),
      },
      { weight: 1, arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
    );
    const authArb = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('acme', 'globex').map((k) => `Bearer ${tokens[k]}`) },
      { weight: 1, arbitrary: fc.constant(`Bearer ${tokens['revoked']}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          `bearer ${tokens['acme']}`,
          `Basic ${tokens['acme']}`,
          'Bearer',
          'Bearer aqt_x',
        ),
      },
      { weight: 1, arbitrary: headerValue.map((v) => `Bearer ${v}`) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
    const contentTypeArb = fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          undefined,
          'application/json; charset=utf-8',
          'application/vnd.api+json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
        ),
      },
      { weight: 1, arbitrary: headerValue },
    );
    const requestArb = fc.record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constant('POST') },
        fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'),
      ),
      path: pathArb,
      auth: authArb,
      contentType: contentTypeArb,
      body: bodyArb,
      extraHeader: fc.option(fc.tuple(fc.stringMatching(/^x-[a-z]{1,10}$/), headerValue)),
    });

    /** Well-formed traffic from the owning tenant, so a good share is accepted and counted. */
    const wellFormedArb = fc
      .record({
        owner: fc.constantFrom<[string, string]>(
          ['acme', 'acme-a'],
          ['acme', 'acme-b'],
          ['globex', 'globex-a'],
        ),
        batch: fc.boolean(),
        tasks: fc.array(anyTaskArb, { minLength: 1, maxLength: 20 }),
      })
      .map(({ owner: [tenant, storeId], batch, tasks }) => ({
        method: 'POST',
        path: `/v1/stores/${storeId}/tasks${batch ? '/batch' : ''}`,
        auth: `Bearer ${tokens[tenant]}`,
        contentType: 'application/json',
        body: JSON.stringify(batch ? { tasks } : tasks[0]),
        extraHeader: null,
      }));
    // A fixed share of each run is well-formed .
    const trafficArb = fc
      .tuple(
        fc.array(wellFormedArb, { minLength: WELL_FORMED_PER_RUN, maxLength: WELL_FORMED_PER_RUN }),
        fc.array(requestArb, {
          minLength: REQUESTS_PER_RUN - WELL_FORMED_PER_RUN,
          maxLength: REQUESTS_PER_RUN - WELL_FORMED_PER_RUN,
        }),
      )
      .chain(([good, hostile]) =>
        fc.shuffledSubarray([...good, ...hostile], { minLength: REQUESTS_PER_RUN }),
      );

    const accepted = new Map<string, number>(stores.map((s) => [s, 0]));
    const statuses = new Map<number, number>();
    let sent = 0;

    const send = async (r: Request) => {
      const headers: Record<string, string> = {};
      if (r.auth !== undefined) headers['authorization'] = r.auth;
      if (r.contentType !== undefined) headers['content-type'] = r.contentType;
      if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1];
      const withBody = r.method !== 'GET' && r.body !== undefined;
      const res = await fetch(`${t.stack.url}${r.path}`, {
        method: r.method,
        headers,
        ...(withBody ? { body: r.body } : {}),
      });
      const text = await res.text();
      sent++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      return { status: res.status, text };
    };

    await fc.assert(
      fc.asyncProperty(trafficArb, async (batch) => {
        const results = await Promise.all(batch.map((r) => send(r)));
        results.forEach(({ status, text }, i) => {
          const r = batch[i]!;
          expect(status, `${r.method} ${r.path} → ${status} ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(
            200,
          );
          expect(status, `${r.method} ${r.path} → ${status} ${text.slice(0, 300)}`).toBeLessThan(500);
          const body = JSON.parse(text) as Record<string, unknown>;
          if (status >= 400) {
            expect(body).toEqual({
              error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
            });
          }
          if (status !== 202) return;
          const storeId = /^\/v1\/stores\/([^/]+)\/tasks/.exec(r.path)?.[1] ?? '';
          const count = r.path.endsWith('/batch') ? (body['accepted'] as unknown[]).length : 1;
          expect(accepted.has(storeId), `202 for ${r.path}`).toBe(true);
          accepted.set(storeId, (accepted.get(storeId) ?? 0) + count);
        });
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    process.off('unhandledRejection', onUnhandled);

    expect(sent).toBeGreaterThanOrEqual(RUNS * REQUESTS_PER_RUN);
    expect(unhandled).toEqual([]);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    const queued: Record<string, number> = {};
    for (const storeId of stores) queued[storeId] = await t.backlogOf(storeId);
    expect(queued).toEqual(Object.fromEntries(accepted));
    // The run must exercise both sides: plenty accepted, plenty refused.
    expect(queued['acme-a']! + queued['acme-b']! + queued['globex-a']!).toBeGreaterThan(2000);
    expect(queued['acme-closed']).toBe(0);
    console.info(`fuzz seed ${SEED}: statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
