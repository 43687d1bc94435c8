import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { ACTIVE_SHARDS, MetricNames, SWEEP_CURSOR_ID } from '../../../lambdas/core/names.js';
import { reconcile, type ReconcilerDeps } from '../../../lambdas/core/reconcile.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

const T0 = 1_800_000_000_000;
const GRACE = 20_000;
const storeOf = (storeId: string, status: StoreStatus = 'active'): StoreRecord => ({
  storeId,
  tenantId: 't',
  marketplace: 'amazon',
  plan: 'basic',
  status,
  queueUrl: `q-${storeId}`,
  deadLetterQueueUrl: `dlq-${storeId}`,
  createdAt: T0,
  updatedAt: T0,
});

describe('reconcile at its boundaries', () => {
  let dispatch: MemoryDispatchState;
  let stores: Map<string, StoreRecord>;
  let pending: Map<string, number>;
  let published: { message: AttentionMessage; delay: number }[];
  let telemetry: RecordingTelemetry;
  let now: number;
  let deps: ReconcilerDeps;

  beforeEach(() => {
    now = T0;
    dispatch = new MemoryDispatchState();
    stores = new Map();
    pending = new Map();
    published = [];
    telemetry = new RecordingTelemetry();
    let ids = 0;
    deps = {
      dispatch,
      stores: {
        get: async (id) => stores.get(id),
        create: vi.fn(),
        put: vi.fn(),
        scan: async (cursor, limit) => {
          const all = [...stores.values()];
          const start = Number(cursor ?? 0);
          return {
            stores: all.slice(start, start + limit),
            ...(start + limit < all.length ? { cursor: String(start + limit) } : {}),
          };
        },
      },
      queues: {
        createStoreQueues: vi.fn(),
        counts: vi.fn(),
        redrive: vi.fn(),
        redriveRunning: async () => false,
        purge: vi.fn(),
        pending: async (url) => pending.get(url) ?? 0,
      },
      attention: { publish: async (message, delay) => void published.push({ message, delay }) },
      clock: { now: () => now, sleep: async () => undefined },
      ids: { next: () => `new-${ids++}` },
      telemetry,
      settings: { attentionGraceMs: GRACE, sweepStoresPerRun: 10 },
    };
  });

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
