import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, sleep, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #10, "no silent expiry", on the emulators with ages in seconds: a paused store's tasks cross the
 * refresh age, the reconciler's retention pass re-sends them as fresh copies (SentTimestamp restarts on
 * fauxqs as on SQS), and after resume every task is delivered exactly once.
 */
describe('retention pass', () => {
  let t: TestStack;
  let token: string;
  const TASKS = 30;

  beforeAll(async () => {
    // The test runs the reconciler itself (reconcileNow), so a pass happens exactly when it says.
    t = await startTestStack({
      reconcileIntervalMs: 3_600_000,
      settings: {
        [EnvNames.refreshAgeSeconds]: '3',
        [EnvNames.refreshCopyDelaySeconds]: '4',
      },
    });
    token = await t.tokenFor('acme');
    await t.createStore('old', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 1000 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('keeps a paused store’s tasks past the refresh age and delivers each once after resume', async () => {
    expect((await t.admin('PATCH', '/admin/stores/old', { status: 'paused' })).status).toBe(200);
    await t.submitMany('old', token, inventoryTasks('old', TASKS));
    // A pass before the refresh age re-sends nothing; once every task is older, one pass re-sends them all.
    const early = await t.stack.reconcileNow();
    await sleep(3_100);
    const report = await t.stack.reconcileNow();
    expect({
      early: early.refreshed,
      refreshed: report.refreshed,
      // Each was sent more than the refresh age before the pass: fauxqs's SentTimestamp is read.
      old: t.stack.telemetry.total(MetricNames.tasksRefreshed, { age: 'old' }),
      delivered: t.deliveredCount('old'),
      backlog: await t.backlogOf('old'),
    }).toEqual({ early: 0, refreshed: TASKS, old: TASKS, delivered: 0, backlog: TASKS });
    // The copies are delayed (4 s here: longer than the pass runs); resumed before they show, the slice would
    // find the queue empty and look again only after its deferred wait (20 s).
    await sleep(4_500);

    expect((await t.admin('PATCH', '/admin/stores/old', { status: 'active' })).status).toBe(200);
    await waitFor('the refreshed backlog is delivered', async () => (await t.backlogOf('old')) === 0, 30_000);
    const delivered = t.marketplace.calls
      .filter((c) => c.storeId === 'old' && c.status < 300)
      .map((c) => c.idempotencyKey);
    expect({ calls: delivered.length, distinct: new Set(delivered).size }).toEqual({
      calls: TASKS,
      distinct: TASKS,
    });
  });
});
