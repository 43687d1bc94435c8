import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

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
    t = await startTestStack({
      settings: {
        [EnvNames.refreshAgeSeconds]: '3',
        [EnvNames.refreshCopyDelaySeconds]: '1',
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
    // Every task was sent more than the refresh age ago when a pass re-sent it: SentTimestamp is read.
    await waitFor(
      'the pass re-sends every old task',
      () => t.stack.telemetry.total(MetricNames.tasksRefreshed, { age: 'old' }) >= TASKS,
      30_000,
    );
    expect(t.deliveredCount('old')).toBe(0);
    expect(await t.backlogOf('old')).toBe(TASKS);

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
