import { describe, expect, it } from 'vitest';
import {
  campaignState,
  CampaignTransitions,
  effectivePolicy,
  ENDED_CAMPAIGN_KEEP_MS,
  NO_CAMPAIGNS,
  PutCampaignBody,
  winningCampaign,
  withCampaign,
  type Campaign,
} from '../../../lambdas/core/campaigns.js';
import { resolvePolicy } from '../../../lambdas/core/plans.js';

const T = Date.parse('2026-11-27T00:00:00.000Z');
const H = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const campaign = (id: string, from: number, until: number, extra: Partial<Campaign> = {}): Campaign => ({
  campaignId: id,
  from: iso(from),
  until: iso(until),
  createdAt: iso(T - 24 * H),
  updatedAt: iso(T - 24 * H),
  ...extra,
});
const store = { plan: 'pro' as const, overrides: { ratePerSecond: 7 } };

describe('campaignState: from inclusive, until exclusive', () => {
  const c = campaign('c', T, T + H);
  it.each([
    [T - 1, 'scheduled'],
    [T, 'active'],
    [T + H - 1, 'active'],
    [T + H, 'ended'],
  ] as const)('at %i it is %s', (now, state) => {
    expect(campaignState(c, now)).toBe(state);
  });
});

describe('effectivePolicy', () => {
  it('is the store’s own policy with no campaign, or none active', () => {
    const own = { plan: 'pro', policy: resolvePolicy('pro', { ratePerSecond: 7 }), source: 'store' };
    expect(effectivePolicy(store, NO_CAMPAIGNS, T)).toEqual(own);
    const later = { store: [campaign('later', T + H, T + 2 * H, { plan: 'enterprise' })], tenant: [] };
    expect(effectivePolicy(store, later, T)).toEqual(own);
    expect(effectivePolicy(store, later, T + 2 * H)).toEqual(own);
  });

  it('applies a campaign from its first millisecond to the one before until, and reverts at until', () => {
    const list = { store: [campaign('bf', T, T + H, { plan: 'enterprise' })], tenant: [] };
    expect(effectivePolicy(store, list, T - 1).source).toBe('store');
    expect(effectivePolicy(store, list, T)).toMatchObject({
      source: 'campaign',
      campaignId: 'bf',
      scope: 'store',
    });
    expect(effectivePolicy(store, list, T + H - 1).plan).toBe('enterprise');
    expect(effectivePolicy(store, list, T + H)).toMatchObject({ source: 'store', plan: 'pro' });
  });

  it('replaces the store’s plan and overrides with a campaign that names a plan, its overrides last', () => {
    const list = {
      store: [campaign('bf', T, T + H, { plan: 'enterprise', overrides: { maxConcurrentConsumers: 4 } })],
      tenant: [],
    };
    expect(effectivePolicy(store, list, T)).toEqual({
      plan: 'enterprise',
      policy: { ...resolvePolicy('enterprise', undefined), maxConcurrentConsumers: 4 },
      source: 'campaign',
      campaignId: 'bf',
      scope: 'store',
    });
  });

  it('layers a campaign without a plan on the store’s own plan and overrides', () => {
    const list = {
      store: [],
      tenant: [campaign('t', T, T + H, { overrides: { maxConcurrentConsumers: 1 } })],
    };
    expect(effectivePolicy(store, list, T)).toEqual({
      plan: 'pro',
      policy: { ...resolvePolicy('pro', { ratePerSecond: 7 }), maxConcurrentConsumers: 1 },
      source: 'campaign',
      campaignId: 't',
      scope: 'tenant',
    });
  });

  it('lets a store campaign win over a tenant campaign, whatever their from', () => {
    const list = {
      store: [campaign('own', T - H, T + H, { plan: 'basic' })],
      tenant: [campaign('tenant', T, T + H, { plan: 'enterprise' })],
    };
    expect(effectivePolicy(store, list, T)).toMatchObject({
      campaignId: 'own',
      plan: 'basic',
      scope: 'store',
    });
    // Once the store's own has ended, the tenant's applies.
    const ownEnded = { ...list, store: [campaign('own', T - H, T, { plan: 'basic' })] };
    expect(effectivePolicy(store, ownEnded, T)).toMatchObject({ campaignId: 'tenant', scope: 'tenant' });
  });

  it('picks the latest from among overlapping campaigns of one kind, the greatest id on a tie', () => {
    const a = campaign('a', T - 2 * H, T + 2 * H, { plan: 'basic' });
    const b = campaign('b', T - H, T + H, { plan: 'enterprise' });
    expect(winningCampaign([a, b], T)?.campaignId).toBe('b');
    expect(winningCampaign([b, a], T)?.campaignId).toBe('b');
    // b has ended: a applies again until its own end.
    expect(winningCampaign([a, b], T + H)?.campaignId).toBe('a');
    const c = campaign('c', T - H, T + H);
    expect(winningCampaign([c, b], T)?.campaignId).toBe('c');
    expect(winningCampaign([b, c], T)?.campaignId).toBe('c');
  });
});

describe('PutCampaignBody', () => {
  const body = (from: string, until: string) => PutCampaignBody.safeParse({ from, until });
  it('accepts a window of exactly 90 days, with offsets', () => {
    expect(body('2026-09-01T00:00:00Z', '2026-11-30T00:00:00Z').success).toBe(true);
    expect(body('2026-09-01T03:00:00+03:00', '2026-11-30T00:00:00Z').success).toBe(true);
  });
  it.each([
    ['until = from', '2026-11-27T00:00:00Z', '2026-11-27T00:00:00Z', 'must be after from'],
    ['until < from', '2026-11-27T00:00:00Z', '2026-11-26T23:59:59Z', 'must be after from'],
    ['90 days + 1 s', '2026-09-01T00:00:00Z', '2026-11-30T00:00:01Z', 'must be at most 90 days after from'],
  ])('refuses %s, naming until', (_name, from, until, message) => {
    const result = body(from, until);
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['until', message]]);
  });
  it('refuses a date without a time, an unknown plan and unknown fields', () => {
    expect(body('2026-11-27', '2026-11-28T00:00:00Z').error?.issues[0]?.path).toEqual(['from']);
    const base = { from: '2026-11-27T00:00:00Z', until: '2026-11-28T00:00:00Z' };
    expect(PutCampaignBody.safeParse({ ...base, plan: 'gold' }).error?.issues[0]?.path).toEqual(['plan']);
    expect(PutCampaignBody.safeParse({ ...base, extra: 1 }).success).toBe(false);
    expect(
      PutCampaignBody.safeParse({ ...base, overrides: { maxConcurrentConsumers: 0 } }).error?.issues[0]?.path,
    ).toEqual(['overrides', 'maxConcurrentConsumers']);
  });
});

describe('withCampaign', () => {
  it('replaces the campaign of the same id and drops those ended more than 30 days ago', () => {
    const old = campaign('old', T - 40 * 24 * H, T - ENDED_CAMPAIGN_KEEP_MS - 1);
    const recent = campaign('recent', T - 2 * H, T - H);
    const same = campaign('bf', T, T + H);
    const next = campaign('bf', T, T + 2 * H, { plan: 'enterprise' });
    expect(withCampaign([old, recent, same], next, T)).toEqual([recent, next]);
  });
});

describe('CampaignTransitions', () => {
  it('says applied once, reverted once, and both on a switch', () => {
    const t = new CampaignTransitions();
    expect(t.note('s', {})).toEqual([]);
    expect(t.note('s', { campaignId: 'a' })).toEqual([{ event: 'campaign applied', campaignId: 'a' }]);
    expect(t.note('s', { campaignId: 'a' })).toEqual([]);
    expect(t.note('s', { campaignId: 'b' })).toEqual([
      { event: 'campaign reverted', campaignId: 'a' },
      { event: 'campaign applied', campaignId: 'b' },
    ]);
    expect(t.note('s', {})).toEqual([{ event: 'campaign reverted', campaignId: 'b' }]);
    expect(t.note('other', {})).toEqual([]);
  });
});
