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
