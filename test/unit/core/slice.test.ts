import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type {
  Conditional,
  DeliveryOutcome,
  DispatchState,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import type { Policy } from '../../../lambdas/core/plans.js';
import { runSlice, type Lease, type SliceDeps } from '../../../lambdas/core/slice.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';

/** invariant 4 (bounded slice) and the slice's per-task handling, with plain-object fakes and a pinned clock */
const T0 = 1_800_000_000_000;
const store: StoreRecord = {
  storeId: 's1',
  tenantId: 't1',
  marketplace: 'amazon',
  plan: 'basic',
  status: 'active',
  queueUrl: 'q-url',
  deadLetterQueueUrl: 'dlq-url',
  createdAt: T0,
  updatedAt: T0,
};
const policy = (p: Partial<Policy> = {}): Policy => ({
  maxConcurrentConsumers: 1,
  maxMessagesPerSlice: 50,
  maxSliceSeconds: 20,
  ratePerSecond: 1000,
  ...p,
});

const work = (i: number): string =>
  JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId: `e${i}`,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: i },
    acceptedAt: T0,
  } satisfies WorkMessage);

const item = (patch: Partial<DispatchItem> = {}): DispatchItem => ({
  storeId: 's1',
  enqSeq: 7,
  fence: 1,
  slots: { a: { s: 'l', at: T0 + 35_000, f: 1 } },
  ...patch,
});

interface World {
  now: number;
  queue: ReceivedMessage[];
  deleted: string[];
  visibility: { receiptHandle: string; seconds: number }[];
  calls: string[];
  events: string[];
  receives: number[];
}

const setup = (
  opts: { messages?: number; outcome?: (eventId: string) => DeliveryOutcome; callMs?: number } = {},
) => {
  const w: World = { now: T0, queue: [], deleted: [], visibility: [], calls: [], events: [], receives: [] };
  for (let i = 0; i < (opts.messages ?? 0); i++) {
    w.queue.push({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: work(i),
      receiveCount: 1,
      sentAt: T0 - 1000 + i,
    });
  }
  const tasks: TaskQueues = {
    send: vi.fn(),
    sendBatch: vi.fn(),
    receive: vi.fn(async (_url, { maxMessages }) => {
      w.receives.push(maxMessages);
      return w.queue.splice(0, maxMessages);
    }),
    deleteBatch: vi.fn(async (_url, handles: string[]) => {
      w.deleted.push(...handles);
    }),
    changeVisibility: vi.fn(async (_url, entries: { receiptHandle: string; seconds: number }[]) => {
      w.events.push('visibility');
      w.visibility.push(...entries);
    }),
    deadLetter: vi.fn(async () => undefined),
  };
  const ok = (value: DispatchItem): Conditional => ({ ok: true, item: value });
  const dispatch = {
    markIdle: vi.fn(async () => ok(item({ slots: {} }))),
    release: vi.fn(async () => ok(item({ slots: {} }))),
    deferWake: vi.fn(async () => {
      w.events.push('deferWake');
    }),
    issueSlot: vi.fn(async () => ok(item())),
  } as unknown as DispatchState &
    Record<'markIdle' | 'release' | 'deferWake' | 'issueSlot', ReturnType<typeof vi.fn>>;
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: vi.fn(async () => undefined) },
    marketplace: {
      deliver: vi.fn(async (req) => {
        w.calls.push(req.body.eventId);
        w.now += opts.callMs ?? 0;
        return opts.outcome?.(req.body.eventId) ?? ({ kind: 'ok', status: 200 } as DeliveryOutcome);
      }),
    },
    deliveries: { get: vi.fn(async () => undefined), record: vi.fn(async () => undefined) },
    clock: {
      now: () => w.now,
      sleep: async (ms) => {
        w.now += ms;
      },
    },
    ids: { next: () => 'new-slot' },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { emptyPollSeconds: 1 },
  };
  return { w, deps, dispatch, tasks };
};

const lease = (patch: Partial<Lease> = {}): Lease => ({
  slotId: 'a',
  fence: 1,
  seenSeq: 7,
  startedAt: T0,
  expiresAt: T0 + 35_000,
  nextCallAt: T0,
  slotsAtStart: 1,
  ...patch,
});

describe('runSlice', () => {
  let world: ReturnType<typeof setup>;
  beforeEach(() => {
    world = setup();
  });

  it('ends at maxMessagesPerSlice, never receiving more than it may handle', async () => {
    world = setup({ messages: 100 });
    const result = await runSlice(world.deps, store, policy({ maxMessagesPerSlice: 25 }), lease());
    expect(result).toMatchObject({ end: 'max_messages', handled: 25, delivered: 25 });
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
    // Three calls paced 1 ms apart (1,000/s) put the clock at T0 + 2 when the queue runs dry.
    expect(world.dispatch.markIdle).toHaveBeenCalledWith('s1', 'a', 1, { seenSeq: 7, now: T0 + 2 });
  });

  it('keeps consuming when ingest bumped enqSeq after the lease was taken', async () => {
    world.dispatch.markIdle
      .mockResolvedValueOnce({ ok: false, current: item({ enqSeq: 9 }) })
      .mockResolvedValueOnce({ ok: true, item: item({ slots: {} }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.idle).toBe(true);
    expect(world.dispatch.markIdle).toHaveBeenLastCalledWith('s1', 'a', 1, { seenSeq: 9, now: T0 });
  });

  it('only releases its own slot when other slots remain', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({
      ok: false,
      current: item({ slots: { a: { s: 'l', at: T0 + 35_000, f: 1 }, b: { s: 'q', at: T0 } } }),
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'empty', idle: false });
    expect(world.dispatch.release).toHaveBeenCalledWith('s1', 'a', 1);
  });

  it('stops as lease_lost when its fence no longer holds the slot', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({
      ok: false,
      current: item({ slots: { a: { s: 'l', at: T0, f: 2 } } }),
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result.end).toBe('lease_lost');
  });

  it('requeues at wakeAt instead of going idle while a deferred task is hidden', async () => {
    world.dispatch.markIdle.mockResolvedValueOnce({ ok: false, current: item({ wakeAt: T0 + 60_000 }) });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'deferred', resumeAt: T0 + 60_000 });
  });

  it('stops on a 429, raising wakeAt before hiding the in-hand messages for Retry-After', async () => {
    world = setup({
      messages: 4,
      outcome: (id) =>
        id === 'e1' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    // The second call started 1 ms in (paced at 1,000/s), so Retry-After counts from there.
    expect(result).toMatchObject({ end: 'throttled', resumeAt: T0 + 1 + 30_000, delivered: 1 });
    expect(world.w.events).toEqual(['deferWake', 'visibility']);
    expect(world.w.visibility).toEqual(
      ['r1', 'r2', 'r3'].map((receiptHandle) => ({ receiptHandle, seconds: 30 })),
    );
    expect(world.w.deleted).toEqual(['r0']);
  });

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
    });
    expect(world.w.deleted).toEqual(['r0']);
  });

  it('paces calls to the lease share of ratePerSecond', async () => {
    world = setup({ messages: 4 });
    const starts: number[] = [];
    const deliver = world.deps.marketplace.deliver as ReturnType<typeof vi.fn>;
    deliver.mockImplementation(async () => {
      starts.push(world.w.now);
      return { kind: 'ok', status: 200 } as const;
    });
    await runSlice(world.deps, store, policy({ ratePerSecond: 4, maxConcurrentConsumers: 2 }), lease());
    expect(starts.map((s) => s - T0)).toEqual([0, 500, 1000, 1500]);
  });

  it('ends with error when the receive fails, asking to be looked at again shortly', async () => {
    (world.tasks.receive as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('sqs down'));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(result).toMatchObject({ end: 'error', resumeAt: T0 + 5_000 });
  });

  it('opens one more slot on the first full batch when below the concurrency limit', async () => {
    world = setup({ messages: 30 });
    await runSlice(
      world.deps,
      store,
      policy({ maxConcurrentConsumers: 3, maxMessagesPerSlice: 30 }),
      lease(),
    );
    expect(world.dispatch.issueSlot).toHaveBeenCalledTimes(1);
    expect(world.dispatch.issueSlot).toHaveBeenCalledWith('s1', 'new-slot', T0, 3, T0);
  });

  it('skips a task already delivered without calling the marketplace', async () => {
    world = setup({ messages: 1 });
    (world.deps.deliveries.get as ReturnType<typeof vi.fn>).mockResolvedValueOnce({
      storeId: 's1',
      eventId: 'e0',
      status: 'delivered',
      updatedAt: T0,
    });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect(world.w.calls).toEqual([]);
    expect(world.w.deleted).toEqual(['r0']);
    expect(result.delivered).toBe(0);
  });
});
