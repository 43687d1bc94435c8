import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Campaign, CampaignOwner, StoreCampaigns } from '../../../lambdas/core/campaigns.js';
import { NO_CAMPAIGNS } from '../../../lambdas/core/campaigns.js';
import { resolvePolicy, type Policy } from '../../../lambdas/core/plans.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { StoreWatch, WATCH_RULES, type StoreWatchDeps } from '../../../lambdas/core/store-watch.js';
import { STORE_RECHECK_MS } from '../../../lambdas/core/timing.js';
import { SLICE_T0 as T0, sliceStore } from '../support/slice-fixtures.js';

/** Invariant 13 within STORE_RECHECK_MS: what a running slice's re-read of its store answers, and when it reads. */
const iso = (ms: number) => new Date(ms).toISOString();
const pro = sliceStore({ plan: 'pro' });
/** The pro plan's policy: 3 consumers, 20/s. */
const proPolicy: Policy = resolvePolicy('pro', undefined);
const campaign = (from: number, until: number, overrides: Campaign['overrides']): Campaign => ({
  campaignId: 'c1',
  from: iso(from),
  until: iso(until),
  ...(overrides ? { overrides } : {}),
  createdAt: iso(T0),
  updatedAt: iso(T0),
});

describe('StoreWatch', () => {
  let now: number;
  /** What the Stores table answers now, and how long each read takes. */
  let record: StoreRecord | undefined;
  let readMs: number;
  let lists: Record<string, Campaign[]>;
  let deps: StoreWatchDeps & { stores: { get: ReturnType<typeof vi.fn> } };
  /** When each read began. */
  let reads: number[];

  const watch = (first: StoreRecord = pro, campaigns: StoreCampaigns = NO_CAMPAIGNS, readAt = T0) =>
    new StoreWatch(deps, first, campaigns, readAt);

  beforeEach(() => {
    now = T0;
    record = pro;
    readMs = 0;
    lists = {};
    reads = [];
    deps = {
      clock: { now: () => now, sleep: async (ms: number) => void (now += ms) },
      stores: {
        get: vi.fn(async (storeId: string) => {
          expect(storeId).toBe('s1');
          reads.push(now);
          now += readMs;
          return record;
        }),
        create: vi.fn(),
        replace: vi.fn(),
        scan: vi.fn(),
      },
      campaigns: {
        read: async (owner: CampaignOwner) => ({ rev: 1, campaigns: lists[owner.scope] ?? [] }),
        write: vi.fn(),
      },
    } as unknown as typeof deps;
  });

  it('does not read again within STORE_RECHECK_MS of the read it started with, whatever the table says', async () => {
    const w = watch();
    record = { ...pro, status: 'paused' };
    now = T0 + STORE_RECHECK_MS - 1;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
    expect(reads).toEqual([]);
  });

  it('reads again once STORE_RECHECK_MS has passed since the last read began, and ends on a pause', async () => {
    const w = watch();
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
    expect(reads).toEqual([T0 + STORE_RECHECK_MS]);
    record = { ...pro, status: 'paused' };
    now = T0 + 2 * STORE_RECHECK_MS - 1;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
    now = T0 + 2 * STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    expect(reads).toEqual([T0 + STORE_RECHECK_MS, T0 + 2 * STORE_RECHECK_MS]);
  });

  it.each(['paused', 'maintenance', 'disabled'] as const)('ends on %s', async (status) => {
    const w = watch();
    record = { ...pro, status };
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
  });

  it('ends when the store was deleted, and keeps the policy of the record it last had', async () => {
    const w = watch();
    record = undefined;
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    expect(w.policyAt(now).policy).toEqual(proPolicy);
  });

  it.each([
    ['a lowered cap', { maxConcurrentConsumers: 2 }, 'changed'],
    ['a lowered rate', { ratePerSecond: 19 }, 'changed'],
    ['a raised cap', { maxConcurrentConsumers: 4 }, 'go'],
    ['a raised rate', { ratePerSecond: 21 }, 'go'],
    ['fewer messages per slice', { maxMessagesPerSlice: 1 }, 'go'],
    ['a shorter slice', { maxSliceSeconds: 1 }, 'go'],
  ] as const)('%s: %s', async (_what, overrides, verdict) => {
    const w = watch();
    record = { ...pro, overrides };
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe(verdict);
    // The end of the slice goes by the record just read.
    expect(w.policyAt(now).policy).toEqual({ ...proPolicy, ...overrides });
  });

  it('ends at a known campaign’s start that lowers the rate, without reading again', async () => {
    const campaigns = { store: [campaign(T0 + 500, T0 + 60_000, { ratePerSecond: 1 })], tenant: [] };
    const w = watch(pro, campaigns);
    now = T0 + 499;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
    now = T0 + 500;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    expect(reads).toEqual([]);
  });

  it('reads the campaigns again with the store: a tenant campaign put since that lowers the cap ends it', async () => {
    const w = watch();
    lists['tenant'] = [campaign(T0 - 1_000, T0 + 60_000, { maxConcurrentConsumers: 1 })];
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    expect(w.policyAt(now)).toMatchObject({ source: 'campaign', scope: 'tenant' });
  });

  it('reads no campaigns without a campaign book', async () => {
    const { campaigns: _none, ...bare } = deps;
    const w = new StoreWatch(bare, pro, NO_CAMPAIGNS, T0);
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
  });

  it('measures from when a read began: a slow read is followed by another before the call', async () => {
    const w = watch();
    now = T0 + STORE_RECHECK_MS;
    readMs = STORE_RECHECK_MS;
    record = { ...pro, status: 'paused' };
    // The first read takes the whole interval: what it returned may be a second old, so it reads again; the
    // second (quick) one is what counts.
    deps.stores.get.mockImplementationOnce(async () => {
      reads.push(now);
      now += STORE_RECHECK_MS;
      return pro;
    });
    readMs = 10;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    expect(reads).toEqual([T0 + STORE_RECHECK_MS, T0 + 2 * STORE_RECHECK_MS]);
    // The next read is due a second after the last one began, not after it answered.
    now = T0 + 3 * STORE_RECHECK_MS - 1;
    record = pro;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('changed');
    now = T0 + 3 * STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + 20_000)).toBe('go');
    expect(reads).toHaveLength(3);
  });

  it('answers late once the deadline has passed: with no read when one is due, and after a read that ran past it', async () => {
    const w = watch();
    now = T0 + STORE_RECHECK_MS;
    expect(await w.recheck(proPolicy, T0 + STORE_RECHECK_MS)).toBe('late');
    expect(reads).toEqual([]);
    // The read starts before the deadline and ends after it: no call may start then (invariant 4).
    readMs = 900;
    expect(await w.recheck(proPolicy, T0 + STORE_RECHECK_MS + 1)).toBe('late');
    expect(reads).toEqual([T0 + STORE_RECHECK_MS]);
    // A fresh view before the deadline goes; at the deadline itself, no call.
    expect(await w.recheck(proPolicy, now + 1)).toBe('go');
    expect(await w.recheck(proPolicy, now)).toBe('late');
  });

  it('lets a read’s failure through to the slice', async () => {
    const w = watch();
    deps.stores.get.mockRejectedValueOnce(new Error('throttled'));
    now = T0 + STORE_RECHECK_MS;
    await expect(w.recheck(proPolicy, T0 + 20_000)).rejects.toThrow('throttled');
  });

  it('keeps a slice under an equal policy and ends it under any lower cap or rate (WATCH_RULES)', () => {
    expect(WATCH_RULES.recheckMs).toBe(STORE_RECHECK_MS);
    expect(STORE_RECHECK_MS).toBe(1_000);
    expect(WATCH_RULES.keeps(proPolicy, proPolicy)).toBe(true);
    expect(WATCH_RULES.keeps(proPolicy, { ...proPolicy, ratePerSecond: 19.99 })).toBe(false);
    expect(WATCH_RULES.keeps(proPolicy, { ...proPolicy, maxConcurrentConsumers: 2 })).toBe(false);
  });
});
