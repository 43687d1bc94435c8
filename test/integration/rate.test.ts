import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Contract: for one store, never more marketplace calls per second than its ratePerSecond, averaged over
 * any 5 s window, whatever its concurrency. Measured where it matters: call arrival times at the marketplace,
 * in closed windows (two calls exactly 5 s apart share one), with no call of tolerance.
 */
const maxInAnyWindow = (starts: number[], windowMs: number): number => {
  const sorted = [...starts].sort((a, b) => a - b);
  let best = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while ((sorted[to] as number) - (sorted[from] as number) > windowMs) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
};

describe('rate limit per store', () => {
  let t: TestStack;

  beforeAll(async () => {
    // Calls take longer than the store's 1/rate spacing, so several consumers overlap while the rate holds.
    t = await startTestStack({ workerPoolSize: 8, marketplaceSim: { latencyMs: 120 } });
    const token = await t.tokenFor('acme');
    await t.createStore('rated-ent', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'enterprise',
      overrides: { ratePerSecond: 20 },
    });
    await t.createStore('rated-basic', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 10 },
    });
    await t.createStore('rated-pro', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 2 },
    });
    await t.submitMany('rated-ent', token, inventoryTasks('ent', 160));
    await t.submitMany('rated-basic', token, inventoryTasks('basic', 70));
    await t.submitMany('rated-pro', token, inventoryTasks('pro', 24));
    await waitFor(
      'the three stores drained',
      () =>
        t.deliveredCount('rated-ent') >= 160 &&
        t.deliveredCount('rated-basic') >= 70 &&
        t.deliveredCount('rated-pro') >= 24,
      60_000,
    );
  });
  afterAll(async () => {
    await t?.stop();
  });

  it.each([
    ['an enterprise store (10 consumers) at 20/s', 'rated-ent', 20],
    ['a basic store (1 consumer, across slices) at 10/s', 'rated-basic', 10],
    ['a pro store (3 consumers) at 2/s, where one call more is a fifth of a second over', 'rated-pro', 2],
  ])('keeps %s within its rate in every 5 s window', (_label, storeId, rate) => {
    const starts = t.marketplace.calls.filter((c) => c.storeId === storeId).map((c) => c.startedAt);
    expect(starts.length).toBeGreaterThan(rate * 5);
    expect(maxInAnyWindow(starts, 5_000)).toBeLessThanOrEqual(rate * 5);
  });

  it('still runs the enterprise store with several consumers at once', () => {
    expect(t.marketplace.maxConcurrency.get('rated-ent')).toBeGreaterThan(1);
  });
});
