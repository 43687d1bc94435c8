import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #13, the marketplace's own limits: a marketplace that states its limit in x-amzn-RateLimit-Limit
 * (2/s for a store whose policy allows 20/s) lowers the store's effective rate, shown in the store view.
 */
describe('a marketplace that sends rate-limit headers', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack({
      marketplaceSim: { latencyMs: 2, limit: { perSecond: 2, headers: 'amzn' } },
    });
    token = await t.tokenFor('acme');
    await t.createStore('limited', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 20 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('shows the header rate as the store’s effective rate, reason "header", after the first answer', async () => {
    await t.submitMany('limited', token, inventoryTasks('h', 3));
    await waitFor('all three delivered', () => t.deliveredCount('limited') === 3, 20_000);
    const view = await t.admin('GET', '/admin/stores/limited');
    expect(view.body['rate']).toEqual({ configured: 20, effective: 2, reason: 'header' });
    // Paced at 2/s from the first answer on: the bucket's one-second burst was never spent, so no 429.
    expect(t.stack.marketplace?.totals.throttled).toBe(0);
  });
});

/**
 * A marketplace with a fixed window's quota (5 calls per 5 s) that states it as `RateLimit-Limit: 5` without the
 * window, counts `RateLimit-Remaining` down and gives `RateLimit-Reset`: read as 5/s, the rate alone would spend
 * each window in a second and meet 429s for the rest of it (session 18: 10 of 20 tasks in 20 s). The store
 * holds at `Remaining: 0` until the reset instead.
 */
describe('a marketplace that counts a window’s quota down (RateLimit-Remaining / -Reset)', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack({
      marketplaceSim: { latencyMs: 2, limit: { perSecond: 1, headers: 'window' } },
    });
    token = await t.tokenFor('acme');
    await t.createStore('windowed', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 20, maxConcurrentConsumers: 1 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('calls no more than the quota in any window and meets no 429', async () => {
    await t.submitMany('windowed', token, inventoryTasks('w', 12));
    await waitFor('all twelve delivered', () => t.deliveredCount('windowed') === 12, 40_000);
    const calls = t.stack.marketplace?.calls.filter((c) => c.storeId === 'windowed') ?? [];
    expect(t.stack.marketplace?.totals.throttled).toBe(0);
    expect(calls.map((c) => c.status).every((status) => status === 200)).toBe(true);
    const perWindow = new Map<number, number>();
    for (const call of calls)
      perWindow.set(
        Math.floor(call.startedAt / 5_000),
        (perWindow.get(Math.floor(call.startedAt / 5_000)) ?? 0) + 1,
      );
    expect(Math.max(...perWindow.values())).toBe(5);
  });
});
