import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { LATENESS_CEILING_MS } from '../../../lambdas/core/rate.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';
import { ENSURE_SLOT } from '../../../lambdas/core/signal.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { attentionFor, workerWorld, proStore, T0, type WorkerWorld } from '../support/attention-world.js';
import { work } from '../support/slice-fixtures.js';

/** The worker's decisions around the slice: store state, lease, duplicates, end-of-slice hand-back. */
const storeOf = (status: StoreStatus = 'active', overrides: StoreRecord['overrides'] = undefined) =>
  proStore(overrides, status);
const attention = attentionFor;

describe('handleAttention', () => {
  let w: WorkerWorld;

  beforeEach(async () => {
    // Bodies that are not JSON: these tests look at the lease and the hand-back, not at deliveries.
    w = await workerWorld({
      task: (_n, i) => ({
        messageId: `m${i}`,
        receiptHandle: `r${i}`,
        body: 'not json',
        receiveCount: 1,
        sentAt: T0,
      }),
    });
    w.deps.ids = { next: () => `slot-${w.published.length}` };
  });

  it.each(['paused', 'maintenance', 'disabled'] as const)(
    'discards the attention of a %s store and drops its slot',
    async (status) => {
      w.store = storeOf(status);
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      expect(await handleAttention(w.deps, attention('a'))).toEqual({ kind: 'discarded', reason: status });
      expect((await w.dispatch.read('s1'))?.slots).toEqual({});
      expect(w.telemetry.total(MetricNames.attentionsDiscarded, { reason: status })).toBe(1);
    },
  );

  describe('a resume racing the drop of a paused store’s slot', () => {
    it('signals the store when the resume landed between its read and the drop (the resume coalesced against the slot)', async () => {
      w.store = storeOf('paused');
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const drop = w.dispatch.dropQueued.bind(w.dispatch);
      let resumeIssued: boolean | undefined;
      w.dispatch.dropQueued = async (...args) => {
        // The operator's resume: the store active, then its signal, which finds slot `a` still queued.
        w.store = storeOf('active');
        resumeIssued = (await w.dispatch.issueSlot('s1', 'resume-slot', T0, 1, T0)).ok;
        return drop(...args);
      };
      expect(await handleAttention(w.deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'paused' });
      expect({
        resumeIssued,
        slots: Object.keys((await w.dispatch.read('s1'))?.slots ?? {}),
        published: w.published.map((p) => [p.message.slotId, p.message.reason]),
      }).toEqual({ resumeIssued: false, slots: ['slot-0'], published: [['slot-0', 'resume']] });
    });

    it('signals nothing when the store is still paused after the drop, and reads it once more', async () => {
      w.store = storeOf('paused');
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const get = vi.spyOn(w.deps.stores, 'get');
      await handleAttention(w.deps, attention('a'));
      expect({ reads: get.mock.calls.length, published: w.published.length }).toEqual({
        reads: 2,
        published: 0,
      });
    });

    it('reads nothing more when the drop took no slot (already gone: no resume coalesced against it)', async () => {
      w.store = storeOf('paused');
      const get = vi.spyOn(w.deps.stores, 'get');
      await handleAttention(w.deps, attention('a'));
      expect({ reads: get.mock.calls.length, published: w.published.length }).toEqual({
        reads: 1,
        published: 0,
      });
    });
  });

  it('discards the attention of an unknown store', async () => {
    w.store = undefined;
    expect(await handleAttention(w.deps, attention('a'))).toEqual({
      kind: 'discarded',
      reason: 'unknown_store',
    });
  });

  it('discards a duplicate attention whose slot is already leased, without a slice', async () => {
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    await w.dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
    expect(await handleAttention(w.deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
    expect(w.deps.tasks.receive).not.toHaveBeenCalled();
  });

  it('re-publishes an attention that arrived before its slot is due, with the remaining delay', async () => {
    await w.dispatch.issueSlot('s1', 'a', T0 + 1_200_000, 1, T0);
    expect(await handleAttention(w.deps, attention('a'))).toEqual({
      kind: 'postponed',
      until: T0 + 1_200_000,
    });
    expect(w.published).toEqual([
      { message: expect.objectContaining({ slotId: 'a', reason: 'requeue' }), delay: 900 },
    ]);
  });

  it('re-publishes an early attention that announces its slot’s due time (SQS delays it 900 s at most)', async () => {
    await w.dispatch.issueSlot('s1', 'a', T0 + 1_200_000, 1, T0);
    const announced = { ...attention('a'), dueAt: T0 + 1_200_000 };
    expect(await handleAttention(w.deps, announced)).toEqual({ kind: 'postponed', until: T0 + 1_200_000 });
    expect(w.published).toEqual([
      { message: expect.objectContaining({ slotId: 'a', dueAt: T0 + 1_200_000 }), delay: 900 },
    ]);
  });

  it('drops an early attention announcing an earlier due time: the slot moved since, with its own attention', async () => {
    // Re-queued to T0 + 60 s after this attention (for T0 + 5 s, a resend or a duplicate) was published.
    await w.dispatch.issueSlot('s1', 'a', T0 + 60_000, 1, T0);
    const surplus = { ...attention('a'), dueAt: T0 + 5_000 };
    expect(await handleAttention(w.deps, surplus)).toEqual({ kind: 'discarded', reason: 'stale' });
    expect(w.published).toEqual([]);
    expect((await w.dispatch.read('s1'))?.slots['a']).toEqual({ s: 'q', at: T0 + 60_000 });
    expect((await w.dispatch.read('s1'))?.nDiscarded).toBe(1);
    expect(w.telemetry.total(MetricNames.attentionsDiscarded, { reason: 'stale' })).toBe(1);
  });

  it('consumes an empty store and leaves it idle: no slot, no active mark, nothing published', async () => {
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(w.deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    const item = await w.dispatch.read('s1');
    expect(item?.slots).toEqual({});
    expect(item?.activeShard).toBeUndefined();
    expect(w.published).toEqual([]);
  });

  it('hands the slot back as a queued attention when the slice hits its message limit', async () => {
    w.store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
    w.backlog = 20;
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(w.deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages', handled: 5 } });
    expect((await w.dispatch.read('s1'))?.slots['a']).toMatchObject({ s: 'q' });
    expect(w.published.map((p) => p.message)).toEqual([
      expect.objectContaining({ slotId: 'a', reason: 'requeue' }),
    ]);
  });

  it('after an operational error, keeps the store from going idle until the messages in hand are surely back', async () => {
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    (w.deps.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('SQS timed out'));
    const outcome = await handleAttention(w.deps, attention('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'error' } });
    const item = await w.dispatch.read('s1');
    // Lease TTL (20 s slice + 5 s call + 10 s margin) + 5 s visibility margin + the wake margin.
    expect(item?.wakeAt).toBe(T0 + 35_000 + 5_000 + WAKE_MARGIN_MS);
    expect(item?.slots['a']).toMatchObject({ s: 'q' });
  });

  it('issues its own slot for a nudge, unless the store already has one', async () => {
    expect(await handleAttention(w.deps, attention(ENSURE_SLOT))).toMatchObject({ kind: 'sliced' });
    await w.dispatch.issueSlot('s1', 'other', T0, 1, T0);
    expect(await handleAttention(w.deps, attention(ENSURE_SLOT))).toEqual({
      kind: 'discarded',
      reason: 'coalesced',
    });
  });

  it('gives up a queued slot held over a lowered concurrency limit', async () => {
    w.store = storeOf('active', { maxConcurrentConsumers: 1 });
    await w.dispatch.issueSlot('s1', 'a', T0, 3, T0);
    await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
    expect(await handleAttention(w.deps, attention('a'))).toEqual({
      kind: 'discarded',
      reason: 'over_limit',
    });
    expect(Object.keys((await w.dispatch.read('s1'))?.slots ?? {})).toEqual(['b']);
  });

  it('keeps a store whose redrive may still be moving from going idle, looking again within 20 s', async () => {
    await w.dispatch.beginRedrive('s1', T0);
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const outcome = await handleAttention(w.deps, attention('a'));
    expect({
      outcome,
      slot: (await w.dispatch.read('s1'))?.slots['a'],
      active: (await w.dispatch.read('s1'))?.activeShard !== undefined,
    }).toMatchObject({
      outcome: { kind: 'sliced', slice: { end: 'deferred', idle: false } },
      slot: { s: 'q', at: w.now + 20_000 },
      active: true,
    });
  });

  describe('errors in a row (issue #10)', () => {
    /** Runs one attention for slot `a` whose receive fails; returns the requeued slot and its publish delay. */
    const failingSlice = async () => {
      (w.deps.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(
        new Error('queue does not exist'),
      );
      w.published.length = 0;
      await handleAttention(w.deps, attention('a'));
      const slot = (await w.dispatch.read('s1'))?.slots['a'];
      w.now = slot?.at ?? w.now;
      return { e: slot?.s === 'q' ? slot.e : undefined, delay: w.published[0]?.delay };
    };

    it('backs off 5 s doubling to 15 min (jitter at its middle), counting the streak on the slot', async () => {
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
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
      w.store = storeOf('active', { maxMessagesPerSlice: 1, maxConcurrentConsumers: 1 });
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await failingSlice();
      await failingSlice();
      w.backlog = 5;
      await handleAttention(w.deps, attention('a'));
      expect((await w.dispatch.read('s1'))?.slots['a']).toEqual(
        expect.not.objectContaining({ e: expect.anything() }),
      );
    });

    it('counts each backoff, and a third error in a row as repeated', async () => {
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      for (let i = 0; i < 4; i++) await failingSlice();
      expect({
        first: w.telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'first' }),
        repeated: w.telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'repeated' }),
      }).toEqual({ first: 2, repeated: 2 });
    });

    it('counts the third error in a row as the first repeated one, and warns with the streak and the next look', async () => {
      const warnings: LogRecord[] = [];
      const telemetry = new RecordingTelemetry((record) => void warnings.push(record), 'warn');
      w.deps.telemetry = telemetry;
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      for (let i = 0; i < 3; i++) await failingSlice();
      expect({
        first: telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'first' }),
        repeated: telemetry.total(MetricNames.sliceErrorBackoff, { streak: 'repeated' }),
        // The third: due 15 s after its end (5 s doubling, jitter at its middle).
        backoff: warnings
          .filter((l) => l.message === 'store backs off after slice errors')
          .map((l) => ({ errorStreak: l.fields?.['errorStreak'], resumeAt: l.fields?.['resumeAt'] })),
      }).toEqual({
        first: 2,
        repeated: 1,
        backoff: [
          { errorStreak: 1, resumeAt: T0 + 5_000 },
          { errorStreak: 2, resumeAt: T0 + 5_000 + 7_500 },
          { errorStreak: 3, resumeAt: T0 + 5_000 + 7_500 + 15_000 },
        ],
      });
    });
  });

  describe('at its edges (what mutation testing found unpinned)', () => {
    it('postpones an early attention by exactly the time left until its slot is due', async () => {
      await w.dispatch.issueSlot('s1', 'a', T0 + 60_000, 1, T0);
      expect(await handleAttention(w.deps, attention('a'))).toEqual({
        kind: 'postponed',
        until: T0 + 60_000,
      });
      expect(w.published).toEqual([{ message: expect.objectContaining({ slotId: 'a' }), delay: 60 }]);
    });

    it.each([
      { dueIn: 2_000, outcome: { kind: 'discarded', reason: 'over_limit' } },
      { dueIn: 2_001, outcome: { kind: 'postponed', until: T0 + 2_001 } },
    ])(
      'counts a slot due $dueIn ms ahead as early only beyond the clock skew',
      async ({ dueIn, outcome }) => {
        // Over the limit, so the lease is refused whether or not the slot is due.
        w.store = storeOf('active', { maxConcurrentConsumers: 1 });
        await w.dispatch.issueSlot('s1', 'a', T0 + dueIn, 3, T0);
        await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
        expect(await handleAttention(w.deps, attention('a'))).toEqual(outcome);
      },
    );

    it('tries the lease twice when its over-limit slot could not be given up, then calls it stale', async () => {
      w.store = storeOf('active', { maxConcurrentConsumers: 1 });
      await w.dispatch.issueSlot('s1', 'a', T0, 3, T0);
      await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
      const acquire = vi.spyOn(w.dispatch, 'acquire');
      vi.spyOn(w.dispatch, 'dropQueued').mockResolvedValue({ ok: false, current: undefined });
      expect(await handleAttention(w.deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
      expect(acquire).toHaveBeenCalledTimes(2);
      expect((await w.dispatch.read('s1'))?.nDiscarded).toBe(1);
    });

    it('takes the lease on its second try when another slot went away meanwhile', async () => {
      w.store = storeOf('active', { maxConcurrentConsumers: 1 });
      await w.dispatch.issueSlot('s1', 'a', T0, 3, T0);
      await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
      vi.spyOn(w.dispatch, 'dropQueued').mockImplementationOnce(async () => {
        await w.dispatch.dropQueued('s1', 'b');
        return { ok: false, current: undefined };
      });
      expect(await handleAttention(w.deps, attention('a'))).toMatchObject({ kind: 'sliced' });
    });

    it('still discards when the discard count cannot be written', async () => {
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await w.dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
      vi.spyOn(w.dispatch, 'noteDiscarded').mockRejectedValue(new Error('throttled'));
      expect(await handleAttention(w.deps, attention('a'))).toEqual({ kind: 'discarded', reason: 'stale' });
    });

    it.each([
      { case: 'unknown', status: undefined },
      { case: 'paused', status: 'paused' as const },
    ])('drops no slot for a nudge to a $case store (the nudge names none)', async ({ status }) => {
      w.store = status ? storeOf(status) : undefined;
      const drop = vi.spyOn(w.dispatch, 'dropQueued');
      await handleAttention(w.deps, attention(ENSURE_SLOT));
      expect(drop).not.toHaveBeenCalled();
    });

    it('drops the named slot of an unknown store', async () => {
      w.store = undefined;
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(w.deps, attention('a'));
      expect((await w.dispatch.read('s1'))?.slots).toEqual({});
    });

    it('records the enqueue ingest could not before slicing a nudge, at the current time', async () => {
      const record = vi.spyOn(w.dispatch, 'recordEnqueued');
      await handleAttention(w.deps, attention(ENSURE_SLOT));
      expect(record).toHaveBeenCalledWith('s1', 1, T0);
    });

    it('leases for the slice, the call timeout and the margin, and counts the lease and the slice', async () => {
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const acquire = vi.spyOn(w.dispatch, 'acquire');
      await handleAttention(w.deps, attention('a'));
      // pro: 20 s slice + 5 s call timeout + 10 s margin.
      expect(acquire).toHaveBeenCalledWith('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 3 });
      expect(w.telemetry.total(MetricNames.leaseAcquired)).toBe(1);
      expect(w.telemetry.total(MetricNames.slicesStarted)).toBe(1);
    });

    it('hands a full slice back at once, without guarding the store awake', async () => {
      w.store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      w.backlog = 20;
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(w.deps, attention('a'));
      expect(w.published.map((p) => p.delay)).toEqual([0]);
      expect((await w.dispatch.read('s1'))?.wakeAt).toBeUndefined();
    });

    it("carries the attention's correlation id onto the requeued attention", async () => {
      w.store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      w.backlog = 20;
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      await handleAttention(w.deps, { ...attention('a'), correlationId: 'req-7' });
      expect(w.published.map((p) => p.message.correlationId)).toEqual(['req-7']);
    });

    it.each([
      { case: 'still holds its lease', fence: 1, released: true },
      { case: 'lost its lease', fence: 99, released: false },
    ])('releases a slot refused its hand-back only when it $case', async ({ fence, released }) => {
      w.store = storeOf('active', { maxMessagesPerSlice: 5, maxConcurrentConsumers: 1 });
      w.backlog = 20;
      await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
      vi.spyOn(w.dispatch, 'requeue').mockResolvedValue({
        ok: false,
        current: { storeId: 's1', enqSeq: 1, slots: { a: { s: 'l', at: T0 + 35_000, f: fence } } } as never,
      });
      const release = vi.spyOn(w.dispatch, 'release');
      const outcome = await handleAttention(w.deps, attention('a'));
      expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages' } });
      expect(w.published).toEqual([]);
      if (released) expect(release).toHaveBeenCalledWith('s1', 'a', fence);
      else expect(release).not.toHaveBeenCalled();
    });

    describe('the first call of a lease keeps the pace the store had', () => {
      const workBody = work(1);

      it.each([
        { case: "the slot's carried pace", slot: { n: T0 + 150 }, tat: undefined, firstCallAt: T0 + 150 },
        {
          case: "the store's schedule when the slot carries none",
          slot: {},
          tat: T0 + 100,
          tatLate: 0,
          firstCallAt: T0 + 100,
        },
        {
          case: 'the store schedule when it lies after the carried pace',
          slot: { n: T0 + 50 },
          tat: T0 + 100,
          tatLate: 0,
          firstCallAt: T0 + 100,
        },
        {
          case: "the shared schedule's end and its last block's lateness (a cap lowered to 1)",
          slot: { n: T0 + 50 },
          tat: T0 + 100,
          tatLate: 500,
          firstCallAt: T0 + 600,
        },
        {
          case: 'a schedule written before lateness was kept: its end and the most lateness any block had then',
          slot: {},
          tat: T0 + 100,
          firstCallAt: T0 + 100 + LATENESS_CEILING_MS,
        },
        {
          case: 'now when both are past',
          slot: { n: T0 - 500 },
          tat: T0 - 700,
          tatLate: 500,
          firstCallAt: T0,
        },
      ])('starts at $case', async ({ slot, tat, tatLate, firstCallAt }) => {
        w.store = storeOf('active', { maxConcurrentConsumers: 1, ratePerSecond: 5 });
        w.dispatch.items.set('s1', {
          ...(await w.dispatch.read('s1'))!,
          slots: { a: { s: 'q', at: T0, ...slot } },
          ...(tat === undefined ? {} : { tat }),
          ...(tatLate === undefined ? {} : { tatLate }),
        });
        let sent = false;
        w.deps.tasks.receive = vi.fn(async () => {
          if (sent) return [];
          sent = true;
          return [{ messageId: 'm1', receiptHandle: 'r1', body: workBody, receiveCount: 1, sentAt: T0 }];
        });
        const calls: number[] = [];
        w.deps.marketplace.deliver = vi.fn(async () => {
          calls.push(w.now);
          return { kind: 'ok' as const, status: 200 };
        });
        await handleAttention(w.deps, attention('a'));
        expect(calls).toEqual([firstCallAt]);
      });

      it('hands a shared schedule’s lateness, as the acquire read it, to the lease’s first block', async () => {
        w.store = storeOf('active', { maxConcurrentConsumers: 3, ratePerSecond: 20 });
        w.dispatch.items.set('s1', {
          ...(await w.dispatch.read('s1'))!,
          slots: { a: { s: 'q', at: T0 } },
          tat: T0 - 2_000,
          tatLate: 300,
        });
        let sent = false;
        w.deps.tasks.receive = vi.fn(async () => {
          if (sent) return [];
          sent = true;
          return [{ messageId: 'm1', receiptHandle: 'r1', body: workBody, receiveCount: 1, sentAt: T0 }];
        });
        const restart = vi.spyOn(w.dispatch, 'restartTat');
        await handleAttention(w.deps, attention('a'));
        // The lease has no pace yet: its first block takes the schedule's lateness, not the standard 50 ms.
        expect(restart.mock.calls[0]?.[4]).toBe(300);
      });
    });
  });
});
