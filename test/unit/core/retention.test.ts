import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import type { ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import { reconcile, type ReconcilerDeps } from '../../../lambdas/core/reconcile.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import {
  countRefreshed,
  needsPass,
  PASS_VISIBILITY_SECONDS,
  retentionPass,
  type RetentionSettings,
} from '../../../lambdas/core/retention.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { quietQueues } from '../support/reconciler-fixtures.js';

const T0 = 1_800_000_000_000;
const DAY = 24 * 3600 * 1000;
const SETTINGS: RetentionSettings = { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun: 100 };

const storeOf = (status: StoreStatus, high = false): StoreRecord => ({
  storeId: 's1',
  tenantId: 't',
  marketplace: 'amazon',
  plan: 'basic',
  status,
  queueUrl: 'q-s1',
  ...(high ? { priorityQueueUrl: 'h-s1' } : {}),
  deadLetterQueueUrl: 'dlq-s1',
  createdAt: T0,
  updatedAt: T0,
});

/** A store queue in memory: visible messages, taken ones (hidden), and delayed copies. */
const queuesWith = (messages: Record<string, ReceivedMessage[]>, events: string[]) => {
  const copies: { url: string; body: string; delay: number }[] = [];
  const deleted: string[] = [];
  const tasks = {
    receive: vi.fn(async (url: string, opts: { maxMessages: number; waitSeconds: number }) => {
      events.push(`receive:${opts.waitSeconds}`);
      return (messages[url] ?? []).splice(0, opts.maxMessages);
    }),
    resend: vi.fn(async (url: string, batch: { receiptHandle: string; body: string }[], delay: number) => {
      events.push('resend');
      copies.push(...batch.map((m) => ({ url, body: m.body, delay })));
      deleted.push(...batch.map((m) => m.receiptHandle));
    }),
  } as unknown as TaskQueues;
  return { tasks, copies, deleted };
};

const msg = (i: number, sentAt: number): ReceivedMessage => ({
  messageId: `m${i}`,
  receiptHandle: `r${i}`,
  body: `task-${i}`,
  receiveCount: 1,
  sentAt,
});

describe('needsPass', () => {
  it.each([
    ['an idle store (no active mark)', {}, false],
    [
      'a store active for less than the refresh age',
      { activeShard: '0', activeSince: T0 - 7 * DAY + 1 },
      false,
    ],
    ['a store active for the refresh age', { activeShard: '0', activeSince: T0 - 7 * DAY }, true],
    [
      'a store whose last pass raised the bound',
      { activeShard: '0', activeSince: T0 - 30 * DAY, refreshedAt: T0 - DAY },
      false,
    ],
    [
      'a store whose bound a sweep rescue lowered',
      { activeShard: '0', activeSince: T0, refreshedAt: 0 },
      true,
    ],
  ])('%s: %s', (_name, patch, expected) => {
    expect(needsPass({ storeId: 's1', enqSeq: 0, fence: 0, slots: {}, ...patch }, T0, 7 * DAY)).toBe(
      expected,
    );
  });
});

describe('retentionPass', () => {
  let dispatch: MemoryDispatchState;
  let events: string[];
  let now: number;
  const depsFor = (tasks: TaskQueues, telemetry = new RecordingTelemetry()) => ({
    dispatch: {
      deferWake: async (id: string, until: number) => {
        events.push(`deferWake:${until}`);
        await dispatch.deferWake(id, until);
      },
      recordEnqueued: async (id: string, n: number, at: number) => {
        events.push(`recordEnqueued:${n}`);
        return dispatch.recordEnqueued(id, n, at);
      },
    },
    marks: dispatch,
    tasks,
    clock: { now: () => now, sleep: async () => undefined },
    telemetry,
    settings: SETTINGS,
  });

  beforeEach(async () => {
    dispatch = new MemoryDispatchState();
    events = [];
    now = T0;
    await dispatch.markActive('s1', T0 - 8 * DAY);
  });

  it('re-sends every task of both queues as a delayed fresh copy, guarding the store before hiding each batch', async () => {
    const old = Array.from({ length: 12 }, (_, i) => msg(i, T0 - 8 * DAY));
    const { tasks, copies, deleted } = queuesWith({ 'h-s1': [msg(99, T0 - DAY)], 'q-s1': [...old] }, events);
    const telemetry = new RecordingTelemetry();
    const item = (await dispatch.read('s1'))!;
    const result = await retentionPass(depsFor(tasks, telemetry), storeOf('paused', true), item, {
      batches: 10,
    });
    const guard = `deferWake:${T0 + 900_000 + WAKE_MARGIN_MS}`;
    expect({
      result,
      events,
      copies: copies.map((c) => [c.url, c.body, c.delay]),
      deleted: deleted.length,
      counters: [
        telemetry.counters.get('TasksRefreshed{age=old}'),
        telemetry.counters.get('TasksRefreshed{age=recent}'),
      ],
      refreshedAt: (await dispatch.read('s1'))?.refreshedAt,
    }).toEqual({
      result: { refreshed: 13, complete: true },
      // Write-ahead: wakeAt past the copies' delay before each receive hides a batch; the copies count as an
      // enqueue before and after their send; each queue ends on an empty long poll.
      events: [
        guard,
        'receive:0',
        'recordEnqueued:1',
        'resend',
        'recordEnqueued:1',
        guard,
        'receive:0',
        'receive:1',
        guard,
        'receive:0',
        'recordEnqueued:10',
        'resend',
        'recordEnqueued:10',
        guard,
        'receive:0',
        'recordEnqueued:2',
        'resend',
        'recordEnqueued:2',
        guard,
        'receive:0',
        'receive:1',
      ],
      copies: [['h-s1', 'task-99', 900], ...old.map((m) => ['q-s1', m.body, 900])],
      deleted: 13,
      counters: [12, 1],
      // Raised to the pass's start less half the refresh age: a task a lease held meanwhile is the next pass's.
      refreshedAt: T0 - 3.5 * DAY,
    });
  });

  it('stops at the run’s budget without raising the bound, and leaves the rest to the next run', async () => {
    const { tasks, copies } = queuesWith(
      { 'q-s1': Array.from({ length: 25 }, (_, i) => msg(i, T0 - 8 * DAY)) },
      events,
    );
    const budget = { batches: 2 };
    const result = await retentionPass(
      depsFor(tasks),
      storeOf('paused'),
      (await dispatch.read('s1'))!,
      budget,
    );
    expect({
      result,
      copies: copies.length,
      budget,
      bound: (await dispatch.read('s1'))?.refreshedAt,
    }).toEqual({
      result: { refreshed: 20, complete: false },
      copies: 20,
      budget: { batches: 0 },
      bound: undefined,
    });
  });

  it('hides what it takes only for its own short visibility (a dead reconciler’s batch comes back)', async () => {
    const { tasks } = queuesWith({ 'q-s1': [msg(1, T0 - 8 * DAY)] }, events);
    await retentionPass(depsFor(tasks), storeOf('paused'), (await dispatch.read('s1'))!, { batches: 5 });
    expect(vi.mocked(tasks.receive).mock.calls.map((c) => c[1].visibilitySeconds)).toEqual(
      Array(3).fill(PASS_VISIBILITY_SECONDS),
    );
  });

  it('does not raise a bound that a sweep rescue lowered while it ran', async () => {
    const { tasks } = queuesWith({ 'q-s1': [msg(1, T0 - 8 * DAY)] }, events);
    const seen = (await dispatch.read('s1'))!;
    await dispatch.lowerRefreshed('s1');
    await retentionPass(depsFor(tasks), storeOf('active'), seen, { batches: 5 });
    expect((await dispatch.read('s1'))?.refreshedAt).toBe(0);
  });

  it('keeps the bound through a redrive: a message move sends every message anew', async () => {
    await dispatch.raiseRefreshed('s1', T0 - DAY, (await dispatch.read('s1'))?.refreshedAt);
    await dispatch.beginRedrive('s1', T0);
    expect((await dispatch.read('s1'))?.refreshedAt).toBe(T0 - DAY);
  });
});

describe('reconcile with the retention pass', () => {
  let dispatch: MemoryDispatchState;
  let published: AttentionMessage[];
  let deps: ReconcilerDeps;
  let queue: Record<string, ReceivedMessage[]>;
  let store: StoreRecord;
  let now: number;

  beforeEach(() => {
    now = T0;
    dispatch = new MemoryDispatchState();
    published = [];
    queue = { 'q-s1': [msg(1, T0 - 8 * DAY), msg(2, T0 - 8 * DAY)] };
    store = storeOf('paused');
    const { tasks } = queuesWith(queue, []);
    deps = {
      dispatch,
      marks: dispatch,
      tasks,
      stores: {
        get: async (id) => (id === 's1' ? store : undefined),
        create: vi.fn(),
        replace: vi.fn(),
        scan: async () => ({ stores: [] }),
      },
      queues: quietQueues(),
      attention: { publish: async (message) => void published.push(message) },
      clock: { now: () => now, sleep: async () => undefined },
      ids: { next: () => 'slot' },
      telemetry: new RecordingTelemetry(),
      settings: { attentionGraceMs: 20_000, sweepStoresPerRun: 0, retention: SETTINGS },
    };
  });

  it.each<StoreStatus>(['paused', 'maintenance', 'disabled'])(
    'refreshes a %s store’s old backlog without signalling it (the pass never delivers)',
    async (status) => {
      store = storeOf(status);
      await dispatch.markActive('s1', T0 - 7 * DAY);
      const report = await reconcile(deps);
      expect({
        refreshed: report.refreshed,
        published,
        left: queue['q-s1'],
      }).toEqual({
        refreshed: 2,
        published: [],
        left: [],
      });
    },
  );

  it('leaves a store alone until its bound is the refresh age old', async () => {
    await dispatch.markActive('s1', T0 - 7 * DAY + 1);
    expect((await reconcile(deps)).refreshed).toBe(0);
  });

  it('refreshes once per half refresh age, not at every run', async () => {
    await dispatch.markActive('s1', T0 - 7 * DAY);
    await reconcile(deps);
    queue['q-s1']?.push(msg(3, T0));
    now = T0 + 3.5 * DAY - 1;
    const early = (await reconcile(deps)).refreshed;
    now = T0 + 3.5 * DAY;
    expect([early, (await reconcile(deps)).refreshed]).toEqual([0, 1]);
  });

  it('makes a pass for a store the sweep rescued (its stranded tasks may be of any age)', async () => {
    store = storeOf('active');
    deps.settings.sweepStoresPerRun = 10;
    deps.stores.scan = async () => ({ stores: [store] });
    deps.queues.pending = async () => 2;
    await reconcile(deps);
    expect({
      bound: (await dispatch.read('s1'))?.refreshedAt,
      next: (await reconcile(deps)).refreshed,
    }).toEqual({
      bound: 0,
      next: 2,
    });
  });
});

describe('countRefreshed', () => {
  const counted = (sentAt: number[]) => {
    const telemetry = new RecordingTelemetry();
    countRefreshed(telemetry, MetricNames.tasksRefreshed, sentAt, T0);
    // Each series as recorded (the name's total aside): one emitted with 0 shows up too.
    return [...telemetry.counters.entries()].filter(([key]) => key.includes('{'));
  };

  it('counts a copy sent at the old-by instant as old, one sent a millisecond later as recent', () => {
    expect(counted([T0, T0 + 1, T0 - 5])).toEqual([
      ['TasksRefreshed{age=old}', 2],
      ['TasksRefreshed{age=recent}', 1],
    ]);
  });

  it('records no series for an age it did not see', () => {
    expect([counted([T0 + 1]), counted([T0]), counted([])]).toEqual([
      [['TasksRefreshed{age=recent}', 1]],
      [['TasksRefreshed{age=old}', 1]],
      [],
    ]);
  });
});
