import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import type { SliceWatch } from '../../../lambdas/core/store-watch.js';
import type { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { lease, policy, setup, store, T0 } from '../support/slice-world.js';

/** A slice asks its watch before each call, after the pacing wait, and ends when the store changed under it. */
describe('runSlice with a store watch', () => {
  let world: ReturnType<typeof setup>;
  /** The watch's answer once this many calls were made (else `go`). */
  let answers: Map<number, 'changed' | 'late' | Error>;
  let asked: { at: number; deadline: number; calls: number }[];
  let watch: SliceWatch & { recheck: ReturnType<typeof vi.fn> };

  beforeEach(() => {
    world = setup({ messages: 10, callMs: 100 });
    answers = new Map();
    asked = [];
    watch = {
      recheck: vi.fn(async (_policy, deadline: number) => {
        asked.push({ at: world.w.now, deadline, calls: world.w.calls.length });
        const answer = answers.get(world.w.calls.length) ?? 'go';
        if (answer instanceof Error) throw answer;
        return answer;
      }),
    };
  });

  it('asks before every call, before the rate’s wait and after it, with the slice’s policy and deadline', async () => {
    const slicePolicy = policy({ ratePerSecond: 2, maxMessagesPerSlice: 3 });
    const result = await runSlice(world.deps, store, slicePolicy, lease(), watch);
    expect(result).toMatchObject({ end: 'max_messages', delivered: 3 });
    for (const call of watch.recheck.mock.calls) expect(call[0]).toBe(slicePolicy);
    // 2/s: the second and third calls wait until 505.101 ms after the one before (the 5 s window's stretch),
    // slept to the whole millisecond (each call takes 100 ms).
    const d = T0 + 20_000;
    expect(asked).toEqual([
      { at: T0, deadline: d, calls: 0 },
      { at: T0, deadline: d, calls: 0 },
      { at: T0 + 100, deadline: d, calls: 1 },
      { at: T0 + 506, deadline: d, calls: 1 },
      { at: T0 + 606, deadline: d, calls: 2 },
      { at: T0 + 1_011, deadline: d, calls: 2 },
    ]);
  });

  // Review (session 23): the look at the instant runs inside the pacer (rate.ts `atInstant`), so a slow read there
  // moves a lone consumer's pace; taken after the pacer's answer, as in session 21, the next call came one read's
  // time closer to this one than the rate's spacing.
  it('keeps its calls a paced interval apart when the read at the instant is slow', async () => {
    const started: number[] = [];
    const market = world.deps.marketplace;
    world.deps.marketplace = {
      deliver: async (request) => {
        started.push(world.w.now);
        return market.deliver(request);
      },
    };
    let asks = 0;
    watch.recheck.mockImplementation(async () => {
      // Every look at an instant (the second of each call's two) reads for 150 ms.
      if (++asks % 2 === 0) world.w.now += 150;
      return 'go';
    });
    const result = await runSlice(
      world.deps,
      store,
      policy({ ratePerSecond: 2, maxMessagesPerSlice: 3 }),
      lease(),
      watch,
    );
    expect(result).toMatchObject({ end: 'max_messages', delivered: 3 });
    // The first call starts after its read (150 ms); each next one 505.101 ms after the one before actually began.
    expect(started).toEqual([T0 + 150, T0 + 806, T0 + 1_462]);
  });

  it('does not wait for its rate instant when the look before the wait finds the store changed', async () => {
    answers.set(1, 'changed');
    const result = await runSlice(world.deps, store, policy({ ratePerSecond: 2 }), lease(), watch);
    // The first call ended at T0 + 100; its next instant (T0 + 500) is not waited for.
    expect(result).toMatchObject({ end: 'store_changed', delivered: 1, resumeAt: T0 + 100 });
  });

  it('ends as store_changed when the store changed: no call for that task, the rest handed back at once', async () => {
    answers.set(2, 'changed');
    const result = await runSlice(world.deps, store, policy(), lease(), watch);
    expect(result).toMatchObject({
      end: 'store_changed',
      handled: 2,
      delivered: 2,
      idle: false,
      resumeAt: T0 + 200,
    });
    expect(world.w.calls).toEqual(['e0', 'e1']);
    expect(world.w.deleted).toEqual(['r0', 'r1']);
    expect(world.w.visibility).toEqual(
      ['r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9'].map((receiptHandle) => ({
        receiptHandle,
        seconds: 0,
      })),
    );
    // The task it did not call is free at once for the next slice: its claim settled, no attempt counted.
    const record = await (world.deps.deliveries as MemoryDeliveryLog).get('s1', 'e2');
    expect(record).toMatchObject({ status: 'pending' });
    expect(record?.attempts ?? 0).toBe(0);
  });

  it('ends as max_time when the deadline passed while it read, handing the rest back', async () => {
    answers.set(1, 'late');
    const result = await runSlice(world.deps, store, policy(), lease(), watch);
    expect(result).toMatchObject({ end: 'max_time', handled: 1, resumeAt: T0 + 100 });
    expect(world.w.calls).toEqual(['e0']);
    expect(world.w.visibility).toHaveLength(9);
  });

  it('ends as an error when the read failed, after releasing the task’s claim and handing the rest back', async () => {
    answers.set(1, new Error('store read failed'));
    const logs: LogRecord[] = [];
    world.deps.telemetry = new RecordingTelemetry((record) => logs.push(record));
    const result = await runSlice(world.deps, store, policy(), lease(), watch);
    // The read's own error, logged with the slice's end.
    expect(logs.filter((l) => l.level === 'error').map((l) => l.fields?.['error'])).toEqual([
      'Error: store read failed',
    ]);
    expect(result).toMatchObject({ end: 'error', handled: 1, delivered: 1 });
    expect(world.w.calls).toEqual(['e0']);
    expect(world.w.deleted).toEqual(['r0']);
    expect(world.w.visibility).toHaveLength(9);
    expect(await (world.deps.deliveries as MemoryDeliveryLog).get('s1', 'e1')).toMatchObject({
      status: 'pending',
    });
  });

  it('never asks while a task needs no call (a duplicate already delivered)', async () => {
    world = setup({ messages: 1 });
    await (world.deps.deliveries as MemoryDeliveryLog).claim('s1', 'e0', {
      holder: 'x',
      messageId: 'm',
      now: T0 - 10,
      until: T0 - 5,
    });
    await (world.deps.deliveries as MemoryDeliveryLog).settle('s1', 'e0', 'x', {
      status: 'delivered',
      now: T0 - 5,
      countAttempt: true,
    });
    const result = await runSlice(world.deps, store, policy(), lease(), watch);
    expect(result).toMatchObject({ handled: 1, delivered: 0 });
    expect(watch.recheck).not.toHaveBeenCalled();
  });
});
