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
 * A marketplace with a fixed window's quota (5 calls per 5 s) that counts `RateLimit-Remaining` down and gives
 * `RateLimit-Reset`, and states its limit two ways: `windowed` (the local `window` mode) as a bare
 * `RateLimit-Limit: 5`, whose window the store learns from the Resets; `named` as `5;w=1`, a wrong window it
 * believes, so only the hold at `Remaining: 0` keeps it inside the quota (read per second, the rate alone would
 * spend each window in a second and meet 429s for the rest of it: session 18, 10 of 20 tasks in 20 s).
 */
describe('a marketplace that counts a window’s quota down (RateLimit-Remaining / -Reset)', () => {
  let t: TestStack;
  let token: string;
  /** The `named` store's window: its index (5 s of wall time) and the calls made in it. */
  const named = { index: -1, used: 0 };

  beforeAll(async () => {
    t = await startTestStack({
      marketplaceSim: {
        latencyMs: 2,
        limit: { perSecond: 1, headers: 'window' },
        respond: ({ storeId }) => {
          if (storeId !== 'named') return undefined;
          const now = Date.now();
          const index = Math.floor(now / 5_000);
          if (index !== named.index) Object.assign(named, { index, used: 0 });
          const allowed = named.used < 5;
          if (allowed) named.used++;
          const headers = {
            'ratelimit-limit': '5;w=1',
            'ratelimit-remaining': String(5 - named.used),
            'ratelimit-reset': String(Math.ceil(((index + 1) * 5_000 - now) / 1000)),
          };
          return { status: allowed ? 200 : 429, headers };
        },
      },
    });
    token = await t.tokenFor('acme');
    for (const storeId of ['windowed', 'named'])
      await t.createStore(storeId, {
        tenantId: 'acme',
        marketplace: 'amazon',
        plan: 'pro',
        overrides: { ratePerSecond: 20, maxConcurrentConsumers: 1 },
      });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it.each(['windowed', 'named'])(
    '%s: calls no more than the quota in any window and meets no 429',
    async (storeId) => {
      await t.submitMany(storeId, token, inventoryTasks(storeId, 12));
      await waitFor('all twelve delivered', () => t.deliveredCount(storeId) === 12, 40_000);
      const calls = t.stack.marketplace?.calls.filter((c) => c.storeId === storeId) ?? [];
      expect(calls.filter((c) => c.status === 429)).toEqual([]);
      const perWindow = new Map<number, number>();
      for (const call of calls) {
        const index = Math.floor(call.startedAt / 5_000);
        perWindow.set(index, (perWindow.get(index) ?? 0) + 1);
      }
      expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(5);
      expect(calls).toHaveLength(12);
    },
  );
});
