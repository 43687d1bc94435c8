import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoTokenStore } from '../../lambdas/adapters/dynamo-token-store.js';
import { NO_USAGE_KEY_MESSAGE } from '../../lambdas/config/topology.js';
import { ROUTES } from '../../lambdas/core/routes.js';
import { hashToken, newToken, tokenIdOf } from '../../lambdas/core/tokens.js';
import { sleep, startTestStack, type TestStack } from '../support/harness.js';

/** Tenant isolation, the token lifecycle (with API Gateway's authorizer cache) and per-tenant throttling, in local mode. */
const task = (eventId: string) => ({
  eventId,
  type: 'inventory.update',
  payload: { sku: 'SKU-1', quantity: 1 },
});

const INTEGRATOR_ROUTES = ROUTES.filter((r) => r.auth === 'tenant');
const ADMIN_ROUTES = ROUTES.filter((r) => r.auth === 'iam');

const pathOf = (resource: string, params: Record<string, string>): string =>
  resource.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] ?? 'x');

const bodyFor = (routeId: string, eventId: string): unknown =>
  routeId === 'submitBatch'
    ? { tasks: [task(eventId)] }
    : routeId === 'submitTask'
      ? task(eventId)
      : undefined;

describe('tenant isolation and credentials', () => {
  let t: TestStack;
  let acme: string;
  let globex: string;

  beforeAll(async () => {
    // A short authorizer cache so revocation can be observed; production's is INTEGRATOR_API's 60 s.
    t = await startTestStack({ authorizerCacheSeconds: 1 });
    acme = await t.tokenFor('acme');
    globex = await t.tokenFor('globex');
    // Paused: tasks stay in the queue, so "nothing changed" is a queue count.
    await t.createStore('acme-shop', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    const seeded = await t.request('POST', '/v1/stores/acme-shop/tasks', {
      token: acme,
      body: task('seed-1'),
    });
    expect(seeded.status).toBe(202);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it.each(INTEGRATOR_ROUTES.map((r) => [r.id, r] as const))(
    "%s with another tenant's token → 403 forbidden, nothing enqueued",
    async (routeId, route) => {
      const before = await t.backlogOf('acme-shop');
      const body = bodyFor(routeId, 'foreign-1');
      const res = await t.request(
        route.method,
        pathOf(route.resource, { storeId: 'acme-shop', eventId: 'seed-1' }),
        {
          token: globex,
          ...(body === undefined ? {} : { body }),
        },
      );
      expect(res).toEqual({
        status: 403,
        body: { error: { code: 'forbidden', message: 'this credential does not own the store' } },
      });
      expect(await t.backlogOf('acme-shop')).toBe(before);
    },
  );

  it.each(INTEGRATOR_ROUTES.map((r) => [r.id, r] as const))(
    '%s on a store that does not exist answers exactly as on a foreign one',
    async (routeId, route) => {
      const body = bodyFor(routeId, 'ghost-1');
      const opts = { token: globex, ...(body === undefined ? {} : { body }) };
      const ghost = await t.request(
        route.method,
        pathOf(route.resource, { storeId: 'no-such-store', eventId: 'e' }),
        opts,
      );
      const foreign = await t.request(
        route.method,
        pathOf(route.resource, { storeId: 'acme-shop', eventId: 'e' }),
        opts,
      );
      expect(ghost).toEqual(foreign);
    },
  );

  it.each(ADMIN_ROUTES.map((r) => [r.id, r] as const))(
    '%s refuses an integrator token with 401 (admin routes take IAM / the local admin token only)',
    async (_id, route) => {
      const res = await t.request(
        route.method,
        pathOf(route.resource, { storeId: 'acme-shop', tenantId: 'acme', tokenId: '0123456789ab' }),
        { token: acme },
      );
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: { code: 'unauthorized' } });
    },
  );

  it('lists tokens by id and status, never the token or its hash', async () => {
    const token = await t.tokenFor('listed');
    const res = await t.admin<{ tenantId: string; tokens: { tokenId: string; status: string }[] }>(
      'GET',
      '/admin/tenants/listed/tokens',
    );
    expect(res.status).toBe(200);
    expect(res.body.tokens).toEqual([
      { tokenId: expect.stringMatching(/^[0-9a-f]{12}$/), status: 'active', createdAt: expect.any(String) },
    ]);
    const stored = await new DynamoTokenStore(
      t.stack.clients.doc,
      t.stack.resources.tables.tokens,
    ).listByTenant('listed');
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(JSON.stringify(res.body)).not.toContain(stored[0]?.tokenHash ?? '-');
  });

  it('a revoked token stops working within the authorizer cache time', async () => {
    await t.createStore('rev-shop', {
      tenantId: 'rev',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    const created = await t.admin<{ token: string; tokenId: string }>('POST', '/admin/tenants/rev/tokens');
    const { token, tokenId } = created.body;
    const status = () => t.request('GET', '/v1/stores/rev-shop/tasks/e-1', { token });
    expect((await status()).status).toBe(200); // now cached as Allow
    const revoked = await t.admin('POST', `/admin/tenants/rev/tokens/${tokenId}/revoke`);
    expect(revoked).toMatchObject({ status: 200, body: { tokenId, status: 'revoked' } });
    await sleep(1_100);
    expect(await status()).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
  });

  it('rotation: both tokens work during the overlap, only the new one after it', async () => {
    await t.createStore('rot-shop', {
      tenantId: 'rot',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    const first = await t.admin<{ token: string; tokenId: string }>('POST', '/admin/tenants/rot/tokens');
    const rotated = await t.admin<{ token: string; tokenId: string; replaced: { status: string } }>(
      'POST',
      `/admin/tenants/rot/tokens/${first.body.tokenId}/rotate`,
      { overlapSeconds: 2 },
    );
    expect(rotated.status).toBe(201);
    expect(rotated.body.replaced.status).toBe('expiring');
    const use = (token: string) => t.request('GET', '/v1/stores/rot-shop/tasks/e-1', { token });
    expect((await use(first.body.token)).status).toBe(200);
    expect((await use(rotated.body.token)).status).toBe(200);
    await sleep(3_200); // overlap (2 s) + the authorizer cache (1 s)
    expect((await use(first.body.token)).status).toBe(401);
    expect((await use(rotated.body.token)).status).toBe(200);
    const listed = await t.admin<{ tokens: { tokenId: string; status: string }[] }>(
      'GET',
      '/admin/tenants/rot/tokens',
    );
    expect(listed.body.tokens.map((x) => [x.tokenId, x.status])).toEqual(
      expect.arrayContaining([
        [first.body.tokenId, 'expired'],
        [rotated.body.tokenId, 'active'],
      ]),
    );
  });

  it('a token cut off by one rotation gets no time back from another sent with it (DynamoDB Local)', async () => {
    const first = await t.admin<{ token: string; tokenId: string }>('POST', '/admin/tenants/cut/tokens');
    const before = Date.now();
    const rotate = (overlapSeconds: number) =>
      t.admin('POST', `/admin/tenants/cut/tokens/${first.body.tokenId}/rotate`, { overlapSeconds });
    const answers = await Promise.all([rotate(0), rotate(3_600)]);
    const tokens = new DynamoTokenStore(t.stack.clients.doc, t.stack.resources.tables.tokens);
    const old = await tokens.get(hashToken(first.body.token));
    // Whichever landed second (or was refused because the first had ended the token), the end is the first's.
    expect(answers.map((a) => a.status)).toContain(201);
    expect(old?.expiresAt).toBeLessThanOrEqual(Date.now());
    expect(old?.expiresAt).toBeGreaterThanOrEqual(before);
    // And the store itself never moves an end later, whatever its caller read.
    await tokens.amend(hashToken(first.body.token), { expiresAt: Date.now() + 3_600_000 });
    expect((await tokens.get(hashToken(first.body.token)))?.expiresAt).toBe(old?.expiresAt);
  });
});

describe('per-tenant throttling', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ tenantThrottle: { ratePerSecond: 1, burst: 3 } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers 429 with Retry-After and the error JSON past the burst, for that tenant only', async () => {
    const noisy = await t.tokenFor('noisy');
    const quiet = await t.tokenFor('quiet');
    await t.createStore('noisy-shop', {
      tenantId: 'noisy',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    const call = (token: string) =>
      fetch(`${t.stack.url}/v1/stores/noisy-shop/tasks/e-1`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(noisy)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const throttled = await call(noisy);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await throttled.json()).toEqual({
      error: { code: 'throttled', message: 'too many requests for this tenant; retry later' },
    });
    // Another tenant is not slowed (its answer is its own 403, not a 429).
    expect((await call(quiet)).status).toBe(403);
  });

  it("draws every token of a tenant from one bucket (its usage key's), leaving other tenants alone", async () => {
    const first = await t.tokenFor('twin');
    const second = await t.tokenFor('twin');
    const solo = await t.tokenFor('solo');
    for (const [storeId, tenantId] of [
      ['twin-shop', 'twin'],
      ['solo-shop', 'solo'],
    ] as const) {
      await t.createStore(storeId, { tenantId, marketplace: 'amazon', plan: 'basic', status: 'paused' });
    }
    const call = (storeId: string, token: string) =>
      fetch(`${t.stack.url}/v1/stores/${storeId}/tasks/e-1`, {
        headers: { authorization: `Bearer ${token}` },
      });
    // Burst 3 across both tokens: a bucket per token would let all four through.
    const statuses: number[] = [];
    for (const token of [first, second, first]) statuses.push((await call('twin-shop', token)).status);
    const throttled = await call('twin-shop', second);
    const soloStatuses: number[] = [];
    for (let i = 0; i < 3; i++) soloStatuses.push((await call('solo-shop', solo)).status);
    expect({ statuses, fourth: throttled.status, soloStatuses }).toEqual({
      statuses: [200, 200, 200],
      fourth: 429,
      soloStatuses: [200, 200, 200],
    });
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await throttled.json()).toEqual({
      error: { code: 'throttled', message: 'too many requests for this tenant; retry later' },
    });
  });

  /** Token records as written before per-tenant usage keys (no usageKey), and a paused store of the tenant. */
  const legacyTenant = async (tenantId: string, storeId: string, tokens: string[]): Promise<void> => {
    const store = new DynamoTokenStore(t.stack.clients.doc, t.stack.resources.tables.tokens);
    for (const token of tokens)
      await store.put({ tokenHash: hashToken(token), tenantId, createdAt: Date.now() });
    await t.createStore(storeId, { tenantId, marketplace: 'amazon', plan: 'basic', status: 'paused' });
  };

  it('answers 403 forbidden to a token issued before usage keys, until it is rotated', async () => {
    const legacy = newToken();
    await legacyTenant('legacy', 'legacy-shop', [legacy]);
    const refused = await t.request('GET', '/v1/stores/legacy-shop/tasks/e-1', { token: legacy });
    expect(refused).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: NO_USAGE_KEY_MESSAGE } },
    });
    const rotated = await t.admin<{ token: string }>(
      'POST',
      `/admin/tenants/legacy/tokens/${tokenIdOf(hashToken(legacy))}/rotate`,
    );
    expect(rotated.status).toBe(201);
    const accepted = await t.request('GET', '/v1/stores/legacy-shop/tasks/e-1', {
      token: rotated.body.token,
    });
    expect(accepted.status).toBe(200);
  });

  it('backfills every tenant page by page with the bulk route, after which their old tokens work', async () => {
    const olds = { 'bulk-a': newToken(), 'bulk-b': newToken() };
    for (const [tenantId, token] of Object.entries(olds))
      await legacyTenant(tenantId, `${tenantId}-shop`, [token]);
    const updated: Record<string, number> = {};
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await t.admin<{ tenants: { tenantId: string; tokensUpdated: number }[]; cursor?: string }>(
        'POST',
        `/admin/usage-keys/backfill${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      for (const row of res.body.tenants)
        updated[row.tenantId] = (updated[row.tenantId] ?? 0) + row.tokensUpdated;
      cursor = res.body.cursor;
      pages++;
    } while (cursor && pages < 100);
    const statuses = await Promise.all(
      Object.entries(olds).map(
        async ([tenantId, token]) =>
          (await t.request('GET', `/v1/stores/${tenantId}-shop/tasks/e-1`, { token })).status,
      ),
    );
    expect({ a: updated['bulk-a'], b: updated['bulk-b'], statuses, finished: cursor }).toEqual({
      a: 1,
      b: 1,
      statuses: [200, 200],
      finished: undefined,
    });
  });

  it('gives every token of a tenant issued before usage keys the tenant’s key on backfill', async () => {
    const [seen, unseen] = [newToken(), newToken()];
    await legacyTenant('old-tenant', 'old-shop', [seen, unseen]);
    const before = await t.request('GET', '/v1/stores/old-shop/tasks/e-1', { token: seen });
    const backfill = await t.admin('POST', '/admin/tenants/old-tenant/usage-key');
    const again = await t.admin('POST', '/admin/tenants/old-tenant/usage-key');
    // `seen`'s refusal stays in the authorizer cache for its TTL; a token not yet cached works at once.
    const after = await t.request('GET', '/v1/stores/old-shop/tasks/e-1', { token: unseen });
    expect({
      before: before.status,
      backfill: [backfill.status, backfill.body],
      again: again.body,
      after: after.status,
    }).toEqual({
      before: 403,
      backfill: [200, { tenantId: 'old-tenant', tokensUpdated: 2 }],
      again: { tenantId: 'old-tenant', tokensUpdated: 0 },
      after: 200,
    });
  });
});
