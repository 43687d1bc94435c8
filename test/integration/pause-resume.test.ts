import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, sleep, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/** Contract: a paused store accepts tasks but gets no deliveries; resuming drains it with no new task. */
describe('pause and resume', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
    await t.createStore('shop', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 1000 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('accepts tasks while paused and delivers none of them', async () => {
    const paused = await t.admin('PATCH', '/admin/stores/shop', { status: 'paused' });
    expect(paused.body['status']).toBe('paused');
    await t.submitMany('shop', token, inventoryTasks('paused', 40));
    await sleep(3_000);
    expect(t.deliveredCount('shop')).toBe(0);
    const view = await t.admin<{ queue: { backlog: number } }>('GET', '/admin/stores/shop');
    expect(view.body.queue.backlog).toBe(40);
  });

  it('drains the backlog after resume without any new task', async () => {
    const resumed = await t.admin('PATCH', '/admin/stores/shop', { status: 'active' });
    expect(resumed.status).toBe(200);
    await waitFor('the paused backlog is delivered', () => t.deliveredCount('shop') >= 40, 30_000);
    expect(
      t.stack.telemetry.total(MetricNames.attentionsPublished, { reason: 'resume' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('stops a store paused mid-drain within about a second: running slices re-read it', async () => {
    // Three consumers at 20/s over 300 tasks: slices of 20 s each, so a slice that kept what it read at its
    // start would call for up to 20 s after the pause (session 20's black-box pass: 857 calls over 19.5 s).
    await t.createStore('draining', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 20 },
    });
    await t.submitMany('draining', token, inventoryTasks('drain', 300));
    await waitFor('the drain is under way', () => t.deliveredCount('draining') >= 40, 30_000);
    const paused = await t.admin('PATCH', '/admin/stores/draining', { status: 'paused' });
    expect(paused.status).toBe(200);
    const pausedAt = Date.now();
    await sleep(4_000);
    const after = t.marketplace.calls
      .filter((c) => c.storeId === 'draining' && c.startedAt > pausedAt)
      .map((c) => c.startedAt - pausedAt);
    // A call needs a read of the store begun less than a second before it; arrival adds this host's jitter.
    expect(Math.max(0, ...after)).toBeLessThan(2_500);
    expect(t.deliveredCount('draining')).toBeLessThan(300);
    await t.admin('PATCH', '/admin/stores/draining', { status: 'active' });
    await waitFor('the rest is delivered after resume', () => t.deliveredCount('draining') >= 300, 60_000);
  });

  it('discards attentions that reach a store paused after they were published', async () => {
    await t.stack.stopWorkers();
    await t.submitMany('shop', token, inventoryTasks('late', 5));
    await t.admin('PATCH', '/admin/stores/shop', { status: 'maintenance' });
    const discardedBefore = t.stack.telemetry.total(MetricNames.attentionsDiscarded, {
      reason: 'maintenance',
    });
    t.stack.startWorkers();
    await waitFor(
      'the attention is discarded for maintenance',
      () =>
        t.stack.telemetry.total(MetricNames.attentionsDiscarded, { reason: 'maintenance' }) > discardedBefore,
      15_000,
    );
    expect(t.deliveredCount('shop')).toBe(40);
  });

  it('keeps every change of two operators at once: status, plan and overrides sent together all hold', async () => {
    await t.createStore('twice', { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
    const start = (await t.storeRecord('twice'))?.revision ?? 0;
    for (let round = 1; round <= 5; round++) {
      const status = round % 2 === 1 ? 'paused' : 'active';
      const plan = round % 2 === 1 ? 'enterprise' : 'pro';
      const answers = await Promise.all([
        t.admin('PATCH', '/admin/stores/twice', { status }),
        t.admin('PATCH', '/admin/stores/twice', { plan }),
        t.admin('PATCH', '/admin/stores/twice', { overrides: { ratePerSecond: 10 + round } }),
      ]);
      const record = await t.storeRecord('twice');
      expect({
        answers: answers.map((a) => a.status),
        status: record?.status,
        plan: record?.plan,
        rate: record?.overrides?.ratePerSecond,
        revision: record?.revision,
      }).toEqual({ answers: [200, 200, 200], status, plan, rate: 10 + round, revision: start + 3 * round });
    }
  });
});
