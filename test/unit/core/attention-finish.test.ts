import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention, type WorkerDeps } from '../../../lambdas/core/attention.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

/** How a slice's end is written back: measures, the backlog's head, a slice that threw, a store with no item. */
const T0 = 1_800_000_000_000;
const store: StoreRecord = {
  storeId: 's1',
  tenantId: 't1',
  marketplace: 'amazon',
  plan: 'pro',
  status: 'active',
  overrides: { maxConcurrentConsumers: 1, maxMessagesPerSlice: 2, ratePerSecond: 1000 },
  queueUrl: 'q',
  deadLetterQueueUrl: 'dlq',
  createdAt: T0,
  updatedAt: T0,
};
const attention: AttentionMessage = { v: 1, storeId: 's1', slotId: 'a', reason: 'ingest', issuedAt: T0 };
const work = (i: number): string =>
  JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId: `e${i}`,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: i },
    acceptedAt: T0,
  });

describe('the end of a slice', () => {
  let dispatch: MemoryDispatchState;
  let published: { message: AttentionMessage; delay: number }[];
  let telemetry: RecordingTelemetry;
  let deps: WorkerDeps;
  let now: number;
  let backlog: number;

  beforeEach(async () => {
    now = T0;
    backlog = 5;
    dispatch = new MemoryDispatchState();
    await dispatch.recordEnqueued('s1', 1, T0);
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    published = [];
    telemetry = new RecordingTelemetry();
    deps = {
      dispatch,
      stores: { get: async () => store, create: vi.fn(), put: vi.fn(), scan: vi.fn() },
      attention: { publish: async (message, delay) => void published.push({ message, delay }) },
      tasks: {
        send: vi.fn(),
        sendBatch: vi.fn(),
        receive: vi.fn(async (_url, { maxMessages }) =>
          Array.from({ length: Math.min(maxMessages, backlog) }, () => {
            backlog--;
            return {
              messageId: `m${backlog}`,
              receiptHandle: `r${backlog}`,
              body: work(backlog),
              receiveCount: 1,
              sentAt: T0 - 60_000 + backlog,
            };
          }),
        ),
        deleteBatch: vi.fn(async () => undefined),
        changeVisibility: vi.fn(async () => undefined),
        deadLetter: vi.fn(async () => undefined),
        resend: vi.fn(async () => undefined),
      },
      marketplace: { deliver: vi.fn(async () => ({ kind: 'ok' as const, status: 200 })) },
      deliveries: new MemoryDeliveryLog(),
      clock: { now: () => now, sleep: async (ms) => void (now += ms) },
      ids: { next: () => 'new' },
      telemetry,
      random: () => 0.5,
      settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
    };
  });

  it('moves the backlog head to the oldest task it saw, and counts no throttle, on a full slice', async () => {
    const outcome = await handleAttention(deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages' } });
    const item = await dispatch.read('s1');
    expect(item?.headSentAt).toBeLessThan(T0 - 50_000);
    expect(item?.nThrottled).toBeUndefined();
    expect(item?.nRepublished).toBe(1);
  });

  it('counts a throttled slice on the store', async () => {
    deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 3,
    }));
    const outcome = await handleAttention(deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'throttled' } });
    expect((await dispatch.read('s1'))?.nThrottled).toBe(1);
  });

  it('turns a slice that threw into an error end, looked at again in 5 s', async () => {
    backlog = 0;
    vi.spyOn(dispatch, 'markIdle').mockRejectedValue(new Error('DynamoDB unavailable'));
    const outcome = await handleAttention(deps, attention);
    expect(outcome).toEqual({
      kind: 'sliced',
      slice: expect.objectContaining({
        end: 'error',
        handled: 0,
        delivered: 0,
        deadLettered: 0,
        idle: false,
      }),
    });
    expect(published.map((p) => [p.message.reason, p.delay])).toEqual([['requeue', 5]]);
    expect(telemetry.total(MetricNames.slicesStarted)).toBe(1);
  });

  it('holds the store until a Retry-After the slice was told when the slice ends on an error', async () => {
    deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 30,
    }));
    // The settle after the 429 fails: the slice's own hold (after it) is never written.
    vi.spyOn(deps.deliveries, 'settle').mockRejectedValue(new Error('DynamoDB unavailable'));
    const hold = vi.spyOn(dispatch, 'holdTat');
    const outcome = await handleAttention(deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'error', throttledUntil: T0 + 30_000 } });
    expect(hold.mock.calls.map(([, until]) => until)).toContain(T0 + 30_000);
  });

  it('lets a hand-back refused with no item left go quietly', async () => {
    vi.spyOn(dispatch, 'requeue').mockResolvedValue({ ok: false, current: undefined });
    const release = vi.spyOn(dispatch, 'release');
    await expect(handleAttention(deps, attention)).resolves.toMatchObject({ kind: 'sliced' });
    expect(release).not.toHaveBeenCalled();
  });

  it('calls an attention for a store with no dispatch item stale', async () => {
    dispatch.items.delete('s1');
    expect(await handleAttention(deps, attention)).toEqual({ kind: 'discarded', reason: 'stale' });
  });

  it('counts a lease blocked over the limit by its reason', async () => {
    await dispatch.issueSlot('s1', 'b', T0, 3, T0);
    expect(await handleAttention(deps, attention)).toEqual({ kind: 'discarded', reason: 'over_limit' });
    expect(telemetry.total(MetricNames.leaseBlocked, { reason: 'over_limit' })).toBe(1);
  });
});
