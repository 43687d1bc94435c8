import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { DeliveryOutcome } from '../../../lambdas/core/ports.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import type { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { item, lease, policy, setup, store, T0, work } from '../support/slice-world.js';

/** invariant 4 (bounded slice) and the slice's per-task handling, with plain-object fakes and a pinned clock */
describe('runSlice', () => {
  let world: ReturnType<typeof setup>;
  beforeEach(() => {
    world = setup();
  });

  it('ends at maxMessagesPerSlice, never receiving more than it may handle', async () => {
    world = setup({ messages: 100 });
    const result = await runSlice(world.deps, store, policy({ maxMessagesPerSlice: 25 }), lease());
    expect(result).toMatchObject({ end: 'max_messages', handled: 25, delivered: 25, resumeAt: world.w.now });
    expect(world.w.receives).toEqual([10, 10, 5]);
    expect(world.w.deleted).toHaveLength(25);
  });

  it('ends at maxSliceSeconds and hands unprocessed messages back at once', async () => {
    world = setup({ messages: 10, callMs: 1_000 });
    const result = await runSlice(world.deps, store, policy({ maxSliceSeconds: 3 }), lease());
    expect(result).toMatchObject({ end: 'max_time', handled: 3 });
    expect(world.w.visibility).toEqual(
      ['r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9'].map((receiptHandle) => ({ receiptHandle, seconds: 0 })),
    );
  });

  it('marks the store idle on an empty long poll, at the enqSeq read with the lease', async () => {
    world = setup({ messages: 3 });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'empty', idle: true, delivered: 3 });
    // Three calls paced 1.011 ms apart (1,000/s, stretched for the 5 s window: rate.ts pacedInterval) start at
    // T0, T0 + 2 and T0 + 3 (sleeps are whole milliseconds), so the queue runs dry at T0 + 3; the pace to carry
    // is T0 + 3.033, rounded up.
    expect(world.dispatch.markIdle).toHaveBeenCalledWith('s1', 'a', 1, {
      seenSeq: 7,
      now: T0 + 3,
      tat: T0 + 4,
    });
  });

  it('keeps consuming when ingest bumped enqSeq after the lease was taken', async () => {
    world.dispatch.markIdle
      .mockResolvedValueOnce({ ok: false, current: item({ enqSeq: 9 }) })
      .mockResolvedValueOnce({ ok: true, item: item({ slots: {} }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.idle).toBe(true);
    expect(world.dispatch.markIdle).toHaveBeenLastCalledWith('s1', 'a', 1, { seenSeq: 9, now: T0, tat: T0 });
  });

  it('only releases its own slot when other slots remain', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({
      ok: false,
      current: item({ slots: { a: { s: 'l', at: T0 + 35_000, f: 1 }, b: { s: 'q', at: T0 } } }),
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'empty', idle: false });
    expect(world.dispatch.release).toHaveBeenCalledWith('s1', 'a', 1, T0);
  });

  it('stops as lease_lost when its fence no longer holds the slot', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({
      ok: false,
      current: item({ slots: { a: { s: 'l', at: T0, f: 2 } } }),
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.end).toBe('lease_lost');
  });

  it('requeues instead of going idle while a deferred task is hidden, looking again within 20 s', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({ ok: false, current: item({ wakeAt: T0 + 60_000 }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    // Not at wakeAt itself: new tasks must not wait behind a long backoff.
    expect(result).toMatchObject({ end: 'deferred', resumeAt: T0 + 20_000 });
  });

  it('requeues at wakeAt when the hidden task is due back sooner than that', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({ ok: false, current: item({ wakeAt: T0 + 8_000 }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'deferred', resumeAt: T0 + 8_000 });
  });

  it('goes idle after a refused release when it turned out to be the last slot', async () => {
    const two = item({ slots: { a: { s: 'l', at: T0 + 35_000, f: 1 }, b: { s: 'q', at: T0 } } });
    world.dispatch.markIdle
      .mockResolvedValueOnce({ ok: false, current: two })
      .mockResolvedValueOnce({ ok: true, item: item({ slots: {} }) });
    world.dispatch.release.mockResolvedValueOnce({ ok: false, current: item() });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, idle: result.idle, tries: world.dispatch.markIdle.mock.calls.length }).toEqual({
      end: 'empty',
      idle: true,
      tries: 2,
    });
  });

  it('stops on a 429, raising wakeAt before re-sending the in-hand messages delayed by Retry-After', async () => {
    world = setup({
      messages: 4,
      outcome: (id) =>
        id === 'e1' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    // The second call started 2 ms in (paced 1.011 ms apart at 1,000/s, slept to the whole millisecond), so
    // Retry-After counts from there.
    expect(result).toMatchObject({ end: 'throttled', resumeAt: T0 + 2 + 30_000, delivered: 1 });
    // The hold is written for a single consumer too: a consumer added by a raised cap must find it.
    expect(world.w.events).toEqual(['deferWake', 'holdTat', 'recordEnqueued', 'resend', 'recordEnqueued']);
    // Fresh copies: their receive count starts again, so a 429 storm cannot push them into the DLQ.
    expect(world.w.resent).toEqual(['r1', 'r2', 'r3'].map((receiptHandle) => ({ receiptHandle, delay: 30 })));
    expect(world.w.deleted).toEqual(['r0']);
  });

  it('dead-letters a throttled task past its expiry age (expiring) instead of re-sending it; re-sends the rest', async () => {
    world = setup({
      messages: 4,
      outcome: (id) =>
        id === 'e1' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    world.w.now = T0 + 10_000;
    world.deps.settings = { ...world.deps.settings, expiryAgeMs: 10_000 };
    const result = await runSlice(world.deps, store, policy(), lease({ startedAt: T0 + 10_000 }));
    expect({
      result: [result.end, result.deadLettered, result.delivered],
      reason: vi.mocked(world.tasks.deadLetter).mock.calls.map((c) => [c[1], c[2].code, c[2].lastStatus]),
      resent: world.w.resent.map((r) => r.receiptHandle),
      deleted: world.w.deleted,
      expiring: (world.deps.telemetry as RecordingTelemetry).counters.get(MetricNames.tasksExpiring),
    }).toEqual({
      result: ['throttled', 1, 1],
      reason: [[work(1), 'expiring', 429]],
      // The store still waits for Retry-After; the expired task is deleted with the delivered one.
      resent: ['r2', 'r3'],
      deleted: ['r0', 'r1'],
      expiring: 1,
    });
  });

  it('re-sends a throttled task one millisecond younger than its expiry age', async () => {
    world = setup({
      messages: 2,
      outcome: (id) =>
        id === 'e0' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    world.w.now = T0 + 9_999;
    world.deps.settings = { ...world.deps.settings, expiryAgeMs: 10_000 };
    await runSlice(world.deps, store, policy(), lease({ startedAt: T0 + 9_999 }));
    expect({
      dead: vi.mocked(world.tasks.deadLetter).mock.calls.length,
      resent: world.w.resent.length,
    }).toEqual({
      dead: 0,
      resent: 2,
    });
  });

  it('holds the whole store on a 429 when it has several consumers: the shared schedule waits for Retry-After', async () => {
    world = setup({
      messages: 2,
      outcome: (id) =>
        id === 'e0' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({
      result: [result.end, result.resumeAt],
      events: world.w.events,
      tat: world.w.tat,
    }).toEqual({
      result: ['throttled', T0 + 30_000],
      // At once a hold of the other consumers for the whole Retry-After, before any other write; then
      // write-ahead (no idling before Retry-After), the hold again from the slice's clock, the copies, counted
      // as an enqueue.
      events: ['holdTat', 'deferWake', 'holdTat', 'recordEnqueued', 'resend', 'recordEnqueued'],
      // The 429 lowered the rate: the schedule, held first, is pushed on by the longer spacing less the old one
      // (2 ms at the halved rate less 1.021 ms: 1,000/s paced for the 5 s window).
      tat: T0 + 30_000.979,
    });
  });

  it("holds the other consumers for the 429's whole Retry-After at once, before its other writes; a lone consumer does not", async () => {
    const throttled = (id: string): DeliveryOutcome =>
      id === 'e0' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 };
    world = setup({ messages: 2, outcome: throttled });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    const at = world.w.now;
    expect(world.dispatch.holdTat.mock.calls.map((c) => c[1])).toEqual([at + 30_000, at + 30_000]);
    world = setup({ messages: 2, outcome: throttled });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 1 }), lease());
    expect(world.dispatch.holdTat.mock.calls.map((c) => c[1])).toEqual([world.w.now + 30_000]);
  });

  it.each([
    ['past its deadline', 60_000],
    ['within its slice (it does not sleep there holding a worker)', 10_000],
  ])(
    'ends a consumer whose store is held %s without a call; its messages come back as fresh copies when the hold ends',
    async (_, holdMs) => {
      world = setup({ messages: 2 });
      world.w.tat = T0 + holdMs; // another consumer got a 429 with this Retry-After
      const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
      expect({
        calls: world.w.calls,
        slept: world.w.now - T0,
        end: result.end,
        resumeAt: result.resumeAt,
        // Write-ahead: no idling until the copies are visible; a hand-back would spend a receive per hold.
        events: world.w.events,
        resent: world.w.resent,
      }).toEqual({
        calls: [],
        slept: 0,
        end: 'throttled',
        resumeAt: T0 + holdMs,
        events: ['deferWake', 'recordEnqueued', 'resend', 'recordEnqueued'],
        resent: [
          { receiptHandle: 'r0', delay: holdMs / 1000 },
          { receiptHandle: 'r1', delay: holdMs / 1000 },
        ],
      });
    },
  );

  it('backs a transient failure off through its visibility and carries on with the rest', async () => {
    world = setup({
      messages: 3,
      outcome: (id) =>
        id === 'e0' ? { kind: 'transient', status: 503, error: 'x' } : { kind: 'ok', status: 200 },
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.delivered).toBe(2);
    expect(world.w.events.slice(0, 2)).toEqual(['deferWake', 'visibility']);
    expect(world.w.visibility[0]).toEqual({ receiptHandle: 'r0', seconds: 1 });
  });

  it('dead-letters a permanent rejection at once and deletes it from the work queue', async () => {
    world = setup({ messages: 1, outcome: () => ({ kind: 'permanent', status: 422, error: 'bad sku' }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.deadLettered).toBe(1);
    expect(world.tasks.deadLetter).toHaveBeenCalledWith('dlq-url', work(0), {
      code: 'marketplace_rejected',
      message: 'bad sku',
      lastStatus: 422,
      attempts: 1,
      firstAttemptAt: T0,
      lastAttemptAt: T0,
    });
    expect(world.w.deleted).toEqual(['r0']);
  });

  const recordStarts = (): number[] => {
    const starts: number[] = [];
    (world.deps.marketplace.deliver as ReturnType<typeof vi.fn>).mockImplementation(async () => {
      starts.push(world.w.now - T0);
      return { kind: 'ok', status: 200 } as const;
    });
    return starts;
  };

  it('paces a multi-consumer store through the shared schedule, at the store rate', async () => {
    world = setup({ messages: 4 });
    const starts = recordStarts();
    await runSlice(world.deps, store, policy({ ratePerSecond: 4, maxConcurrentConsumers: 2 }), lease());
    // 4/s on a shared schedule: instants 257.501 ms apart, not 250 — any closed 5 s window of arrivals then holds
    // at most 20 calls, each up to its lateness (100 ms) and the arrival jitter (50 ms) after its instant.
    expect(starts).toEqual([0, 258, 516, 773]);
    // One write for the four messages in hand: it restarts the idle schedule at now with a block of four
    // instants, which the lease paces through locally, at the standard lateness (its first block: no pace of its
    // own known yet), which the schedule records.
    expect(world.dispatch.restartTat).toHaveBeenCalledTimes(1);
    expect(world.dispatch.restartTat).toHaveBeenCalledWith(store.storeId, T0, 1030.004, 4, 100);
    expect(world.dispatch.advanceTat).not.toHaveBeenCalled();
    expect(world.w.tat).toBe(T0 + 1030.004);
  });

  it('waits for the schedule another consumer of the store already reserved', async () => {
    world = setup({ messages: 2 });
    world.w.tat = T0 + 500; // the other consumer holds the next instant (T0 + 250)
    const starts = recordStarts();
    await runSlice(world.deps, store, policy({ ratePerSecond: 4, maxConcurrentConsumers: 2 }), lease());
    expect(starts).toEqual([500, 758]);
  });

  it('paces a single-consumer store locally and hands its pace on to the next lease', async () => {
    world = setup({ messages: 3 });
    const starts = recordStarts();
    const result = await runSlice(
      world.deps,
      store,
      policy({ ratePerSecond: 2 }),
      lease({ nextCallAt: T0 + 100 }),
    );
    // 2/s on one consumer: 505.101 ms from each call's due time to the next (the 5 s window's stretch), each call
    // slept to the whole millisecond.
    expect(starts).toEqual([100, 606, 1111]);
    // No shared schedule for a single consumer: no DynamoDB write per call.
    expect(world.dispatch.advanceTat).not.toHaveBeenCalled();
    expect(world.dispatch.restartTat).not.toHaveBeenCalled();
    expect(world.dispatch.markIdle).toHaveBeenCalledWith(
      's1',
      'a',
      1,
      expect.objectContaining({ tat: T0 + 1616 }),
    );
    expect(result.nextCallAt).toBe(T0 + 1616);
  });

  it('starts no call at or after the slice deadline, however the rate falls', async () => {
    world = setup({ messages: 10 });
    const starts = recordStarts();
    const result = await runSlice(
      world.deps,
      store,
      policy({ ratePerSecond: 1, maxSliceSeconds: 3 }),
      lease(),
    );
    expect(starts).toEqual([0, 1011, 2021]);
    expect(result.end).toBe('max_time');
  });

  it('yields after delivering tasks that only arrived during the empty check (a trickle does not hold the worker)', async () => {
    let polls = 0;
    (world.tasks.receive as ReturnType<typeof vi.fn>).mockImplementation(async (_url, { waitSeconds }) => {
      polls++;
      // The short poll finds nothing; the long poll catches one task arriving meanwhile.
      return waitSeconds > 0
        ? [{ messageId: 'm', receiptHandle: 'late', body: work(7), receiveCount: 1, sentAt: T0 }]
        : [];
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, delivered: result.delivered, polls, deleted: world.w.deleted }).toEqual({
      end: 'yielded',
      delivered: 1,
      polls: 2,
      deleted: ['late'],
    });
    expect(result.resumeAt).toBeDefined();
  });

  it('ends with error when the receive fails, asking to be looked at again shortly', async () => {
    (world.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('sqs down'));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'error', resumeAt: T0 + 5_000 });
  });

  it('opens one more slot after the first full batch when below the concurrency limit', async () => {
    // 10 ms calls at 1,000/s: ten consumers could be busy, so the plan's limit of 3 is what bounds it.
    world = setup({ messages: 30, callMs: 10 });
    await runSlice(
      world.deps,
      store,
      policy({ maxConcurrentConsumers: 3, maxMessagesPerSlice: 30 }),
      lease(),
    );
    expect(world.dispatch.issueSlot).toHaveBeenCalledTimes(1);
    // Fenced by the lease: a zombie's fan-out is refused (it could put a slot beside a lease pacing alone).
    const { slotId, fence } = lease();
    expect(world.dispatch.issueSlot).toHaveBeenCalledWith('s1', 'new-slot', T0 + 100, 3, T0 + 100, {
      slotId,
      fence,
    });
  });

  it('opens no more slots than the store rate can keep busy (rate × call time + 1)', async () => {
    // 100 ms calls at 10/s: one consumer is busy 100% of the time; a second covers the gaps, a third would only wait.
    world = setup({ messages: 10, callMs: 100 });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 10, ratePerSecond: 10 }), lease());
    expect(world.dispatch.issueSlot.mock.calls[0]?.[3]).toBe(2);
  });

  it('counts the pacer’s writes as work, only its sleep as the rate’s (session 26)', async () => {
    // 20/s, 100 ms calls, each schedule write 100 ms (a loaded table): a lease slower than the interval needs a
    // block a call, so a call takes 200 ms of the lease — five consumers keep the rate busy, not three.
    world = setup({ messages: 10, callMs: 100 });
    type Write = (...args: unknown[]) => unknown;
    const slow =
      (write: Write): Write =>
      async (...args) => {
        world.w.now += 100;
        return write(...args);
      };
    world.dispatch.advanceTat.mockImplementation(
      slow(world.dispatch.advanceTat.getMockImplementation() as Write),
    );
    world.dispatch.restartTat.mockImplementation(
      slow(world.dispatch.restartTat.getMockImplementation() as Write),
    );
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 10, ratePerSecond: 20 }), lease());
    expect(world.dispatch.issueSlot.mock.calls[0]?.[3]).toBe(5);
  });

  it('skips a task already delivered without calling the marketplace', async () => {
    world = setup({ messages: 1 });
    const deliveries = world.deps.deliveries as MemoryDeliveryLog;
    await deliveries.claim('s1', 'e0', { holder: 'earlier', now: T0 - 10, until: T0, messageId: 'other' });
    await deliveries.settle('s1', 'e0', 'earlier', { status: 'delivered', now: T0 - 5, countAttempt: true });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(world.w.calls).toEqual([]);
    expect(world.w.deleted).toEqual(['r0']);
    expect(result.delivered).toBe(0);
  });
});
