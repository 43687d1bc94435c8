import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { SETTLE_TRIES } from '../../../lambdas/core/delivered-settle.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type {
  DeliveredSettle,
  DispatchState,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { runSlice, type SliceDeps } from '../../../lambdas/core/slice.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { SLICE_T0, slicePolicy, sliceLease, sliceStore } from '../support/slice-fixtures.js';

/** The batch's delivered settles: one write for a receive batch, before its messages are deleted. */
const T0 = SLICE_T0;
const store = sliceStore();
const policy = slicePolicy;
const lease = sliceLease;
const message = (i: number, eventId = `e${i}`): ReceivedMessage => ({
  messageId: `m${i}`,
  receiptHandle: `r${i}`,
  body: JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: i },
    acceptedAt: T0,
  } satisfies WorkMessage),
  receiveCount: 1,
  sentAt: T0 - 1000,
});

const setup = (messages: ReceivedMessage[]) => {
  let now = T0;
  let ids = 0;
  const events: string[] = [];
  const deleted: string[] = [];
  const calls: string[] = [];
  const deliveries = new MemoryDeliveryLog();
  const settleDelivered = deliveries.settleDelivered.bind(deliveries);
  deliveries.settleDelivered = async (settles: DeliveredSettle[]) => {
    events.push(`settle ${settles.map((s) => s.eventId).join(',')}`);
    return settleDelivered(settles);
  };
  const queue = [...messages];
  const tasks = {
    receive: vi.fn(async (_url: string, { maxMessages }: { maxMessages: number }) =>
      queue.splice(0, maxMessages),
    ),
    deleteBatch: vi.fn(async (_url: string, handles: string[]) => {
      events.push(`delete ${handles.join(',')}`);
      deleted.push(...handles);
    }),
    changeVisibility: vi.fn(async () => undefined),
  } as unknown as TaskQueues;
  const item: DispatchItem = { storeId: 's1', enqSeq: 7, fence: 1, slots: {} };
  const dispatch = {
    markIdle: vi.fn(async () => ({ ok: true, item })),
    deferWake: vi.fn(async () => undefined),
    recordEnqueued: vi.fn(async () => item),
  } as unknown as DispatchState;
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: vi.fn(async () => undefined) },
    marketplace: {
      deliver: vi.fn(async (req) => {
        calls.push(req.body.eventId);
        return { kind: 'ok' as const, status: 200 };
      }),
    },
    deliveries,
    clock: { now: () => now, sleep: async (ms) => void (now += ms) },
    ids: { next: () => `h${++ids}` },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
  };
  return { deps, deliveries, events, deleted, calls };
};

describe('the slice writes its batch’s delivered settles together', () => {
  it('in one request per receive batch, before the batch’s delete', async () => {
    const world = setup([0, 1, 2].map((i) => message(i)));
    await runSlice(world.deps, store, policy, lease);
    const records = await Promise.all(['e0', 'e1', 'e2'].map((e) => world.deliveries.get('s1', e)));
    expect({
      events: world.events,
      records: records.map((r) => [r?.status, r?.attempts, r?.holder, r?.claimUntil]),
    }).toEqual({
      events: ['settle e0,e1,e2', 'delete r0,r1,r2'],
      records: [
        ['delivered', 1, undefined, undefined],
        ['delivered', 1, undefined, undefined],
        ['delivered', 1, undefined, undefined],
      ],
    });
  });

  it('tries unprocessed items again, and deletes them only once written', async () => {
    const world = setup([0, 1].map((i) => message(i)));
    let refusals = 1;
    world.deliveries.unprocessed = (settle) => settle.eventId === 'e1' && refusals-- > 0;
    await runSlice(world.deps, store, policy, lease);
    expect(world.events).toEqual(['settle e0,e1', 'settle e1', 'delete r0,r1']);
  });

  it('keeps the message of a settle unwritten after every try, deletes the rest, and ends on an error', async () => {
    const world = setup([0, 1].map((i) => message(i)));
    world.deliveries.unprocessed = (settle) => settle.eventId === 'e1';
    const result = await runSlice(world.deps, store, policy, lease);
    expect({
      end: result.end,
      settles: world.events.filter((e) => e.startsWith('settle')).length,
      deleted: world.deleted,
      e1: (await world.deliveries.get('s1', 'e1'))?.status,
    }).toEqual({ end: 'error', settles: SETTLE_TRIES, deleted: ['r0'], e1: 'processing' });
  });

  it('still writes the settles of the calls that answered when a later write fails mid-batch (seed 129)', async () => {
    const world = setup([0, 1].map((i) => message(i)));
    // e1 fails transiently, and the guard written before its message is hidden fails too.
    vi.mocked(world.deps.marketplace.deliver).mockImplementation(async (req) => {
      world.calls.push(req.body.eventId);
      return req.body.eventId === 'e1'
        ? { kind: 'transient' as const, error: '503', status: 503 }
        : { kind: 'ok' as const, status: 200 };
    });
    vi.mocked(world.deps.dispatch.deferWake).mockRejectedValue(new Error('DynamoDB unavailable'));
    await runSlice(world.deps, store, policy, lease).catch(() => undefined);
    expect({
      events: world.events,
      e0: (await world.deliveries.get('s1', 'e0'))?.status,
    }).toEqual({ events: ['settle e0', 'delete r0'], e0: 'delivered' });
  });

  it('takes a second copy of a task this batch delivered as a duplicate, without calling or hiding it', async () => {
    const world = setup([message(0), message(1, 'e0')]);
    const result = await runSlice(world.deps, store, policy, lease);
    expect({
      calls: world.calls,
      events: world.events,
      handled: result.handled,
      hidden: vi.mocked(world.deps.tasks.changeVisibility).mock.calls.length,
    }).toEqual({ calls: ['e0'], events: ['settle e0', 'delete r0,r1'], handled: 2, hidden: 0 });
  });

  it('takes a copy as a duplicate when its claim is one of the batch’s several unwritten settles', async () => {
    const world = setup([message(0), message(1), message(2, 'e0')]);
    const result = await runSlice(world.deps, store, policy, lease);
    expect({
      calls: world.calls,
      events: world.events,
      handled: result.handled,
      hidden: vi.mocked(world.deps.tasks.changeVisibility).mock.calls.length,
    }).toEqual({ calls: ['e0', 'e1'], events: ['settle e0,e1', 'delete r0,r1,r2'], handled: 3, hidden: 0 });
  });

  it('does not take a copy held by another live attempt for one of its own, while its own settles are unwritten', async () => {
    const world = setup([message(0), message(1)]);
    await world.deliveries.claim('s1', 'e1', {
      holder: 'other',
      now: T0 - 1_000,
      until: T0 + 60_000,
      messageId: 'mx',
    });
    await runSlice(world.deps, store, policy, lease);
    expect({
      calls: world.calls,
      deleted: world.deleted,
      hidden: vi.mocked(world.deps.tasks.changeVisibility).mock.calls.map((c) => c[1]),
    }).toEqual({ calls: ['e0'], deleted: ['r0'], hidden: [[{ receiptHandle: 'r1', seconds: 60 }]] });
  });

  it('carries the claim’s attempts and first attempt into the delivered record', async () => {
    const world = setup([message(0)]);
    await world.deliveries.claim('s1', 'e0', {
      holder: 'x',
      now: T0 - 60_000,
      until: T0 - 50_000,
      messageId: 'm0',
    });
    await world.deliveries.settle('s1', 'e0', 'x', {
      status: 'pending',
      now: T0 - 55_000,
      countAttempt: true,
      lastError: 'marketplace answered 503',
      lastStatus: 503,
    });
    await runSlice(world.deps, store, policy, lease);
    expect(await world.deliveries.get('s1', 'e0')).toMatchObject({
      status: 'delivered',
      attempts: 2,
      firstAttemptAt: T0 - 60_000,
      lastAttemptAt: T0,
      lastError: 'marketplace answered 503',
    });
  });
});

describe('an error that ends the slice', () => {
  it('keeps the Retry-After the slice was told, even when the hold that would carry it fails', async () => {
    const world = setup([message(0)]);
    vi.mocked(world.deps.marketplace.deliver).mockResolvedValue({
      kind: 'throttled',
      status: 429,
      retryAfterSeconds: 30,
    });
    world.deps.dispatch.holdTat = vi.fn(async () => {
      throw new Error('DynamoDB unavailable');
    });
    const result = await runSlice(world.deps, store, policy, lease);
    expect({
      end: result.end,
      nextCallAt: result.nextCallAt,
      resumeAt: result.resumeAt,
      throttledUntil: result.throttledUntil,
    }).toEqual({
      end: 'error',
      nextCallAt: T0 + 30_000,
      resumeAt: T0 + 30_000,
      throttledUntil: T0 + 30_000,
    });
  });

  it('names when the messages it received may be visible again, from when a stalled receive answered', async () => {
    const world = setup([message(0)]);
    const receive = world.deps.tasks.receive;
    // The receive answers 60 s late (past the lease), and handing its message back then fails.
    world.deps.tasks.receive = vi.fn(async (url, opts) => {
      await world.deps.clock.sleep(60_000);
      return receive(url, opts);
    });
    vi.mocked(world.deps.tasks.changeVisibility).mockRejectedValue(new Error('SQS unavailable'));
    const result = await runSlice(world.deps, store, policy, lease);
    // Visibility asked at T0: the lease's 35 s + 5 s margin, from T0 + 60 s when it answered.
    expect({ end: result.end, hiddenUntil: result.hiddenUntil }).toEqual({
      end: 'error',
      hiddenUntil: T0 + 60_000 + 40_000,
    });
  });
});
