import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { reconcile, REDRIVE_GRACE_MS, type ReconcilerDeps } from '../../../lambdas/core/reconcile.js';
import type { TaskQueues } from '../../../lambdas/core/ports.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { MemoryDeadLetterLedger } from '../../support/memory-dead-letter-ledger.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { quietQueues, RECONCILE_T0, reconcilerStore } from '../support/reconciler-fixtures.js';
import { WAKE_MARGIN_MS, workerTimeoutSeconds, ZOMBIE_HIDE_MS } from '../../../lambdas/core/timing.js';
import { ACTIVE_SHARDS, activeShardOf, MetricNames, SWEEP_CURSOR_ID } from '../../../lambdas/core/names.js';

const T0 = RECONCILE_T0;
const GRACE = 20_000;
const storeOf = reconcilerStore;

describe('reconcile', () => {
  let dispatch: MemoryDispatchState;
  let stores: Map<string, StoreRecord>;
  let pending: Map<string, number>;
  let published: { message: AttentionMessage; delay: number }[];
  let now: number;
  let moving: boolean;
  let telemetry: RecordingTelemetry;
  let deps: ReconcilerDeps;

  beforeEach(() => {
    now = T0;
    moving = false;
    telemetry = new RecordingTelemetry();
    dispatch = new MemoryDispatchState();
    stores = new Map();
    pending = new Map();
    published = [];
    let ids = 0;
    deps = {
      dispatch,
      stores: {
        get: async (id) => stores.get(id),
        create: vi.fn(),
        replace: vi.fn(),
        scan: async (cursor, limit) => {
          const all = [...stores.values()];
          const start = Number(cursor ?? 0);
          return {
            stores: all.slice(start, start + limit),
            ...(start + limit < all.length ? { cursor: String(start + limit) } : {}),
          };
        },
      },
      queues: quietQueues({
        redriveRunning: async () => moving,
        pending: async (url) => pending.get(url) ?? 0,
      }),
      attention: { publish: async (message, delay) => void published.push({ message, delay }) },
      clock: { now: () => now, sleep: async () => undefined },
      ids: { next: () => `new-${ids++}` },
      telemetry,
      settings: { attentionGraceMs: GRACE, sweepStoresPerRun: 10 },
    };
  });

  /** Swept stores x and y: x's audit fails (its ledger read is throttled), y has one unaccounted dead letter. */
  const auditFailsForXNotY = () => {
    for (const id of ['x', 'y']) stores.set(id, storeOf(id));
    pending.set('dlq-y', 1);
    const ledger = new MemoryDeadLetterLedger();
    const read = ledger.read.bind(ledger);
    ledger.read = async (id) => (id === 'x' ? Promise.reject(new Error('throttled')) : read(id));
    deps.deadLetterLedger = ledger;
  };

  it('reclaims an expired lease, due after its messages become visible again', async () => {
    stores.set('s1', storeOf('s1'));
    await dispatch.recordEnqueued('s1', 1, T0);
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    await dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 1 });
    now = T0 + 37_001;
    const report = await reconcile(deps);
    expect(report.repairs.reclaim).toBe(1);
    expect((await dispatch.read('s1'))?.slots['a']).toEqual({ s: 'q', at: T0 + 41_000 });
    // No one may mark the store idle before the dead lease's messages are surely visible again (race B) —
    // nor before anything its holder, if only stalled, may still hide is visible again (Lambda timeout +
    // the longest hide + skew after the lease's expiry).
    expect((await dispatch.read('s1'))?.wakeAt).toBe(T0 + 35_000 + ZOMBIE_HIDE_MS + WAKE_MARGIN_MS);
    expect(ZOMBIE_HIDE_MS).toBe((workerTimeoutSeconds() + 900) * 1000 + 2_000);
    expect(published).toEqual([
      { message: expect.objectContaining({ slotId: 'a', reason: 'reclaim' }), delay: 4 },
    ]);
  });

  it('leaves a live lease alone', async () => {
    stores.set('s1', storeOf('s1'));
    await dispatch.recordEnqueued('s1', 1, T0);
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    await dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 35_000, max: 1 });
    now = T0 + 36_000;
    expect((await reconcile(deps)).repairs).toEqual({
      reclaim: 0,
      resend: 0,
      repair: 0,
      sweep: 0,
      backfill: 0,
    });
    expect(published).toEqual([]);
  });

  it('re-announces a queued slot after the grace, then only after twice the grace', async () => {
    stores.set('s1', storeOf('s1'));
    await dispatch.recordEnqueued('s1', 1, T0);
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    now = T0 + 20_001;
    await reconcile(deps);
    now = T0 + 30_000;
    await reconcile(deps);
    now = T0 + 40_001;
    await reconcile(deps);
    expect(published.map((p) => [p.message.slotId, p.message.reason])).toEqual([
      ['a', 'resend'],
      ['a', 'resend'],
    ]);
  });

  it('gives a busy store with no slot one slot and one attention', async () => {
    stores.set('s1', storeOf('s1'));
    await dispatch.recordEnqueued('s1', 1, T0);
    const report = await reconcile(deps);
    expect(report.repairs.repair).toBe(1);
    expect(Object.keys((await dispatch.read('s1'))?.slots ?? {})).toEqual(['new-0']);
  });

  it('skips paused stores', async () => {
    stores.set('s1', storeOf('s1', 'paused'));
    await dispatch.recordEnqueued('s1', 1, T0);
    expect((await reconcile(deps)).checked).toBe(0);
    expect(published).toEqual([]);
  });

  it('reads nothing but the index for idle stores', async () => {
    stores.set('idle', storeOf('idle'));
    await dispatch.ensure('idle');
    const get = vi.spyOn(deps.stores, 'get');
    deps.settings.sweepStoresPerRun = 0;
    expect((await reconcile(deps)).checked).toBe(0);
    expect(get).not.toHaveBeenCalled();
  });

  it('sweeps a page of stores per run and signals an untracked backlog', async () => {
    for (const id of ['a', 'b', 'c']) stores.set(id, storeOf(id));
    for (const id of ['a', 'b', 'c']) await dispatch.ensure(id);
    pending.set('q-b', 4);
    deps.settings.sweepStoresPerRun = 2;
    const first = await reconcile(deps);
    const second = await reconcile(deps);
    expect([first.swept, second.swept]).toEqual([2, 1]);
    expect(first.repairs.sweep + second.repairs.sweep).toBe(1);
    expect(published.map((p) => [p.message.storeId, p.message.reason])).toEqual([['b', 'sweep']]);
    expect((await dispatch.read('b'))?.activeShard).toBeDefined();
  });

  it('sweeps a store whose only backlog is in its high-priority queue (task priority)', async () => {
    stores.set('h', { ...storeOf('h'), priorityQueueUrl: 'hq-h' });
    stores.set('i', { ...storeOf('i'), priorityQueueUrl: 'hq-i' });
    for (const id of ['h', 'i']) await dispatch.ensure(id);
    pending.set('hq-h', 2);
    const asked: string[] = [];
    const count = deps.queues.pending;
    deps.queues.pending = async (url) => (asked.push(url), count(url));
    await reconcile(deps);
    expect(published.map((p) => [p.message.storeId, p.message.reason])).toEqual([['h', 'sweep']]);
    // The high queue first; the work queue only when it is empty: one request for h, two for idle i.
    expect(asked.sort()).toEqual(['hq-h', 'hq-i', 'q-i']);
  });

  describe('dead letters SQS moved by itself (issue #12)', () => {
    it('reports a swept store’s dead letter the worker did not write, in the report and the metric', async () => {
      stores.set('m', storeOf('m'));
      pending.set('dlq-m', 1);
      deps.deadLetterLedger = new MemoryDeadLetterLedger();
      const report = await reconcile(deps);
      expect({
        report: report.deadLettersUnaccounted,
        metric: telemetry.counters.get(MetricNames.deadLettersUnaccounted),
      }).toEqual({ report: 1, metric: 1 });
    });

    it('adds up the dead letters of the stores it audits side by side', async () => {
      for (const id of ['m', 'n', 'o']) stores.set(id, storeOf(id));
      pending.set('dlq-m', 1);
      pending.set('dlq-n', 2);
      pending.set('dlq-o', 3);
      deps.deadLetterLedger = new MemoryDeadLetterLedger();
      expect((await reconcile(deps)).deadLettersUnaccounted).toBe(6);
    });

    it('audits a paused store’s DLQ too', async () => {
      stores.set('p', storeOf('p', 'paused'));
      pending.set('dlq-p', 2);
      deps.deadLetterLedger = new MemoryDeadLetterLedger();
      expect((await reconcile(deps)).deadLettersUnaccounted).toBe(2);
    });

    it('counts zero every run, so the alarm has data', async () => {
      deps.deadLetterLedger = new MemoryDeadLetterLedger();
      await reconcile(deps);
      expect(telemetry.counters.get(MetricNames.deadLettersUnaccounted)).toBe(0);
    });

    it('goes on sweeping when one store’s audit fails', async () => {
      auditFailsForXNotY();
      const report = await reconcile(deps);
      expect({ swept: report.swept, unaccounted: report.deadLettersUnaccounted }).toEqual({
        swept: 2,
        unaccounted: 1,
      });
    });
  });

  describe('at the edges (issue #10)', () => {
    it('signals a store marked active before the index had its sort key (no headSentAt: in no index)', async () => {
      stores.set('old', storeOf('old'));
      await dispatch.recordEnqueued('old', 1, T0);
      delete (dispatch.items.get('old') as { headSentAt?: number }).headSentAt;
      pending.set('q-old', 3);
      deps.settings.sweepStoresPerRun = 10;
      const report = await reconcile(deps);
      expect({
        sweep: report.repairs.sweep,
        indexed: (await dispatch.listActive(activeShardOf('old'), undefined, 10)).storeIds,
      }).toEqual({
        sweep: 1,
        indexed: ['old'],
      });
    });

    it('keeps a redrive mark while the move runs, and past it only after the grace', async () => {
      stores.set('r', storeOf('r'));
      await dispatch.beginRedrive('r', T0);
      await dispatch.issueSlot('r', 'a', T0, 1, T0);
      const markAfter = async (at: number, running: boolean) => {
        now = at;
        moving = running;
        await reconcile(deps);
        return (await dispatch.read('r'))?.redriveAt;
      };
      expect([
        await markAfter(T0 + 60_000, false), // within the grace: the move may not show yet
        await markAfter(T0 + 180_000, true), // running
        await markAfter(T0 + 240_000, false), // ended
      ]).toEqual([T0, T0, undefined]);
    });
  });

  describe('at its boundaries (what mutation testing found unpinned)', () => {
    /** A store whose one slot is leased at T0, expiring at T0 + 35 s. */
    const leased = async (storeId = 's1'): Promise<void> => {
      stores.set(storeId, storeOf(storeId));
      await dispatch.recordEnqueued(storeId, 1, T0);
      await dispatch.issueSlot(storeId, 'a', T0, 1, T0);
      await dispatch.acquire(storeId, 'a', { now: T0, expiresAt: T0 + 35_000, max: 1 });
    };

    it.each([
      { after: 2_000, reclaimed: 0 },
      { after: 2_001, reclaimed: 1 },
    ])(
      'reclaims a lease only more than the clock skew after it expired ($after ms)',
      async ({ after, reclaimed }) => {
        await leased();
        now = T0 + 35_000 + after;
        expect((await reconcile(deps)).repairs.reclaim).toBe(reclaimed);
        expect(published).toHaveLength(reclaimed);
      },
    );

    it('publishes nothing for a reclaim the lease holder beat (its fence moved on)', async () => {
      await leased();
      now = T0 + 40_000;
      vi.spyOn(dispatch, 'reclaim').mockResolvedValue({ ok: false, current: undefined });
      const report = await reconcile(deps);
      expect(report.repairs.reclaim).toBe(0);
      expect(published).toEqual([]);
      expect(telemetry.counters.get(MetricNames.reconcilerRepairs)).toBeUndefined();
    });

    it.each([
      { at: GRACE, resent: 0 },
      { at: GRACE + 1, resent: 1 },
    ])(
      're-announces a queued slot only more than the grace after it was due ($at ms)',
      async ({ at, resent }) => {
        stores.set('s1', storeOf('s1'));
        await dispatch.recordEnqueued('s1', 1, T0);
        await dispatch.issueSlot('s1', 'a', T0, 1, T0);
        now = T0 + at;
        expect((await reconcile(deps)).repairs.resend).toBe(resent);
      },
    );

    it('doubles the grace per resend: 1, 2, 4, 8 graces after it was due', async () => {
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      const resentAt: number[] = [];
      for (let t = 0; t <= 9 * GRACE; t += GRACE / 4) {
        now = T0 + t + 1;
        if ((await reconcile(deps)).repairs.resend > 0) resentAt.push(t);
      }
      expect(resentAt).toEqual([GRACE, 2 * GRACE, 4 * GRACE, 8 * GRACE]);
    });

    it('publishes nothing for a resend another run already noted', async () => {
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      now = T0 + GRACE + 1;
      vi.spyOn(dispatch, 'noteResend').mockResolvedValue({ ok: false, current: undefined });
      expect((await reconcile(deps)).repairs.resend).toBe(0);
      expect(published).toEqual([]);
    });

    it('resends nothing when the slot was re-queued after the run read it (it has its own attention)', async () => {
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await dispatch.issueSlot('s1', 'a', T0, 1, T0);
      now = T0 + GRACE + 1;
      // Between the run's read and its resend, the late attention takes the slot and a slice re-queues it.
      const read = dispatch.read.bind(dispatch);
      vi.spyOn(dispatch, 'read').mockImplementationOnce(async (id) => {
        const seen = await read(id);
        await dispatch.acquire('s1', 'a', { now, expiresAt: now + 35_000, max: 1 });
        await dispatch.requeue('s1', 'a', 1, { dueAt: now + 60_000, max: 1, nextCallAt: now });
        return seen;
      });
      expect((await reconcile(deps)).repairs.resend).toBe(0);
      expect(published).toEqual([]);
      expect((await dispatch.read('s1'))?.slots['a']).toEqual({ s: 'q', at: now + 60_000, n: now });
    });

    it('asks for no new slot when the store already holds one', async () => {
      await leased();
      now = T0 + 1_000;
      const issue = vi.spyOn(dispatch, 'issueSlot');
      await reconcile(deps);
      expect(issue).not.toHaveBeenCalled();
      expect(telemetry.counters.get(MetricNames.attentionsCoalesced)).toBeUndefined();
    });

    it('counts each repair by kind and the stores it checked', async () => {
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await reconcile(deps);
      expect(
        telemetry.counters.get(RecordingTelemetry.key(MetricNames.reconcilerRepairs, { kind: 'repair' })),
      ).toBe(1);
      expect(telemetry.counters.get(MetricNames.reconcilerStoresChecked)).toBe(1);
    });

    it('names its attentions after the run: reconcile-<start time>', async () => {
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await reconcile(deps);
      expect(published.map((p) => p.message.correlationId)).toEqual([
        `reconcile-${new Date(T0).toISOString()}`,
      ]);
    });

    it('reads every active shard once, and every page of each', async () => {
      for (const id of ['s1', 's2', 's3']) {
        stores.set(id, storeOf(id));
        await dispatch.recordEnqueued(id, 1, T0);
      }
      const list = dispatch.listActive.bind(dispatch);
      // One store per page, so a store is only reached by following the cursor.
      const spy = vi
        .spyOn(dispatch, 'listActive')
        .mockImplementation((shard, cursor) => list(shard, cursor, 1));
      const report = await reconcile(deps);
      expect(report.checked).toBe(3);
      expect(report.repairs.repair).toBe(3);
      const shards = new Set(spy.mock.calls.map(([shard]) => shard));
      expect([...shards].sort()).toEqual(Array.from({ length: ACTIVE_SHARDS }, (_, i) => String(i)).sort());
    });

    it('checks the other stores when one of them fails', async () => {
      for (const id of ['s1', 's2']) {
        stores.set(id, storeOf(id));
        await dispatch.recordEnqueued(id, 1, T0);
      }
      const get = deps.stores.get.bind(deps.stores);
      deps.stores.get = async (id) => {
        if (id === 's1') throw new Error('throttled');
        return get(id);
      };
      const report = await reconcile(deps);
      expect(report.repairs.repair).toBe(1);
      expect(published.map((p) => p.message.storeId)).toEqual(['s2']);
    });

    it('does not sweep at all when the sweep is off', async () => {
      stores.set('b', storeOf('b'));
      pending.set('q-b', 4);
      deps.settings.sweepStoresPerRun = 0;
      const scan = vi.spyOn(deps.stores, 'scan');
      const cursor = vi.spyOn(dispatch, 'writeCursor');
      expect((await reconcile(deps)).swept).toBe(0);
      expect(scan).not.toHaveBeenCalled();
      expect(cursor).not.toHaveBeenCalled();
    });

    it('sweeps past a paused store with a backlog, and leaves a tracked store to the index', async () => {
      stores.set('p', storeOf('p', 'paused'));
      stores.set('t', storeOf('t'));
      await dispatch.ensure('p');
      await dispatch.recordEnqueued('t', 1, T0);
      await dispatch.issueSlot('t', 'a', T0, 1, T0);
      pending.set('q-p', 3);
      pending.set('q-t', 3);
      const mark = vi.spyOn(dispatch, 'markActive');
      const report = await reconcile(deps);
      expect(report.swept).toBe(2);
      expect(report.repairs.sweep).toBe(0);
      expect(mark).not.toHaveBeenCalled();
      expect(published).toEqual([]);
    });

    it('carries the sweep cursor from run to run', async () => {
      for (const id of ['a', 'b', 'c']) stores.set(id, storeOf(id));
      deps.settings.sweepStoresPerRun = 2;
      await reconcile(deps);
      expect(await dispatch.readCursor(SWEEP_CURSOR_ID)).toBe('2');
      await reconcile(deps);
      expect(await dispatch.readCursor(SWEEP_CURSOR_ID)).toBeUndefined();
    });

    it('sweeps a store with a backlog that has no dispatch item yet: marks it active and signals it', async () => {
      stores.set('n', storeOf('n'));
      pending.set('q-n', 2);
      const report = await reconcile(deps);
      expect(report.repairs.sweep).toBe(1);
      expect((await dispatch.read('n'))?.activeShard).toBeDefined();
      expect(published.map((p) => [p.message.storeId, p.message.reason])).toEqual([['n', 'sweep']]);
    });
  });

  describe('what it tells the operator (mutation survivors)', () => {
    let logs: LogRecord[];
    const logged = (message: string) => logs.filter((l) => l.message === message).map((l) => l.fields);

    beforeEach(() => {
      logs = [];
      deps.telemetry = new RecordingTelemetry((record) => void logs.push(record), 'info');
    });

    it('logs each repair with its store, tenant and kind', async () => {
      // Busy, with no slot: it is given one.
      stores.set('s1', storeOf('s1'));
      await dispatch.recordEnqueued('s1', 1, T0);
      await reconcile(deps);
      expect(logged('reconciler repaired a store')).toEqual([
        expect.objectContaining({ storeId: 's1', tenantId: 't', kind: 'repair' }),
      ]);
    });

    it('logs a redrive’s end with when it started', async () => {
      stores.set('r', storeOf('r'));
      await dispatch.beginRedrive('r', T0);
      await dispatch.issueSlot('r', 'a', T0, 1, T0);
      now = T0 + 240_000;
      await reconcile(deps);
      expect(logged('redrive ended')).toEqual([
        expect.objectContaining({ storeId: 'r', tenantId: 't', startedAt: T0 }),
      ]);
    });

    it('warns of an untracked backlog the sweep found, with the store, its tenant and what was pending', async () => {
      stores.set('n', storeOf('n'));
      pending.set('q-n', 2);
      await reconcile(deps);
      expect(logged('sweep found an untracked backlog')).toEqual([
        expect.objectContaining({ storeId: 'n', tenantId: 't', pending: 2 }),
      ]);
    });

    it('logs an audit it could not make with the store and the error, and counts the other stores’', async () => {
      auditFailsForXNotY();
      const report = await reconcile(deps);
      expect({
        unaccounted: report.deadLettersUnaccounted,
        logged: logged('reconciler could not audit a dead-letter queue'),
      }).toEqual({
        unaccounted: 1,
        logged: [expect.objectContaining({ storeId: 'x', error: 'Error: throttled' })],
      });
    });

    it('counts a sweep repair by its kind', async () => {
      stores.set('n', storeOf('n'));
      pending.set('q-n', 2);
      await reconcile(deps);
      expect(
        (deps.telemetry as RecordingTelemetry).total(MetricNames.reconcilerRepairs, { kind: 'sweep' }),
      ).toBe(1);
    });

    it('sweeps at most 8 stores side by side', async () => {
      for (let i = 0; i < 12; i++) stores.set(`c${i}`, storeOf(`c${i}`));
      deps.settings.sweepStoresPerRun = 12;
      let open = 0;
      let most = 0;
      deps.queues.pending = async () => {
        open++;
        most = Math.max(most, open);
        await new Promise((resolve) => setTimeout(resolve, 5));
        open--;
        return 0;
      };
      await reconcile(deps);
      expect(most).toBe(8);
    });

    it.each([
      { after: REDRIVE_GRACE_MS, mark: T0 },
      { after: REDRIVE_GRACE_MS + 1, mark: undefined },
    ])('ends a redrive mark only more than the grace after it ($after ms)', async ({ after, mark }) => {
      stores.set('r', storeOf('r'));
      await dispatch.beginRedrive('r', T0);
      await dispatch.issueSlot('r', 'a', T0, 1, T0);
      now = T0 + after;
      await reconcile(deps);
      expect((await dispatch.read('r'))?.redriveAt).toBe(mark);
    });

    describe('and its retention pass', () => {
      const DAY = 24 * 3600 * 1000;
      let receive: ReturnType<typeof vi.fn>;

      beforeEach(async () => {
        receive = vi.fn(async () => []);
        deps.tasks = { receive, resend: vi.fn(async () => undefined) } as unknown as TaskQueues;
        deps.marks = dispatch;
        deps.settings.retention = { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun: 10 };
        // Active for eight days: its backlog is due a pass.
        await dispatch.markActive('s1', T0 - 8 * DAY);
      });

      it('leaves a deleted store’s item alone, without an error', async () => {
        await reconcile(deps);
        expect({
          receives: receive.mock.calls.length,
          errors: logs.filter((l) => l.level === 'error'),
        }).toEqual({
          receives: 0,
          errors: [],
        });
      });

      it.each(['tasks', 'marks', 'settings'] as const)(
        'makes no pass, and logs no error, without its %s',
        async (missing) => {
          stores.set('s1', storeOf('s1'));
          if (missing === 'settings') delete deps.settings.retention;
          else delete deps[missing];
          const report = await reconcile(deps);
          expect({
            refreshed: report.refreshed,
            receives: receive.mock.calls.length,
            errors: logs.filter((l) => l.level === 'error'),
          }).toEqual({ refreshed: 0, receives: 0, errors: [] });
        },
      );
    });

    it('ends its telemetry scope (the metrics flush) once, also when the run fails', async () => {
      const telemetry = deps.telemetry as RecordingTelemetry;
      const scope = telemetry.scoped.bind(telemetry);
      const ends: ReturnType<typeof vi.fn>[] = [];
      vi.spyOn(telemetry, 'scoped').mockImplementation((fields) => {
        const end = vi.fn();
        ends.push(end);
        return Object.assign(scope(fields), { end });
      });
      vi.spyOn(dispatch, 'listActive').mockRejectedValue(new Error('DynamoDB unavailable'));
      await expect(reconcile(deps)).rejects.toThrow('DynamoDB unavailable');
      expect(ends.map((end) => end.mock.calls.length)).toEqual([1]);
    });
  });
});
