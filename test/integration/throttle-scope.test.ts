import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * `throttleScope: 'task'` (issue #13's known limitation, 429s that no rate causes): a marketplace that answers
 * 429 (Retry-After: 1) to the first call of every task. Under the default scope each 429 holds the store and
 * halves its rate; under `task` only the task answered waits its Retry-After, as a fresh copy, and the store's
 * rate stays its policy's. Real handlers on DynamoDB Local and fauxqs.
 */
describe('a marketplace whose 429s no rate causes, and a store whose 429s throttle the task alone', () => {
  let t: TestStack;
  let token: string;
  const seen = new Set<string>();
  const TASKS = 30;

  beforeAll(async () => {
    t = await startTestStack({
      marketplaceSim: {
        latencyMs: 2,
        // Each task's first call is refused; every later one succeeds.
        respond: ({ idempotencyKey }) => {
          if (idempotencyKey === undefined || seen.has(idempotencyKey)) return { status: 200 };
          seen.add(idempotencyKey);
          return { status: 429, headers: { 'retry-after': '1' } };
        },
      },
    });
    token = await t.tokenFor('acme');
    for (const [storeId, overrides] of [
      ['per-task', { throttleScope: 'task' }],
      ['per-store', {}],
    ] as const)
      await t.createStore(storeId, { tenantId: 'acme', marketplace: 'amazon', plan: 'pro', overrides });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('delivers every task after its own Retry-After, keeps the policy rate and does not hold the store', async () => {
    await t.submitMany('per-task', token, inventoryTasks('t', TASKS));
    await t.submitMany('per-store', token, inventoryTasks('s', TASKS));
    await waitFor(
      'every per-task store task delivered',
      () => t.deliveredCount('per-task') === TASKS,
      60_000,
    );

    const calls = t.marketplace.calls.filter((c) => c.storeId === 'per-task');
    const byKey = new Map<string, number[]>();
    for (const call of calls)
      byKey.set(call.idempotencyKey ?? '', [...(byKey.get(call.idempotencyKey ?? '') ?? []), call.startedAt]);
    expect(byKey.size).toBe(TASKS);
    for (const [key, starts] of byKey) {
      // The 429, then the one call that succeeds: no earlier than its Retry-After, and no call in between.
      expect(starts, key).toHaveLength(2);
      const [refused, retried] = starts as [number, number];
      expect(retried - refused, key).toBeGreaterThanOrEqual(1_000);
    }
    // Not held: other tasks were called inside a 429's Retry-After (a store-wide hold would forbid every one).
    const refusals = calls.filter((c) => c.status === 429);
    const inside = refusals.filter((r) =>
      calls.some(
        (c) =>
          c.idempotencyKey !== r.idempotencyKey && c.startedAt > r.endedAt && c.startedAt < r.endedAt + 1_000,
      ),
    );
    expect(inside.length).toBeGreaterThan(refusals.length / 2);
    const view = await t.admin('GET', '/admin/stores/per-task');
    expect(view.body['rate']).toEqual({ configured: 20, effective: 20, reason: 'policy' });
    // Not only shown as the policy: no 429 wrote a backoff to the store's dispatch item.
    const dispatch = new DynamoDispatchState(t.stack.clients.doc, t.stack.resources.tables.dispatch);
    expect((await dispatch.read('per-task'))?.rate).toBeUndefined();
    expect((view.body['policy'] as Record<string, unknown>)['throttleScope']).toBe('task');
    // Each task answered 429 once and delivered once: its record says so, with no attempt counted for the 429.
    const status = await t.request('GET', '/v1/stores/per-task/tasks/t-0', { token });
    expect(status.body).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('under the default scope the same 429s lower the store rate (the limitation the task scope is for)', async () => {
    await waitFor(
      'the per-store store backed off',
      async () =>
        ((await t.admin('GET', '/admin/stores/per-store')).body['rate'] as { reason: string }).reason ===
        'backoff',
      60_000,
    );
    const view = await t.admin('GET', '/admin/stores/per-store');
    expect((view.body['rate'] as { effective: number }).effective).toBeLessThan(20);
  });
});
