import { vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { WorkerDeps } from '../../../lambdas/core/attention.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import type { ReceivedMessage } from '../../../lambdas/core/ports.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { SLICE_T0, sliceStore, work } from './slice-fixtures.js';

/**
 * A worker's world for handleAttention's unit tests: the in-memory dispatch state (one task recorded as
 * enqueued at T0), a pinned clock, a backlog the receive hands out, and the attentions published.
 */
export const T0 = SLICE_T0;

/** Store s1 on the pro plan (3 consumers, 20 s slices), on queue `q`, with the operator's overrides if any. */
export const proStore = (
  overrides: StoreRecord['overrides'] = undefined,
  status: StoreStatus = 'active',
): StoreRecord =>
  sliceStore({
    plan: 'pro',
    status,
    ...(overrides ? { overrides } : {}),
    queueUrl: 'q',
    deadLetterQueueUrl: 'dlq',
  });

export const attentionFor = (slotId: string): AttentionMessage => ({
  v: 1,
  storeId: 's1',
  slotId,
  reason: 'ingest',
  issuedAt: T0,
});

/** The backlog's task numbered n (the backlog counts down as it is received): a minute old, the last one oldest. */
export const backlogTask = (n: number): ReceivedMessage => ({
  messageId: `m${n}`,
  receiptHandle: `r${n}`,
  body: work(n),
  receiveCount: 1,
  sentAt: T0 - 60_000 + n,
});

export interface WorkerWorld {
  /** The clock; the deps' sleep moves it. */
  now: number;
  /** How many tasks the store queue still holds. */
  backlog: number;
  /** What the store table answers for s1 (undefined: no such store). */
  store: StoreRecord | undefined;
  readonly dispatch: MemoryDispatchState;
  readonly published: { message: AttentionMessage; delay: number }[];
  readonly telemetry: RecordingTelemetry;
  readonly deps: WorkerDeps;
}

export const workerWorld = async (
  opts: {
    store?: StoreRecord;
    /** The task the receive hands out as the n-th of the backlog and the i-th of its answer. */
    task?: (n: number, i: number) => ReceivedMessage;
    telemetry?: RecordingTelemetry;
  } = {},
): Promise<WorkerWorld> => {
  const dispatch = new MemoryDispatchState();
  await dispatch.recordEnqueued('s1', 1, T0);
  const task = opts.task ?? backlogTask;
  const world = { now: T0, backlog: 0, store: opts.store ?? proStore() };
  const published: WorkerWorld['published'] = [];
  const telemetry = opts.telemetry ?? new RecordingTelemetry();
  const deps: WorkerDeps = {
    dispatch,
    stores: { get: async () => world.store, create: vi.fn(), replace: vi.fn(), scan: vi.fn() },
    attention: { publish: async (message, delay) => void published.push({ message, delay }) },
    tasks: {
      send: vi.fn(),
      sendBatch: vi.fn(),
      receive: vi.fn(async (_url, { maxMessages }) =>
        Array.from({ length: Math.min(maxMessages, world.backlog) }, (_, i) => {
          world.backlog--;
          return task(world.backlog, i);
        }),
      ),
      deleteBatch: vi.fn(async () => undefined),
      changeVisibility: vi.fn(async () => undefined),
      deadLetter: vi.fn(async () => undefined),
      resend: vi.fn(async () => undefined),
    },
    marketplace: { deliver: vi.fn(async () => ({ kind: 'ok' as const, status: 200 })) },
    deliveries: new MemoryDeliveryLog(),
    clock: { now: () => world.now, sleep: async (ms) => void (world.now += ms) },
    ids: { next: () => 'new' },
    telemetry,
    random: () => 0.5,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
  };
  return Object.assign(world, { dispatch, published, telemetry, deps });
};
