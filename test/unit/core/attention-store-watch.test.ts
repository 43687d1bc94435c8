import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handleAttention } from '../../../lambdas/core/attention.js';
import type { Campaign, CampaignOwner } from '../../../lambdas/core/campaigns.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { STORE_RECHECK_MS } from '../../../lambdas/core/timing.js';
import { attentionFor, proStore, T0, workerWorld, type WorkerWorld } from '../support/attention-world.js';

/**
 * Invariant 13 within STORE_RECHECK_MS: a worker whose store is paused, disabled, or given a lower cap or rate
 * while its slice runs stops calling within a second, and its slot follows the store as it now is.
 */
const iso = (ms: number) => new Date(ms).toISOString();
// pro with 3 consumers; 1,000/s so only the calls' own time (400 ms each) spaces them.
const store = proStore({ ratePerSecond: 1000 });
const attention = attentionFor('a');

describe('a worker whose store changes under its slice', () => {
  let w: WorkerWorld;
  /** Applied to the store record as the n-th call (from 1) answers. */
  let changeAt: { call: number; record: StoreRecord } | undefined;
  let lists: Record<string, Campaign[]>;
  let reads: number[];

  beforeEach(async () => {
    w = await workerWorld({ store });
    await w.dispatch.issueSlot('s1', 'a', T0, 3, T0);
    w.backlog = 10;
    changeAt = undefined;
    lists = {};
    reads = [];
    let calls = 0;
    w.deps.marketplace.deliver = vi.fn(async () => {
      w.now += 400;
      if (++calls === changeAt?.call) w.store = changeAt.record;
      return { kind: 'ok' as const, status: 200 };
    });
    const get = w.deps.stores.get;
    w.deps.stores.get = vi.fn(async (storeId: string) => {
      reads.push(w.now - T0);
      return get(storeId);
    });
    w.deps.campaigns = {
      read: async (owner: CampaignOwner) => ({ rev: 1, campaigns: lists[owner.scope] ?? [] }),
      write: vi.fn(),
    };
  });

  it('stops calling within a second of a pause, hands its messages back, and its slot is dropped', async () => {
    // Paused as the second call answers (T0 + 800): the third call (T0 + 800) goes on the read at T0; the
    // fourth (T0 + 1,200) reads first, finds the pause, and is not made.
    changeAt = { call: 2, record: { ...store, status: 'paused' } };
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({
      kind: 'sliced',
      slice: { end: 'store_changed', delivered: 3, resumeAt: T0 + 1_200 },
    });
    expect(reads).toEqual([0, 1_200]);
    expect(w.deps.marketplace.deliver).toHaveBeenCalledTimes(3);
    expect(w.deps.tasks.changeVisibility).toHaveBeenCalledWith(
      'q',
      Array.from({ length: 7 }, (_, i) => ({ receiptHandle: `r${6 - i}`, seconds: 0 })),
    );
    // Requeued for now; that attention finds the store paused and drops the slot (resuming issues a fresh one).
    const requeued = w.published.filter((p) => p.message.reason === 'requeue');
    expect(requeued.map((p) => [p.message.slotId, p.delay])).toEqual([['a', 0]]);
    expect(await handleAttention(w.deps, requeued[0]!.message)).toEqual({
      kind: 'discarded',
      reason: 'paused',
    });
    // (And the slot its slow calls fanned out, when its attention comes.)
    const fanout = w.published.find((p) => p.message.reason === 'fanout');
    expect(await handleAttention(w.deps, fanout!.message)).toMatchObject({
      kind: 'discarded',
      reason: 'paused',
    });
    expect((await w.dispatch.read('s1'))?.slots).toEqual({});
  });

  it('stops on a disable likewise', async () => {
    changeAt = { call: 1, record: { ...store, status: 'disabled' } };
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'store_changed', delivered: 3 } });
  });

  it('under a lowered cap, requeues its slot under the cap just read (dropped when over it)', async () => {
    await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
    await w.dispatch.issueSlot('s1', 'c', T0, 3, T0);
    changeAt = {
      call: 1,
      record: { ...store, overrides: { ...store.overrides, maxConcurrentConsumers: 2 } },
    };
    const requeue = vi.spyOn(w.dispatch, 'requeue');
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'store_changed', delivered: 3 } });
    expect((requeue.mock.calls[0]?.[3] as { max: number }).max).toBe(2);
    // Three slots over a cap of two: this one goes, the others carry on.
    expect(Object.keys((await w.dispatch.read('s1'))?.slots ?? {}).sort()).toEqual(['b', 'c']);
    expect(w.published).toEqual([]);
  });

  it('under a lowered rate, requeues at once: its next lease paces at the new rate', async () => {
    changeAt = { call: 1, record: { ...store, overrides: { ...store.overrides, ratePerSecond: 2 } } };
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'store_changed', delivered: 3 } });
    expect(w.published.filter((p) => p.message.reason === 'requeue').map((p) => p.message.slotId)).toEqual([
      'a',
    ]);
  });

  it('goes on under a raised cap or rate, to its own end', async () => {
    changeAt = {
      call: 1,
      record: { ...store, overrides: { ...store.overrides, ratePerSecond: 2000, maxConcurrentConsumers: 5 } },
    };
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { delivered: 10 } });
    // One read per second of the slice (4 s of calls), each a second after the one before began.
    expect(reads).toEqual([0, 1_200, 2_400, 3_600]);
  });

  it('stops at a campaign’s start that lowers the rate, known from its first read', async () => {
    lists['store'] = [
      {
        campaignId: 'quiet',
        from: iso(T0 + 1_000),
        until: iso(T0 + 60_000),
        overrides: { ratePerSecond: 1 },
        createdAt: iso(T0),
        updatedAt: iso(T0),
      },
    ];
    const outcome = await handleAttention(w.deps, attention);
    // Calls at T0, +400, +800; the one at +1,200 is past the campaign's start.
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'store_changed', delivered: 3 } });
  });

  it('ends as an error when its re-read fails, and backs off', async () => {
    const get = w.deps.stores.get;
    let n = 0;
    w.deps.stores.get = vi.fn(async (storeId: string) => {
      if (++n === 2) throw new Error('store read failed');
      return get(storeId);
    });
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'error', delivered: 3 } });
    expect(n).toBe(2);
  });

  it('reads the store no more than once a second', async () => {
    expect(STORE_RECHECK_MS).toBe(1_000);
    await handleAttention(w.deps, attention);
    expect(reads).toEqual([0, 1_200, 2_400, 3_600]);
  });
});
