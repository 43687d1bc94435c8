import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Store priority (issue #13) in local mode: a saturated pool of 2 workers, 30 single-task `low` stores
 * queued first, then 3 `high` stores; the marketplace answers every call after a fixed 50 ms. The high
 * stores' tasks are taken before most of the flood, by the order of the marketplace's calls (not timing).
 * One attention per invocation, so that each invocation is one slice and the order is the picker's alone
 * (with batches, a level's turn takes up to 10 of its attentions at once).
 */
describe('store priority under saturation', () => {
  let t: TestStack;
  const low = Array.from({ length: 30 }, (_, i) => `flood-${i}`);
  const high = ['vip-0', 'vip-1', 'vip-2'];

  beforeAll(async () => {
    t = await startTestStack({
      workerPoolSize: 2,
      workerBatchSize: 1,
      marketplaceSim: { latencyMs: 50 },
    });
    for (const id of low) await t.createStore(id, { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
    for (const id of high)
      await t.createStore(id, {
        tenantId: 'acme',
        marketplace: 'amazon',
        plan: 'basic',
        overrides: { priority: 'high' },
      });
    const token = await t.tokenFor('acme');
    await t.stack.stopWorkers();
    for (const id of low) await t.submitMany(id, token, inventoryTasks(id, 1));
    for (const id of high) await t.submitMany(id, token, inventoryTasks(id, 1));
    t.stack.startWorkers();
    await waitFor('every task delivered', () => t.marketplace.totals.ok >= low.length + high.length, 90_000);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('takes the high stores’ tasks before most of the flood queued ahead of them', () => {
    const order = t.marketplace.calls.filter((c) => c.status < 300).map((c) => c.storeId);
    const lastHigh = Math.max(...high.map((id) => order.indexOf(id)));
    expect(lastHigh).toBeGreaterThanOrEqual(0);
    // 3 high slices among the first 8 of 33: low (20 %) gets about one slice in two while high waits.
    expect(lastHigh).toBeLessThan(8);
  });

  it('counted its slices per level queue', () => {
    const { byLevel } = t.stack.eventSource.stats;
    expect(byLevel.high).toBeGreaterThanOrEqual(high.length);
    expect(byLevel.low).toBeGreaterThanOrEqual(low.length);
  });
});
