import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type {
  DeliveryOutcome,
  DispatchState,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { ERROR_RETRY_MS, runSlice, type SliceDeps } from '../../../lambdas/core/slice.js';
import { VISIBILITY_MARGIN_SECONDS } from '../../../lambdas/core/timing.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { SLICE_T0, slicePolicy, sliceLease, sliceStore } from '../support/slice-fixtures.js';

/** Task priority within a store, in the slice: the high queue first, per batch and in the "empty" decision. */
const T0 = SLICE_T0;
const HIGH = 'h-url';
const NORMAL = 'q-url';
const store = sliceStore({ queueUrl: NORMAL, priorityQueueUrl: HIGH });
const policy = slicePolicy;
const lease = sliceLease;
const item: DispatchItem = { storeId: 's1', enqSeq: 7, fence: 1, slots: {} };

const message = (id: string): ReceivedMessage => ({
  messageId: id,
  receiptHandle: `r-${id}`,
  body: JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId: id,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: 1 },
    acceptedAt: T0,
  } satisfies WorkMessage),
  receiveCount: 1,
  sentAt: T0 - 1000,
});

const setup = (
  queues: Record<string, string[]>,
  opts: { outcome?: (eventId: string) => DeliveryOutcome; onCall?: (eventId: string) => void } = {},
) => {
  const held: Record<string, ReceivedMessage[]> = Object.fromEntries(
    Object.entries({ [HIGH]: [], [NORMAL]: [], ...queues }).map(([url, ids]) => [url, ids.map(message)]),
  );
  let now = T0;
  const receives: [string, number, number][] = [];
  const deleted: [string, string][] = [];
  const hidden: [string, string][] = [];
  const resent: [string, string][] = [];
  const calls: string[] = [];
  const tasks: TaskQueues = {
    send: vi.fn(),
    sendBatch: vi.fn(),
    receive: vi.fn(async (url: string, { maxMessages, waitSeconds }) => {
      receives.push([url, waitSeconds, maxMessages]);
      return (held[url] ?? []).splice(0, maxMessages);
    }),
    deleteBatch: vi.fn(async (url: string, handles: string[]) => {
      deleted.push(...handles.map((h) => [url, h] as [string, string]));
    }),
    changeVisibility: vi.fn(async (url: string, entries: { receiptHandle: string }[]) => {
      hidden.push(...entries.map((e) => [url, e.receiptHandle] as [string, string]));
    }),
    deadLetter: vi.fn(async () => undefined),
    resend: vi.fn(async (url: string, messages: { receiptHandle: string }[]) => {
      resent.push(...messages.map((m) => [url, m.receiptHandle] as [string, string]));
    }),
  };
  const ok = { ok: true as const, item };
  const dispatch = {
    markIdle: vi.fn(async () => ok),
    release: vi.fn(async () => ok),
    deferWake: vi.fn(async () => undefined),
    recordEnqueued: vi.fn(async () => item),
    issueSlot: vi.fn(async () => ok),
    holdTat: vi.fn(async () => undefined),
  } as unknown as DispatchState;
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: vi.fn(async () => undefined) },
    marketplace: {
      deliver: vi.fn(async (req) => {
        calls.push(req.body.eventId);
        opts.onCall?.(req.body.eventId);
        return opts.outcome?.(req.body.eventId) ?? ({ kind: 'ok', status: 200 } as DeliveryOutcome);
      }),
    },
    deliveries: new MemoryDeliveryLog(),
    clock: { now: () => now, sleep: async (ms) => void (now += ms) },
    ids: { next: () => 'new-slot' },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
  };
  return { deps, held, receives, deleted, hidden, resent, calls };
};

describe('runSlice with a high-priority queue', () => {
  it('delivers the high tasks before the normal ones that were waiting', async () => {
    const world = setup({ [HIGH]: ['h1', 'h2'], [NORMAL]: ['n1', 'n2', 'n3'] });
    await runSlice(world.deps, store, policy, lease);
    expect(world.calls).toEqual(['h1', 'h2', 'n1', 'n2', 'n3']);
  });

  it('takes a high task accepted mid-slice at the next batch, ahead of the waiting normal ones', async () => {
    const normals = Array.from({ length: 25 }, (_, i) => `n${i}`);
    const world = setup(
      { [NORMAL]: normals },
      { onCall: (id) => id === 'n3' && world.held[HIGH]?.push(message('h1')) },
    );
    await runSlice(world.deps, store, policy, lease);
    // n0–n9 were in hand when h1 arrived; the next batch is h1's.
    expect(world.calls.indexOf('h1')).toBe(10);
  });

  it('checks the high queue once per batch with a short poll, and decides "empty" with long polls of both side by side', async () => {
    const world = setup({ [NORMAL]: ['n1'] });
    const result = await runSlice(world.deps, store, policy, lease);
    // [queue, waitSeconds, maxMessages]: the empty check shares the batch size between the two long polls.
    expect({ end: result.end, receives: world.receives }).toEqual({
      end: 'empty',
      receives: [
        [HIGH, 0, 10],
        [NORMAL, 0, 10],
        [HIGH, 0, 10],
        [NORMAL, 0, 10],
        [HIGH, 1, 5],
        [NORMAL, 1, 5],
      ],
    });
  });

  it('finds high tasks in the empty check and delivers them instead of going idle', async () => {
    const world = setup({ [NORMAL]: [] });
    let highChecks = 0;
    const receive = world.deps.tasks.receive;
    // A short poll of the high queue misses its task (SQS samples servers); the long poll finds it.
    world.deps.tasks.receive = async (url, opts) => {
      if (url === HIGH && opts.waitSeconds === 0 && highChecks++ === 0) {
        world.held[HIGH]?.push(message('h1'));
        return [];
      }
      return receive(url, opts);
    };
    const result = await runSlice(world.deps, store, policy, lease);
    // Found by the empty check's long polls, like a trickle: delivered, then the slice yields its worker.
    expect({ end: result.end, calls: world.calls }).toEqual({ end: 'yielded', calls: ['h1'] });
    expect(world.deps.dispatch.markIdle).not.toHaveBeenCalled();
  });

  it('deletes each message from the queue it came from', async () => {
    const world = setup({ [HIGH]: ['h1'], [NORMAL]: ['n1'] });
    await runSlice(world.deps, store, policy, lease);
    expect(world.deleted).toEqual([
      [HIGH, 'r-h1'],
      [NORMAL, 'r-n1'],
    ]);
  });

  it('re-times a retried high task and re-sends a throttled one on the high queue', async () => {
    const retried = setup({ [HIGH]: ['h1'] }, { outcome: () => ({ kind: 'transient', error: 'boom' }) });
    await runSlice(retried.deps, store, policy, lease);
    const throttled = setup(
      { [HIGH]: ['h1'] },
      { outcome: () => ({ kind: 'throttled', status: 429, retryAfterSeconds: 5 }) },
    );
    await runSlice(throttled.deps, store, policy, lease);
    expect({ hidden: retried.hidden, resent: throttled.resent }).toEqual({
      hidden: [[HIGH, 'r-h1']],
      resent: [[HIGH, 'r-h1']],
    });
  });

  it('a store without a high queue polls only its work queue, as before', async () => {
    const world = setup({ [NORMAL]: ['n1'] });
    const { priorityQueueUrl: _none, ...legacy } = store;
    await runSlice(world.deps, legacy, policy, lease);
    expect(world.receives).toEqual([
      [NORMAL, 0, 10],
      [NORMAL, 0, 10],
      [NORMAL, 1, 10],
    ]);
  });
});

/**
 * The empty check's two long polls race (lambdas/core/slice-receive.ts): a task one of them brings is delivered
 * at once, and the other, still polling, is settled before the slice ends.
 */
describe('runSlice, the empty check’s other long poll (the rest)', () => {
  /** The work queue's long poll brings n1 at once; the high queue's answers when `answerHigh` is called. */
  const racing = (onCall?: () => void) => {
    let answerHigh: (answer: ReceivedMessage[] | Error) => void = () => undefined;
    const events: string[] = [];
    const world = setup({ [NORMAL]: [] }, { onCall: (id) => (events.push(`call ${id}`), onCall?.()) });
    const receive = world.deps.tasks.receive;
    world.deps.tasks.receive = async (url, opts) => {
      if (opts.waitSeconds === 0) return receive(url, opts);
      if (url === NORMAL) return [message('n1')];
      return new Promise<ReceivedMessage[]>((resolve, reject) => {
        answerHigh = (answer) => {
          events.push('high answered');
          if (answer instanceof Error) reject(answer);
          else resolve(answer);
        };
      });
    };
    return { world, events, answerHigh: (answer: ReceivedMessage[] | Error) => answerHigh(answer) };
  };

  it('delivers what the work queue’s long poll brings while the high queue’s still polls, then waits for it', async () => {
    // The high queue's poll answers after the call, in a later turn of the event loop: the slice waits for it.
    const race = racing(() => setImmediate(() => race.answerHigh([])));
    const result = await runSlice(race.world.deps, store, policy, lease);
    expect({ end: result.end, events: race.events, handedBack: race.world.hidden }).toEqual({
      end: 'yielded',
      events: ['call n1', 'high answered'],
      handedBack: [],
    });
  });

  it('hands back what the other long poll took, before the slice ends', async () => {
    const race = racing(() => setImmediate(() => race.answerHigh([message('h1')])));
    const result = await runSlice(race.world.deps, store, policy, lease);
    expect({ end: result.end, calls: race.world.calls, handedBack: race.world.hidden }).toEqual({
      end: 'yielded',
      calls: ['n1'],
      handedBack: [[HIGH, 'r-h1']],
    });
    expect(race.world.deps.tasks.changeVisibility).toHaveBeenCalledWith(HIGH, [
      { receiptHandle: 'r-h1', seconds: 0 },
    ]);
  });

  const errorEnd = (now: number) => ({
    end: 'error',
    resumeAt: now + ERROR_RETRY_MS,
    // What it took may stay hidden for the visibility asked when the polls began, from when it answered.
    hiddenUntil: now + (Math.ceil((lease.expiresAt - T0) / 1000) + VISIBILITY_MARGIN_SECONDS) * 1000,
  });

  it('ends as an error when the other long poll fails: what it took may stay hidden', async () => {
    // It fails 700 ms after the work queue's poll answered: what it may have taken hides from then.
    const race = racing(() => {
      void race.world.deps.clock.sleep(700);
      race.answerHigh(new Error('SQS unavailable'));
    });
    const logged = vi.spyOn(race.world.deps.telemetry, 'error');
    const result = await runSlice(race.world.deps, store, policy, lease);
    const now = race.world.deps.clock.now();
    expect(now).toBe(T0 + 700);
    expect({ ...result, calls: race.world.calls }).toMatchObject({
      ...errorEnd(now),
      calls: ['n1'],
      delivered: 1,
    });
    expect(logged).toHaveBeenCalledWith('empty check not settled', { error: 'Error: SQS unavailable' });
  });

  it('keeps the later look its end asked for (another consumer’s hold) when the other long poll fails', async () => {
    const race = racing();
    // Two consumers: the shared schedule's next instant lies a minute ahead (another consumer's 429 holds the
    // store), so n1 is not called and the slice ends `throttled`, to be looked at when the hold ends.
    Object.assign(race.world.deps.dispatch, {
      restartTat: vi.fn(async () => undefined),
      advanceTat: vi.fn(async () => ({ tat: T0 + 60_000, seq: 1, calls: 1 })),
      returnTat: vi.fn(async () => true),
      read: vi.fn(async () => item),
    });
    const shared = { ...policy, maxConcurrentConsumers: 2 };
    const running = runSlice(race.world.deps, store, shared, lease);
    await new Promise((resolve) => setImmediate(resolve));
    race.answerHigh(new Error('SQS unavailable'));
    const result = await running;
    expect({ end: result.end, calls: race.world.calls }).toEqual({ end: 'error', calls: [] });
    expect(result.resumeAt).toBeGreaterThanOrEqual(T0 + 60_000);
  });

  it('ends as an error when its hand-back fails', async () => {
    const race = racing(() => race.answerHigh([message('h1')]));
    race.world.deps.tasks.changeVisibility = vi.fn(async () => {
      throw new Error('SQS unavailable');
    });
    const result = await runSlice(race.world.deps, store, policy, lease);
    expect(result).toMatchObject(errorEnd(race.world.deps.clock.now()));
  });
});
