import { describe, expect, it, vi } from 'vitest';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { afterHiding, hiding } from '../../../lambdas/core/wake.js';

/** The guard after an SQS call that hid messages (found by the simulation's zombie stalls, issue #10). */
const T0 = 1_800_000_000_000;
const depsAt = (now: number) => {
  const deferWake = vi.fn(async () => undefined);
  const recordEnqueued = vi.fn(async () => ({}) as never);
  return {
    deps: { dispatch: { deferWake, recordEnqueued }, clock: { now: () => now } },
    deferWake,
    recordEnqueued,
  };
};

describe('afterHiding', () => {
  it.each([
    ['on time', 0],
    ['5 s late (within the margin the write-ahead guard allows)', 5_000],
  ])('writes nothing when the call ended %s', async (_what, lateMs) => {
    const { deps, deferWake, recordEnqueued } = depsAt(T0 + lateMs);
    await afterHiding(deps, 's1', { plannedAt: T0, seconds: 30 });
    expect([deferWake.mock.calls.length, recordEnqueued.mock.calls.length]).toEqual([0, 0]);
  });

  it('guards again from when a stalled call ended, so the hidden message is covered', async () => {
    const { deps, deferWake } = depsAt(T0 + 80_000);
    await afterHiding(deps, 's1', { plannedAt: T0, seconds: 30 });
    expect(deferWake.mock.calls).toEqual([['s1', T0 + 80_000 + 30_000 + WAKE_MARGIN_MS]]);
  });

  it('counts re-sent copies as an enqueue, on time or not (a zombie may re-send into an idle store)', async () => {
    const { deps, recordEnqueued } = depsAt(T0);
    await afterHiding(deps, 's1', { plannedAt: T0, seconds: 30, enqueued: 3 });
    expect(recordEnqueued.mock.calls).toEqual([['s1', 3, T0]]);
  });
});

describe('hiding', () => {
  it('guards after a stalled call that failed as after one that answered (it may have applied), then fails', async () => {
    const { deps, deferWake } = depsAt(T0 + 80_000);
    const call = hiding(deps, 's1', { plannedAt: T0, seconds: 30 }, async () => {
      throw new Error('SQS unavailable');
    });
    await expect(call).rejects.toThrow('SQS unavailable');
    expect(deferWake.mock.calls).toEqual([['s1', T0 + 80_000 + 30_000 + WAKE_MARGIN_MS]]);
  });

  it('runs the call, then the guard, when it answers', async () => {
    const { deps, deferWake } = depsAt(T0 + 80_000);
    const order: string[] = [];
    deferWake.mockImplementation(async () => void order.push('guard'));
    await hiding(deps, 's1', { plannedAt: T0, seconds: 30 }, async () => void order.push('call'));
    expect(order).toEqual(['call', 'guard']);
  });
});
