import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor, type TestStack } from '../support/harness.js';

/** The contract's HTTP API through local mode: statuses, error bodies, and nothing enqueued on a rejection. */
describe('HTTP API', () => {
  let t: TestStack;
  let acme: string;
  let globex: string;
  const task = { eventId: 'order-1', type: 'inventory.update', payload: { sku: 'SKU-1', quantity: 3 } };

  beforeAll(async () => {
    t = await startTestStack();
    acme = await t.tokenFor('acme');
    globex = await t.tokenFor('globex');
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers /health with 200 {"status":"ok"}', async () => {
    const res = await t.request('GET', '/health');
    expect(res).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('creates a store with 201 and the contract view, then updates it with 200', async () => {
    const created = await t.admin('PUT', '/admin/stores/shop-1', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      storeId: 'shop-1',
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      status: 'active',
      policy: {
        maxConcurrentConsumers: 3,
        maxMessagesPerSlice: 200,
        maxSliceSeconds: 20,
        ratePerSecond: 20,
        maxAttempts: 8,
        priority: 'normal',
        throttleScope: 'store',
      },
      effective: {
        plan: 'pro',
        policy: {
          maxConcurrentConsumers: 3,
          maxMessagesPerSlice: 200,
          maxSliceSeconds: 20,
          ratePerSecond: 20,
          maxAttempts: 8,
          priority: 'normal',
          throttleScope: 'store',
        },
        source: 'store',
      },
      queue: { backlog: 0, inFlight: 0, delayed: 0, deadLetters: 0, oldestAgeSeconds: 0 },
      activeConsumers: 0,
      errorStreak: 0,
      rate: { configured: 20, effective: 20, reason: 'policy' },
    });
    const updated = await t.admin('PUT', '/admin/stores/shop-1', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 500 },
    });
    expect(updated.status).toBe(200);
    expect((updated.body['policy'] as Record<string, number>)['ratePerSecond']).toBe(500);
  });

  it('accepts a task with 202 and reports it delivered', async () => {
    const res = await t.request('POST', '/v1/stores/shop-1/tasks', { token: acme, body: task });
    expect(res).toEqual({ status: 202, body: { storeId: 'shop-1', eventId: 'order-1', status: 'accepted' } });
    await waitFor(
      'order-1 delivered',
      async () => {
        const status = await t.request('GET', '/v1/stores/shop-1/tasks/order-1', { token: acme });
        return status.body['status'] === 'delivered';
      },
      20_000,
    );
    const call = t.marketplace.calls.find((c) => c.idempotencyKey === 'shop-1:order-1');
    expect(call?.body).toEqual({
      eventId: 'order-1',
      type: 'inventory.update',
      payload: { sku: 'SKU-1', quantity: 3 },
    });
  });

  it('reports an eventId it never saw as pending', async () => {
    const res = await t.request('GET', '/v1/stores/shop-1/tasks/never-seen', { token: acme });
    expect(res).toEqual({
      status: 200,
      body: { storeId: 'shop-1', eventId: 'never-seen', status: 'pending' },
    });
  });

  it.each([
    ['a missing token', 401, 'unauthorized', undefined],
    ['an unknown token', 401, 'unauthorized', 'aqt_nope'],
    ["another tenant's token", 403, 'forbidden', 'globex'],
  ])('refuses %s with %i', async (_label, status, code, which) => {
    await t.stack.stopWorkers();
    const before = await t.backlogOf('shop-1');
    const token = which === 'globex' ? globex : which;
    const res = await t.request('POST', '/v1/stores/shop-1/tasks', {
      ...(token ? { token } : {}),
      body: { ...task, eventId: 'x-1' },
    });
    expect(res.status).toBe(status);
    expect((res.body as { error: { code: string } }).error.code).toBe(code);
    expect(await t.backlogOf('shop-1')).toBe(before);
    t.stack.startWorkers();
  });

  it.each([
    ['eventId', { ...task, eventId: 'has space' }],
    ['type', { ...task, type: 'orders.delete' }],
    ['payload.quantity', { ...task, payload: { sku: 'SKU-1', quantity: -1 } }],
    [
      'payload.currency',
      { eventId: 'p-1', type: 'price.update', payload: { sku: 'S', amount: 10, currency: 'real' } },
    ],
    ['version', { ...task, version: 1.5 }],
  ])('rejects an invalid %s with 400 naming the field, enqueueing nothing', async (field, body) => {
    await t.stack.stopWorkers();
    const before = await t.backlogOf('shop-1');
    const res = await t.request<{ error: { code: string; message: string } }>(
      'POST',
      '/v1/stores/shop-1/tasks',
      { token: acme, body },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message.startsWith(`${field}:`)).toBe(true);
    expect(await t.backlogOf('shop-1')).toBe(before);
    t.stack.startWorkers();
  });

  it('rejects a body that is not JSON with 400', async () => {
    const res = await t.request('POST', '/v1/stores/shop-1/tasks', { token: acme, rawBody: '{"eventId":' });
    expect(res.status).toBe(400);
  });

  it('rejects a task body over 64 KiB with 413', async () => {
    const big = { ...task, payload: { sku: 'x'.repeat(70_000), quantity: 1 } };
    const res = await t.request<{ error: { code: string } }>('POST', '/v1/stores/shop-1/tasks', {
      token: acme,
      body: big,
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('answers an unknown store exactly as a foreign one: 403, revealing nothing', async () => {
    const unknown = await t.request('POST', '/v1/stores/nope/tasks', { token: acme, body: task });
    const foreign = await t.request('POST', '/v1/stores/shop-1/tasks', { token: globex, body: task });
    expect(unknown).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'this credential does not own the store' } },
    });
    expect(foreign).toEqual(unknown);
  });

  it('answers 409 for a disabled store', async () => {
    await t.admin('PUT', '/admin/stores/closed', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'disabled',
    });
    const res = await t.request<{ error: { code: string } }>('POST', '/v1/stores/closed/tasks', {
      token: acme,
      body: task,
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('store_not_accepting');
    expect(await t.backlogOf('closed')).toBe(0);
  });

  it('splits a batch into accepted and rejected, enqueueing only the accepted', async () => {
    await t.admin('PUT', '/admin/stores/batchy', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      status: 'paused',
    });
    const res = await t.request<{
      accepted: string[];
      rejected: { eventId: string; error: { code: string } }[];
    }>('POST', '/v1/stores/batchy/tasks/batch', {
      token: acme,
      body: {
        tasks: [
          { ...task, eventId: 'b-1' },
          { ...task, eventId: 'b-2', payload: { sku: 'S' } },
          { ...task, eventId: 'b-1' },
          { ...task, eventId: 'b-3' },
        ],
      },
    });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toEqual(['b-1', 'b-3']);
    expect(res.body.rejected.map((r) => r.eventId)).toEqual(['b-2', 'b-1']);
    expect(await t.backlogOf('batchy')).toBe(2);
  });

  it('rejects a batch of more than 100 tasks with 400', async () => {
    const tasks = Array.from({ length: 101 }, (_, i) => ({ ...task, eventId: `big-${i}` }));
    const res = await t.request('POST', '/v1/stores/batchy/tasks/batch', { token: acme, body: { tasks } });
    expect(res.status).toBe(400);
  });

  it('refuses admin routes without the admin token', async () => {
    const res = await t.request<{ error: { code: string } }>('GET', '/admin/stores/shop-1', { token: acme });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('answers 404 with the error JSON for an unknown route', async () => {
    const res = await t.request<{ error: { code: string } }>('GET', '/v2/whatever', { token: acme });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
  });

  it('dead-letters a permanently rejected task at once, then redrives and delivers it', async () => {
    await t.admin('PUT', '/admin/stores/dlq-shop', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 100 },
    });
    t.marketplace.setResponder((call) => (call.storeId === 'dlq-shop' ? { status: 400 } : undefined));
    await t.request('POST', '/v1/stores/dlq-shop/tasks', {
      token: acme,
      body: { ...task, eventId: 'doomed' },
    });
    await waitFor(
      'the task is dead-lettered',
      async () => {
        const view = await t.admin<{ queue: { deadLetters: number } }>('GET', '/admin/stores/dlq-shop');
        return view.body.queue.deadLetters === 1;
      },
      20_000,
    );
    const status = await t.request('GET', '/v1/stores/dlq-shop/tasks/doomed', { token: acme });
    expect(status.body).toMatchObject({ status: 'dead_lettered', attempts: 1 });
    t.marketplace.setResponder(undefined);
    const redrive = await t.admin('POST', '/admin/stores/dlq-shop/dead-letters/redrive');
    expect(redrive).toEqual({ status: 202, body: { storeId: 'dlq-shop', moving: 1 } });
    await waitFor(
      'the redriven task is delivered',
      async () => {
        const after = await t.request('GET', '/v1/stores/dlq-shop/tasks/doomed', { token: acme });
        return after.body['status'] === 'delivered';
      },
      30_000,
    );
    expect(t.marketplace.successes.get('dlq-shop:doomed')).toBe(1);
  });
});
