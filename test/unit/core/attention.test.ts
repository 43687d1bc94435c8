import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention, type WorkerDeps } from '../../../lambdas/core/attention.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';
import { ENSURE_SLOT } from '../../../lambdas/core/signal.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

/** The worker's decisions around the slice: store state, lease, duplicates, end-of-slice hand-back. */
const T0 = 1_800_000_000_000;
const storeOf = (
  status: StoreStatus = 'active',
  overrides: StoreRecord['overrides'] = undefined,
): StoreRecord => ({
  storeId: 's1',
  tenantId: 't1',
  marketplace: 'amazon',
  plan: 'pro',
  status,
  ...(overrides ? { overrides } : {}),
  queueUrl: 'q',
  deadLetterQueueUrl: 'dlq',
  createdAt: T0,
  updatedAt: T0,
});
const attention = (slotId: string): AttentionMessage => ({
  v: 1,
  storeId: 's1',
  slotId,
  reason: 'ingest',
  issuedAt: T0,
});

describe('handleAttention', () => {
  let dispatch: MemoryDispatchState;
  let published: { message: AttentionMessage; delay: number }[];
  let store: StoreRecord | undefined;
  let backlog: number;
  let telemetry: RecordingTelemetry;
  let deps: WorkerDeps;
  let now: number;

  beforeEach(async () => {
    now = T0;
    dispatch = new MemoryDispatchState();
    await dispatch.recordEnqueued('s1', 1, T0);
    published = [];
    store = storeOf();
    backlog = 0;
    telemetry = new RecordingTelemetry();
    deps = {
      dispatch,
      stores: { get: async () => store, create: vi.fn(), put: vi.fn(), scan: vi.fn() },
      attention: { publish: async (message, delay) => void published.push({ message, delay }) },
      tasks: {
        send: vi.fn(),
        sendBatch: vi.fn(),
        receive: vi.fn(async (_url, { maxMessages }) =>
          Array.from({ length: Math.min(maxMessages, backlog) }, (_, i) => {
            backlog--;
            return {
              messageId: `m${i}`,
              receiptHandle: `r${i}`,
              body: 'not json',
              receiveCount: 1,
              sentAt: T0,
            };
          }),
        ),
        deleteBatch: vi.fn(async () => undefined),
        changeVisibility: vi.fn(async () => undefined),
        deadLetter: vi.fn(async () => undefined),
        resend: vi.fn(async () => undefined),
      },
      marketplace: { deliver: vi.fn() },
      deliveries: new MemoryDeliveryLog(),
      clock: { now: () => now, sleep: async (ms) => void (now += ms) },
      ids: { next: () => `slot-${published.length}` },
      telemetry,
      random: () => 0.5,
      settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
    };
  });

  it.each(['paused', 'maintenance', 'disabled'] as const)(
    'discards the attention of a %s store and drops its slot',
    async (status) => {
      store = storeOf(status);
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'discarded', reason: status });
      expect((await dispatch.read('s1'))?.slots).toEqual({});
      expect(telemetry.total(MetricNames.attentionsDiscarded, { reason: status })).toBe(1);
    },
  );

  it('discards the attention of an unknown store', async () => {
    store = undefined;
    expect(await handleAttention(deps, attention('a'))).toEqual({
      kind: 'discarded',
      reason: 'unknown_store',
    });
  });

  it('discards a duplicate attention whose slot is already leased, without a slice', async () => {
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    await dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
    expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
    expect(deps.tasks.receive).not.toHaveBeenCalled();
  });

  it('re-publishes an attention that arrived before its slot is due, with the remaining delay', async () => {
    await dispatch.issueSlot('s1', 'a', T0 + 1_200_000, 1, T0);
    expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'postponed', until: T0 + 1_200_000 });
    expect(published).toEqual([
      { message: expect.objectContaining({ slotId: 'a', reason: 'requeue' }), delay: 900 },
    ]);
  });

  it('re-publishes an early attention that announces its slot’s due time (SQS delays it 900 s at most)', async () => {
    await dispatch.issueSlot('s1', 'a', T0 + 1_200_000, 1, T0);
    const announced = { ...attention('a'), dueAt: T0 + 1_200_000 };
    expect(await handleAttention(deps, announced)).toEqual({ kind: 'postponed', until: T0 + 1_200_000 });
    expect(published).toEqual([
      { message: expect.objectContaining({ slotId: 'a', dueAt: T0 + 1_200_000 }), delay: 900 },
    ]);
  });

  it('drops an early attention announcing an earlier due time: the slot moved since, with its own attention', async () => {
    // Re-queued to T0 + 60 s after this attention (for T0 + 5 s, a resend or a duplicate) was published.
    await dispatch.issueSlot('s1', 'a', T0 + 60_000, 1, T0);
    const surplus = { ...attention('a'), dueAt: T0 + 5_000 };
    expect(await handleAttention(deps, surplus)).toEqual({ kind: 'discarded', reason: 'stale' });
    expect(published).toEqual([]);
    expect((await dispatch.read('s1'))?.slots['a']).toEqual({ s: 'q', at: T0 + 60_000 });
    expect((await dispatch.read('s1'))?.nDiscarded).toBe(1);
    expect(telemetry.total(MetricNames.attentionsDiscarded, { reason: 'stale' })).toBe(1);
  });

  it('consumes an empty store and leaves it idle: no slot, no active mark, nothing published', async () => {
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    const item = await dispatch.read('s1');
    expect(item?.slots).toEqual({});
    expect(item?.activeShard).toBeUndefined();
    expect(published).toEqual([]);
  });

  it('hands the slot back as a queued attention when the slice hits its message limit', async () => {
    store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
    backlog = 20;
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages', handled: 5 } });
    expect((await dispatch.read('s1'))?.slots['a']).toMatchObject({ s: 'q' });
    expect(published.map((p) => p.message)).toEqual([
      expect.objectContaining({ slotId: 'a', reason: 'requeue' }),
    ]);
  });

  it('after an operational error, keeps the store from going idle until the messages in hand are surely back', async () => {
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    (deps.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('SQS timed out'));
    const outcome = await handleAttention(deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'error' } });
    const item = await dispatch.read('s1');
    // Lease TTL (20 s slice + 5 s call + 10 s margin) + 5 s visibility margin + the wake margin.
    expect(item?.wakeAt).toBe(T0 + 35_000 + 5_000 + WAKE_MARGIN_MS);
    expect(item?.slots['a']).toMatchObject({ s: 'q' });
  });

  it('issues its own slot for a nudge, unless the store already has one', async () => {
    expect(await handleAttention(deps, attention(ENSURE_SLOT))).toMatchObject({ kind: 'sliced' });
    await dispatch.issueSlot('s1', 'other', T0, 1, T0);
    expect(await handleAttention(deps, attention(ENSURE_SLOT))).toEqual({
      kind: 'discarded',
      reason: 'coalesced',
    });
  });

  it('gives up a queued slot held over a lowered concurrency limit', async () => {
    store = storeOf('active', { maxConcurrentConsumers: 1 });
    await dispatch.issueSlot('s1', 'a', T0, 3, T0);
    await dispatch.issueSlot('s1', 'b', T0, 3, T0);
    expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'over_limit' });
    expect(Object.keys((await dispatch.read('s1'))?.slots ?? {})).toEqual(['b']);
  });

  it('keeps a store whose redrive may still be moving from going idle, looking again within 20 s', async () => {
    await dispatch.beginRedrive('s1', T0);
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(deps, attention('a'));
    expect({
      outcome,
      slot: (await dispatch.read('s1'))?.slots['a'],
      active: (await dispatch.read('s1'))?.activeShard !== undefined,
    }).toMatchObject({
      outcome: { kind: 'sliced', slice: { end: 'deferred', idle: false } },
      slot: { s: 'q', at: now + 20_000 },
      active: true,
    });
  });

  describe('errors in a row (issue #10)', () => {
    /** Runs one attention for slot `a` whose receive fails; returns the requeued slot and its publish delay. */
    const failingSlice = async () => {
      (deps.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(
        new Error('queue does not exist'),
      );
      published = [];
      await handleAttention(deps, attention('a'));
      const slot = (await dispatch.read('s1'))?.slots['a'];
      now = slot?.at ?? now;
      return { e: slot?.s === 'q' ? slot.e : undefined, delay: published[0]?.delay };
    };

    it('backs off 5 s doubling to 15 min (jitter at its middle), counting the streak on the slot', async () => {
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const seen = [];
      for (let i = 0; i < 10; i++) seen.push(await failingSlice());
      expect(seen).toEqual([
        { e: 1, delay: 5 },
        { e: 2, delay: 8 },
        { e: 3, delay: 15 },
        { e: 4, delay: 30 },
        { e: 5, delay: 60 },
        { e: 6, delay: 120 },
        { e: 7, delay: 240 },
        { e: 8, delay: 480 },
        { e: 9, delay: 675 },
        { e: 10, delay: 675 },
      ]);
    });

    it('forgets the streak after a slice that did not fail', async () => {
      store = storeOf('active', { maxMessagesPerSlice: 1, maxConcurrentConsumers: 1 });
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await failingSlice();
      await failingSlice();
      backlog = 5;
      await handleAttention(deps, attention('a'));
      expect((await dispatch.read('s1'))?.slots['a']).toEqual(
        expect.not.objectContaining({ e: expect.anything() }),
      );
    });

    it('counts each backoff, and a third error in a row as repeated', async () => {
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      for (let i = 0; i < 4; i++) await failingSlice();
      expect({
        first: telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'first' }),
        repeated: telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'repeated' }),
      }).toEqual({ first: 2, repeated: 2 });
    });
  });

  describe('at its edges (what mutation testing found unpinned)', () => {
    it('postpones an early attention by exactly the time left until its slot is due', async () => {
      await dispatch.issueSlot('s1', 'a', T0 + 60_000, 1, T0);
      expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'postponed', until: T0 + 60_000 });
      expect(published).toEqual([{ message: expect.objectContaining({ slotId: 'a' }), delay: 60 }]);
    });

    it.each([
      { dueIn: 2_000, outcome: { kind: 'discarded', reason: 'over_limit' } },
      { dueIn: 2_001, outcome: { kind: 'postponed', until: T0 + 2_001 } },
    ])(
      'counts a slot due $dueIn ms ahead as early only beyond the clock skew',
      async ({ dueIn, outcome }) => {
        // Over the limit, so the lease is refused whether or not the slot is due.
        store = storeOf('active', { maxConcurrentConsumers: 1 });
        await dispatch.issueSlot('s1', 'a', T0 + dueIn, 3, T0);
        await dispatch.issueSlot('s1', 'b', T0, 3, T0);
        expect(await handleAttention(deps, attention('a'))).toEqual(outcome);
      },
    );

    it('tries the lease twice when its over-limit slot could not be given up, then calls it stale', async () => {
      store = storeOf('active', { maxConcurrentConsumers: 1 });
      await dispatch.issueSlot('s1', 'a', T0, 3, T0);
      await dispatch.issueSlot('s1', 'b', T0, 3, T0);
      const acquire = vi.spyOn(dispatch, 'acquire');
      vi.spyOn(dispatch, 'dropQueued').mockResolvedValue({ ok: false, current: undefined });
      expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
      expect(acquire).toHaveBeenCalledTimes(2);
      expect((await dispatch.read('s1'))?.nDiscarded).toBe(1);
    });

    it('takes the lease on its second try when another slot went away meanwhile', async () => {
      store = storeOf('active', { maxConcurrentConsumers: 1 });
      await dispatch.issueSlot('s1', 'a', T0, 3, T0);
      await dispatch.issueSlot('s1', 'b', T0, 3, T0);
      vi.spyOn(dispatch, 'dropQueued').mockImplementationOnce(async () => {
        await dispatch.dropQueued('s1', 'b');
        return { ok: false, current: undefined };
      });
      expect(await handleAttention(deps, attention('a'))).toMatchObject({ kind: 'sliced' });
    });

    it('still discards when the discard count cannot be written', async () => {
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
      vi.spyOn(dispatch, 'noteDiscarded').mockRejectedValue(new Error('throttled'));
      expect(await handleAttention(deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
    });

    it.each([
      { case: 'unknown', status: undefined },
      { case: 'paused', status: 'paused' as const },
    ])('drops no slot for a nudge to a $case store (the nudge names none)', async ({ status }) => {
      store = status ? storeOf(status) : undefined;
      const drop = vi.spyOn(dispatch, 'dropQueued');
      await handleAttention(deps, attention(ENSURE_SLOT));
      expect(drop).not.toHaveBeenCalled();
    });

    it('drops the named slot of an unknown store', async () => {
      store = undefined;
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(deps, attention('a'));
      expect((await dispatch.read('s1'))?.slots).toEqual({});
    });

    it('records the enqueue ingest could not before slicing a nudge, at the current time', async () => {
      const record = vi.spyOn(dispatch, 'recordEnqueued');
      await handleAttention(deps, attention(ENSURE_SLOT));
      expect(record).toHaveBeenCalledWith('s1', 1, T0);
    });

    it('leases for the slice, the call timeout and the margin, and counts the lease and the slice', async () => {
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const acquire = vi.spyOn(dispatch, 'acquire');
      await handleAttention(deps, attention('a'));
      // pro: 20 s slice + 5 s call timeout + 10 s margin.
      expect(acquire).toHaveBeenCalledWith('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
      expect(telemetry.total(MetricNames.leaseAcquired)).toBe(1);
      expect(telemetry.total(MetricNames.slicesStarted)).toBe(1);
    });

    it('hands a full slice back at once, without guarding the store awake', async () => {
      store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      backlog = 20;
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(deps, attention('a'));
      expect(published.map((p) => p.delay)).toEqual([0]);
      expect((await dispatch.read('s1'))?.wakeAt).toBeUndefined();
    });

    it("carries the attention's correlation id onto the requeued attention", async () => {
      store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      backlog = 20;
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(deps, { ...attention('a'), correlationId: 'req-7' });
      expect(published.map((p) => p.message.correlationId)).toEqual(['req-7']);
    });

    it.each([
      { case: 'still holds its lease', fence: 1, released: true },
      { case: 'lost its lease', fence: 99, released: false },
    ])('releases a slot refused its hand-back only when it $case', async ({ fence, released }) => {
      store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      backlog = 20;
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      vi.spyOn(dispatch, 'requeue').mockResolvedValue({
        ok: false,
        current: { storeId: 's1', enqSeq: 1, slots: { a: { s: 'l', at: T0 + 35_000, f: fence } } } as never,
      });
      const release = vi.spyOn(dispatch, 'release');
      const outcome = await handleAttention(deps, attention('a'));
      expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages' } });
      expect(published).toEqual([]);
      if (released) expect(release).toHaveBeenCalledWith('s1', 'a', fence);
      else expect(release).not.toHaveBeenCalled();
    });

    describe('the first call of a lease keeps the pace the store had', () => {
      const workBody = JSON.stringify({
        v: 1,
        storeId: 's1',
        eventId: 'e1',
        type: 'inventory.update',
        payload: { sku: 'a', quantity: 1 },
        acceptedAt: T0,
      });

      it.each([
        { case: "the slot's carried pace", slot: { n: T0 + 150 }, tat: undefined, firstCallAt: T0 + 150 },
        {
          case: "the store's schedule when the slot carries none",
          slot: {},
          tat: T0 + 100,
          firstCallAt: T0 + 100,
        },
        { case: 'now when the carried pace is past', slot: { n: T0 - 500 }, tat: T0 + 100, firstCallAt: T0 },
      ])('starts at $case', async ({ slot, tat, firstCallAt }) => {
        store = storeOf('active', { maxConcurrentConsumers: 1, ratePerSecond: 5 });
        dispatch.items.set('s1', {
          ...(await dispatch.read('s1'))!,
          slots: { a: { s: 'q', at: T0, ...slot } },
          ...(tat === undefined ? {} : { tat }),
        });
        let sent = false;
        deps.tasks.receive = vi.fn(async () => {
          if (sent) return [];
          sent = true;
          return [{ messageId: 'm1', receiptHandle: 'r1', body: workBody, receiveCount: 1, sentAt: T0 }];
        });
        const calls: number[] = [];
        deps.marketplace.deliver = vi.fn(async () => {
          calls.push(now);
          return { kind: 'ok' as const, status: 200 };
        });
        await handleAttention(deps, attention('a'));
        expect(calls).toEqual([firstCallAt]);
      });
    });
  });
});
