import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention, type WorkerDeps } from '../../../lambdas/core/attention.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { ReceivedMessage } from '../../../lambdas/core/ports.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

/** What the lease carries into the slice and what an error end writes back (mutation survivors). */
const T0 = 1_800_000_000_000;
const store: StoreRecord = {
  storeId: 's1',
  tenantId: 't1',
  marketplace: 'amazon',
  plan: 'pro',
  status: 'active',
  overrides: { maxConcurrentConsumers: 1 },
  queueUrl: 'q',
  deadLetterQueueUrl: 'dlq',
  createdAt: T0,
  updatedAt: T0,
};
const attention: AttentionMessage = { v: 1, storeId: 's1', slotId: 'a', reason: 'ingest', issuedAt: T0 };
const task = (i: number): ReceivedMessage => ({
  messageId: `m${i}`,
  receiptHandle: `r${i}`,
  body: JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId: `e${i}`,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: i },
    acceptedAt: T0,
  }),
  receiveCount: 1,
  sentAt: T0,
});

describe('an attention around its slice', () => {
  let dispatch: MemoryDispatchState;
  let published: { message: AttentionMessage; delay: number }[];
  let telemetry: RecordingTelemetry;
  let deps: WorkerDeps;
  let now: number;

  beforeEach(async () => {
    now = T0;
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
        receive: vi.fn(async () => []),
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

  it('keeps the store awake past the lease when a failed receive stalled beyond it (its messages hide from its answer)', async () => {
    deps.tasks.receive = vi.fn(async () => {
      now += 10_000; // the receive stalls 10 s, then fails: it may have applied with its answer lost
      throw new Error('SQS timed out');
    });
    await handleAttention(deps, attention);
    // Asked at T0: the lease's 35 s + the 5 s visibility margin, from the answer at T0 + 10 s.
    expect((await dispatch.read('s1'))?.wakeAt).toBe(T0 + 10_000 + 40_000 + WAKE_MARGIN_MS);
  });

  it('still hands the slot back after an error when the Retry-After hold cannot be written, and warns', async () => {
    deps.tasks.receive = vi.fn(async () => [task(1)]);
    deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 30,
    }));
    // The settle after the 429 fails (an error end told a Retry-After), and so does every hold.
    vi.spyOn(deps.deliveries, 'settle').mockRejectedValue(new Error('DynamoDB unavailable'));
    vi.spyOn(dispatch, 'holdTat').mockRejectedValue(new Error('DynamoDB unavailable'));
    const logs: string[] = [];
    telemetry = new RecordingTelemetry((record) => void logs.push(record.message), 'warn');
    deps.telemetry = telemetry;
    const outcome = await handleAttention(deps, attention);
    expect({
      end: outcome.kind === 'sliced' ? outcome.slice.end : undefined,
      slot: (await dispatch.read('s1'))?.slots['a'],
      published: published.map((p) => p.delay),
      warned: logs.includes('store not held'),
    }).toEqual({
      end: 'error',
      // Not before the Retry-After: the slot is due when it ends, the first error of a streak.
      slot: expect.objectContaining({ s: 'q', at: T0 + 30_000, e: 1 }),
      published: [30],
      warned: true,
    });
  });

  it('measures the time the store took to drain, from when it became active to its idle', async () => {
    now = T0 + 12_000;
    const outcome = await handleAttention(deps, attention);
    expect({ outcome, drain: telemetry.timings.get(MetricNames.timeToDrain) }).toEqual({
      outcome: { kind: 'sliced', slice: expect.objectContaining({ end: 'empty', idle: true }) },
      drain: [12_000],
    });
  });
});
