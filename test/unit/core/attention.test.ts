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
});
