import { describe, expect, it, vi } from 'vitest';
import type { DeliveryOutcome } from '../../../lambdas/core/ports.js';
import { ERROR_RETRY_MS, errorBackoffMs, MAX_ERROR_RETRY_MS, runSlice } from '../../../lambdas/core/slice.js';
import { MAX_DELAY_SECONDS, WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import type { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { item, lease, policy, setup, store, T0 } from '../support/slice-world.js';

/** Which result a slice ends with, and what it carries to the next one (attention requeues on it). */
const throttledOn =
  (eventId: string, retryAfterSeconds: number) =>
  (id: string): DeliveryOutcome =>
    id === eventId ? { kind: 'throttled', status: 429, retryAfterSeconds } : { kind: 'ok', status: 200 };

describe('errorBackoffMs', () => {
  it('waits 5 s after a first error, doubling with each one in a row, half of it jittered', () => {
    expect(
      [0, 1, 2, 3].map((streak) => [errorBackoffMs(streak, () => 0), errorBackoffMs(streak, () => 1)]),
    ).toEqual([
      [ERROR_RETRY_MS / 2, ERROR_RETRY_MS],
      [ERROR_RETRY_MS / 2, ERROR_RETRY_MS],
      [ERROR_RETRY_MS, 2 * ERROR_RETRY_MS],
      [2 * ERROR_RETRY_MS, 4 * ERROR_RETRY_MS],
    ]);
  });

  it('never waits longer than SQS’s longest delay', () => {
    expect([errorBackoffMs(30, () => 1), errorBackoffMs(30, () => 0)]).toEqual([
      MAX_ERROR_RETRY_MS,
      MAX_ERROR_RETRY_MS / 2,
    ]);
  });
});

describe('a slice’s result', () => {
  it('of a drained store: idle, its counts, the pace to carry, the oldest task’s send time', async () => {
    const world = setup({ messages: 2 });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toEqual({
      end: 'empty',
      handled: 2,
      delivered: 2,
      deadLettered: 0,
      idle: true,
      // Calls at T0 and T0 + 2 (1.011 ms apart at 1,000/s, slept to the whole millisecond): the next is due at
      // T0 + 2.022, carried rounded up.
      nextCallAt: T0 + 3,
      headSentAt: T0 - 1_000,
    });
  });

  it('of a failed receive: an error, looked at again after 5 s, its messages possibly hidden for the lease and margin', async () => {
    const world = setup();
    vi.mocked(world.tasks.receive).mockRejectedValueOnce(new Error('SQS unavailable'));
    // 35.5 s of lease left: the receive asks 36 s + the 5 s margin, whole seconds rounded up.
    const result = await runSlice(world.deps, store, policy(), lease({ expiresAt: T0 + 35_500 }));
    expect(vi.mocked(world.tasks.receive).mock.calls[0]?.[1].visibilitySeconds).toBe(41);
    expect(result).toEqual({
      end: 'error',
      handled: 0,
      delivered: 0,
      deadLettered: 0,
      idle: false,
      nextCallAt: T0,
      resumeAt: T0 + ERROR_RETRY_MS,
      hiddenUntil: T0 + 41_000,
    });
  });

  it("of a throttle re-send that failed: an error whose guard covers the copies' delay from when it failed", async () => {
    // A 120 s Retry-After outlasts the receive's hiding (lease + margin): the copies, if SQS took them before the
    // answer was lost, stay hidden until 120 s after the re-send, and the error end must guard that long.
    const world = setup({ messages: 1, outcome: throttledOn('e0', 120) });
    let resentAt = 0;
    vi.mocked(world.tasks.resend).mockImplementationOnce(async () => {
      resentAt = world.deps.clock.now();
      throw new Error('SQS unavailable');
    });
    const result = await runSlice(world.deps, store, policy(), lease({ expiresAt: T0 + 35_500 }));
    expect(resentAt).toBeGreaterThan(0);
    expect({ end: result.end, hiddenUntil: result.hiddenUntil }).toEqual({
      end: 'error',
      hiddenUntil: resentAt + 120_000,
    });
  });

  it('of a store held for a 429: no hidden-until or Retry-After fields outside an error', async () => {
    const world = setup({ messages: 1, outcome: throttledOn('e0', 30) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toEqual({
      end: 'throttled',
      handled: 1,
      delivered: 0,
      deadLettered: 0,
      idle: false,
      resumeAt: T0 + 30_000,
      nextCallAt: T0 + 30_000,
      headSentAt: T0 - 1_000,
    });
  });

  it('of a trickle: yields, to be looked at again at once', async () => {
    const world = setup();
    let polls = 0;
    vi.mocked(world.tasks.receive).mockImplementation(async (_url, { waitSeconds }) => {
      polls++;
      if (waitSeconds === 0) return [];
      world.w.now += 700;
      return [{ messageId: 'm', receiptHandle: 'late', body: '{"v":1}', receiveCount: 1, sentAt: T0 }];
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, resumeAt: result.resumeAt, polls }).toEqual({
      end: 'yielded',
      resumeAt: T0 + 700,
      polls: 2,
    });
  });

  it('of a stalled host (five late wake-ups in a row): `stalled`, the rest handed back, looked at again at once', async () => {
    const world = setup({ messages: 3 });
    // Every sleep overshoots by a second: the shared pacer's instants (2/s, two consumers) are all overslept.
    world.deps.clock.sleep = async (ms) => {
      world.w.now += ms + 1_000;
    };
    const result = await runSlice(
      world.deps,
      store,
      policy({ maxConcurrentConsumers: 2, ratePerSecond: 2 }),
      lease(),
    );
    expect({
      end: result.end,
      resumeAt: result.resumeAt,
      calls: world.w.calls,
      back: world.w.visibility,
    }).toEqual({
      end: 'stalled',
      resumeAt: world.w.now,
      calls: ['e0'],
      back: [
        { receiptHandle: 'r1', seconds: 0 },
        { receiptHandle: 'r2', seconds: 0 },
      ],
    });
  });

  it('ends at the deadline reached between batches, looking again at once', async () => {
    const world = setup({ messages: 3, callMs: 1_000 });
    const result = await runSlice(world.deps, store, policy({ maxSliceSeconds: 3 }), lease());
    expect({ end: result.end, resumeAt: result.resumeAt, handled: result.handled }).toEqual({
      end: 'max_time',
      resumeAt: T0 + 3_000,
      handled: 3,
    });
  });

  it('ends at the deadline reached within a batch: the rest handed back unclaimed, looking again at once', async () => {
    const world = setup({ messages: 5, callMs: 1_000 });
    const result = await runSlice(world.deps, store, policy({ maxSliceSeconds: 3 }), lease());
    const deliveries = world.deps.deliveries as MemoryDeliveryLog;
    expect({
      end: result.end,
      resumeAt: result.resumeAt,
      handedBack: world.w.visibility.map((v) => v.receiptHandle),
      claimed: await Promise.all(
        ['e2', 'e3', 'e4'].map(async (e) => (await deliveries.get('s1', e))?.status),
      ),
    }).toEqual({
      end: 'max_time',
      resumeAt: T0 + 3_000,
      handedBack: ['r3', 'r4'],
      claimed: ['delivered', undefined, undefined],
    });
  });

  it('receives no more than it can call before its deadline, and looks again when the next call may start', async () => {
    const world = setup({ messages: 10 });
    const result = await runSlice(
      world.deps,
      store,
      policy({ ratePerSecond: 1, maxSliceSeconds: 2.5 }),
      lease(),
    );
    // Calls at 0, 1.011 and 2.021 s (1/s, stretched for the 5 s window) fit a 2.5 s slice: three messages
    // received, not ten; then one (a call may still fit).
    expect({
      receives: world.w.receives,
      calls: world.w.calls,
      end: result.end,
      resumeAt: result.resumeAt,
      handedBack: world.w.visibility,
    }).toEqual({
      receives: [3, 1],
      calls: ['e0', 'e1', 'e2'],
      end: 'max_time',
      resumeAt: T0 + 3_031,
      handedBack: [{ receiptHandle: 'r3', seconds: 0 }],
    });
  });

  it('receives no more than its share of a several-consumer store’s rate lets it call before the deadline', async () => {
    const world = setup({ messages: 10 });
    // 2/s shared by two consumers: one call a second for this lease, so three in 2.5 s.
    await runSlice(
      world.deps,
      store,
      policy({ ratePerSecond: 2, maxConcurrentConsumers: 2, maxSliceSeconds: 2.5 }),
      lease({ slotsAtStart: 2 }),
    );
    expect(world.w.receives[0]).toBe(3);
  });

  it('re-sends the messages of a store held past SQS’s longest delay with that delay', async () => {
    const world = setup({ messages: 1 });
    world.w.tat = T0 + 20 * 60_000; // another consumer was told a 20-minute Retry-After
    const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({ end: result.end, resumeAt: result.resumeAt, resent: world.w.resent }).toEqual({
      end: 'throttled',
      resumeAt: T0 + MAX_DELAY_SECONDS * 1_000,
      resent: [{ receiptHandle: 'r0', delay: MAX_DELAY_SECONDS }],
    });
  });
});

describe('an operational error in a task', () => {
  it('ends the slice as an error after settling and deleting what was delivered; the failed task’s message stays', async () => {
    const world = setup({ messages: 3 });
    const deliveries = world.deps.deliveries as MemoryDeliveryLog;
    const claim = deliveries.claim.bind(deliveries);
    deliveries.claim = async (storeId, eventId, opts) => {
      if (eventId === 'e1') throw new Error('DynamoDB unavailable');
      return claim(storeId, eventId, opts);
    };
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({
      end: result.end,
      resumeAt: result.resumeAt,
      delivered: result.delivered,
      deleted: world.w.deleted,
      calls: world.w.calls,
      e0: (await deliveries.get('s1', 'e0'))?.status,
      handedBack: world.w.visibility,
    }).toEqual({
      end: 'error',
      resumeAt: T0 + ERROR_RETRY_MS,
      delivered: 1,
      deleted: ['r0'],
      calls: ['e0'],
      e0: 'delivered',
      handedBack: [],
    });
  });

  it('ends the slice as an error when handing messages back at the deadline fails, the delivered ones settled', async () => {
    const world = setup({ messages: 2, callMs: 3_000 });
    vi.mocked(world.tasks.changeVisibility).mockRejectedValue(new Error('SQS unavailable'));
    const result = await runSlice(world.deps, store, policy({ maxSliceSeconds: 3 }), lease());
    expect({ end: result.end, resumeAt: result.resumeAt, deleted: world.w.deleted }).toEqual({
      end: 'error',
      resumeAt: T0 + 3_000 + ERROR_RETRY_MS,
      deleted: ['r0'],
    });
  });
});

describe('sleeping through a short Retry-After', () => {
  it.each([
    ['fit the slice', 3, ['e0', 'e0', 'e1'], 'max_messages'],
    ['would pass maxMessagesPerSlice', 2, ['e0'], 'throttled'],
  ])('only while the batch’s calls with the 429 %s', async (_, max, calls, end) => {
    const world = setup({
      messages: 2,
      outcome: (id) =>
        id === 'e0' && world.w.calls.length === 1
          ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 }
          : { kind: 'ok', status: 200 },
    });
    const result = await runSlice(world.deps, store, policy({ maxMessagesPerSlice: max }), lease());
    expect({ calls: world.w.calls, end: result.end }).toEqual({ calls, end });
  });

  it('counts the calls left in the batch from the throttled task on', async () => {
    const world = setup({
      messages: 2,
      outcome: (id) =>
        id === 'e1' && world.w.calls.length === 2
          ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 }
          : { kind: 'ok', status: 200 },
    });
    // e0, the 429 and e1 again: three calls, within maxMessagesPerSlice.
    const result = await runSlice(world.deps, store, policy({ maxMessagesPerSlice: 3 }), lease());
    expect({ calls: world.w.calls, end: result.end }).toEqual({
      calls: ['e0', 'e1', 'e1'],
      end: 'max_messages',
    });
  });

  it('sleeps through a 429 again once a call in between was answered (only two in a row end the slice)', async () => {
    const answers: DeliveryOutcome[] = [
      { kind: 'throttled', status: 429, retryAfterSeconds: 1 },
      { kind: 'ok', status: 200 },
      { kind: 'throttled', status: 429, retryAfterSeconds: 1 },
    ];
    const world = setup({ messages: 2, outcome: () => answers.shift() ?? { kind: 'ok', status: 200 } });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ calls: world.w.calls, end: result.end, delivered: result.delivered }).toEqual({
      calls: ['e0', 'e0', 'e1', 'e1'],
      end: 'empty',
      delivered: 2,
    });
  });

  it('calls the task again only once the Retry-After has passed, holding the store until then', async () => {
    const starts: number[] = [];
    const world = setup({
      messages: 1,
      outcome: () => {
        starts.push(world.w.now);
        return starts.length === 1
          ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 }
          : { kind: 'ok', status: 200 };
      },
    });
    await runSlice(world.deps, store, policy(), lease());
    expect({ starts, holds: world.dispatch.holdTat.mock.calls.map((c) => c[1]) }).toEqual({
      starts: [T0, T0 + 1_000],
      holds: [T0 + 1_000],
    });
  });
});

describe('a task to retry later', () => {
  it('forbids idle until its message is visible again (and the margin), then hides it for its backoff', async () => {
    const world = setup({
      messages: 1,
      outcome: () => ({ kind: 'transient', status: 503, error: 'x' }),
      callMs: 100,
    });
    await runSlice(world.deps, store, policy(), lease());
    expect({
      guard: world.dispatch.deferWake.mock.calls.map((c) => c[1]),
      hidden: world.w.visibility,
    }).toEqual({ guard: [T0 + 100 + 1_000 + WAKE_MARGIN_MS], hidden: [{ receiptHandle: 'r0', seconds: 1 }] });
  });

  it('guards again from when a stalled hiding call came back (its backoff counts from then)', async () => {
    const world = setup({ messages: 1, outcome: () => ({ kind: 'transient', status: 503, error: 'x' }) });
    vi.mocked(world.tasks.changeVisibility).mockImplementation(async () => {
      world.w.now += 10_000;
    });
    await runSlice(world.deps, store, policy(), lease());
    expect(world.dispatch.deferWake.mock.calls.map((c) => c[1])).toEqual([
      T0 + 1_000 + WAKE_MARGIN_MS,
      T0 + 10_000 + 1_000 + WAKE_MARGIN_MS,
    ]);
  });
});

describe('fan-out after a full batch', () => {
  it.each([
    ['the store already had its consumers when the lease was taken', 10, 3, 3, false],
    ['the batch was not full', 9, 1, 3, false],
  ])('opens no slot when %s', async (_, messages, slotsAtStart, max) => {
    const world = setup({ messages, callMs: 10 });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: max }), lease({ slotsAtStart }));
    expect(world.dispatch.issueSlot).not.toHaveBeenCalled();
  });

  it('opens no slot for a full batch of tasks that needed no call (already delivered)', async () => {
    const world = setup({ messages: 10 });
    const deliveries = world.deps.deliveries as MemoryDeliveryLog;
    for (let i = 0; i < 10; i++) {
      await deliveries.claim('s1', `e${i}`, { holder: 'earlier', now: T0 - 10, until: T0, messageId: 'x' });
      await deliveries.settle('s1', `e${i}`, 'earlier', {
        status: 'delivered',
        now: T0 - 5,
        countAttempt: true,
      });
    }
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({ deleted: world.w.deleted.length, slots: world.dispatch.issueSlot.mock.calls.length }).toEqual({
      deleted: 10,
      slots: 0,
    });
  });

  it.each([
    // A 20 ms call at 6/s: about 0.1 of a consumer's time — but the claim around it takes 150 ms, so one
    // consumer sends ~6 a second at most: the task's whole time counts, two more consumers (limit 3).
    { name: 'the claim and settles around the call', rate: 6, claimMs: 150, limit: 3 },
    { name: 'nothing but the call', rate: 6, claimMs: 0, limit: 2 },
    // Another consumer's instants hold the schedule 3 s ahead: the first task waits 3 s for its instant, the
    // others 250 ms each. Waiting is not work: one more consumer only (4 if the waits counted).
    { name: 'the call, not the pacing wait', rate: 4, claimMs: 0, limit: 2, aheadMs: 3_000 },
  ])(
    'sizes the store’s consumers by the time its tasks take: $name',
    async ({ rate, claimMs, limit, aheadMs }) => {
      const world = setup({ messages: 10, callMs: 20 });
      if (aheadMs !== undefined) world.w.tat = T0 + aheadMs;
      const deliveries = world.deps.deliveries as MemoryDeliveryLog;
      const claim = deliveries.claim.bind(deliveries);
      vi.spyOn(deliveries, 'claim').mockImplementation(async (...args) => {
        world.w.now += claimMs;
        return claim(...args);
      });
      await runSlice(
        world.deps,
        store,
        policy({ maxConcurrentConsumers: 5, ratePerSecond: rate }),
        lease({ slotsAtStart: 1 }),
      );
      expect(world.dispatch.issueSlot.mock.calls.map((c) => c[3])).toEqual([limit]);
    },
  );

  it('asks for the slot with an attention at the store’s priority, reason fanout', async () => {
    const world = setup({ messages: 10, callMs: 10 });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3, priority: 'high' }), lease());
    expect(vi.mocked(world.deps.attention.publish).mock.calls.map((c) => c[0])).toEqual([
      {
        v: 1,
        storeId: 's1',
        slotId: 'new-slot',
        reason: 'fanout',
        issuedAt: T0 + 100,
        priority: 'high',
        dueAt: T0 + 100,
      },
    ]);
  });

  it.each([
    // Ten 3 s calls do not fit a 20 s slice: waiting for the batch's end, the store never got a second consumer.
    // Not after one call (a cold first call would overstate the need): after two.
    { callMs: 3_000, after: 2 },
    { callMs: 400, after: 3 },
    // Exactly a second of work in two calls.
    { callMs: 500, after: 2 },
    // Fast calls: after the batch, as the batch's calls measure the task time best.
    { callMs: 99, after: 10 },
  ])(
    'fans out a slow store as soon as a second of work shows it ($callMs ms calls: after $after)',
    async ({ callMs, after }) => {
      const world = setup({ messages: 10, callMs });
      let callsAtFanOut: number | undefined;
      world.dispatch.issueSlot.mockImplementation(async () => {
        callsAtFanOut = world.w.calls.length;
        return { ok: true, item: item() };
      });
      await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
      expect(callsAtFanOut).toBe(after);
      expect(world.dispatch.issueSlot).toHaveBeenCalledTimes(1);
    },
  );

  it.each([
    ['timeouts', { kind: 'transient', error: 'timeout' }],
    ['429s', { kind: 'throttled', status: 429, retryAfterSeconds: 1 }],
    ['permanent refusals (dead-lettered)', { kind: 'permanent', status: 400, error: 'bad payload' }],
  ] as const)('does not fan out early on slow %s: calls that deliver nothing', async (_what, failure) => {
    const world = setup({ messages: 10, callMs: 3_000, outcome: () => failure as DeliveryOutcome });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect(world.dispatch.issueSlot).not.toHaveBeenCalled();
  });

  it('opens one slot per slice, and a failed fan-out does not end the slice', async () => {
    const world = setup({ messages: 30, callMs: 10 });
    world.dispatch.issueSlot.mockRejectedValue(new Error('DynamoDB unavailable'));
    const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({
      end: result.end,
      delivered: result.delivered,
      slots: world.dispatch.issueSlot.mock.calls.length,
    }).toEqual({ end: 'empty', delivered: 30, slots: 1 });
  });
});

describe('a multi-consumer slice’s blocks', () => {
  it('reach at most the wait for a normal instant over the cap, so the cap’s blocks stacked fit it', async () => {
    const world = setup({ messages: 10 });
    // 3/s, three consumers: a call waits up to max(1 s, 2 × 3 × 340 ms) + 2 s ≈ 4.04 s for a normal instant, so one
    // lease's block reaches 1.35 s: 4 instants at 340 ms, not the 10 in hand (3.4 s; three such blocks, 10.2 s).
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3, ratePerSecond: 3 }), lease());
    expect(world.dispatch.restartTat.mock.calls[0]?.[3]).toBe(4);
  });
});
