import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import { CampaignTransitions, type Campaign, type CampaignOwner } from '../../../lambdas/core/campaigns.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { attentionFor, workerWorld, proStore, T0, type WorkerWorld } from '../support/attention-world.js';

/**
 * A worker across campaign boundaries: its lease is taken under the cap in force at that instant, its slice
 * runs under that policy to its end, and its slot goes back under the cap in force when the slice ends.
 */
const iso = (ms: number) => new Date(ms).toISOString();
// pro: 3 consumers of its own.
const store = proStore({ maxMessagesPerSlice: 2, ratePerSecond: 1000 });
const attention = attentionFor('a');
const campaign = (id: string, from: number, until: number, cap: number): Campaign => ({
  campaignId: id,
  from: iso(from),
  until: iso(until),
  overrides: { maxConcurrentConsumers: cap },
  createdAt: iso(T0),
  updatedAt: iso(T0),
});

describe('a worker across campaign boundaries', () => {
  let w: WorkerWorld;
  let logs: LogRecord[];
  let lists: Record<string, Campaign[]>;

  beforeEach(async () => {
    lists = {};
    logs = [];
    w = await workerWorld({
      store,
      telemetry: new RecordingTelemetry((record) => logs.push(record), 'info'),
    });
    // Two slots: this attention's and another consumer's, queued.
    await w.dispatch.issueSlot('s1', 'a', T0, 2, T0);
    await w.dispatch.issueSlot('s1', 'b', T0, 2, T0);
    w.backlog = 10;
    w.deps.campaigns = {
      read: async (owner: CampaignOwner) => ({ rev: 1, campaigns: lists[owner.scope] ?? [] }),
      write: vi.fn(),
    };
    w.deps.campaignTransitions = new CampaignTransitions();
    // Each call takes a second of the slice.
    w.deps.marketplace.deliver = vi.fn(async () => {
      w.now += 1_000;
      return { kind: 'ok' as const, status: 200 };
    });
  });

  const acquireMax = (spy: ReturnType<typeof vi.spyOn>) =>
    (spy.mock.calls[0]?.[2] as { max: number } | undefined)?.max;
  const requeueMax = (spy: ReturnType<typeof vi.spyOn>) =>
    (spy.mock.calls[0]?.[3] as { max: number } | undefined)?.max;

  it('takes its lease under the store’s own cap before a campaign starts, and says so in its log', async () => {
    lists['store'] = [campaign('later', T0 + 60_000, T0 + 120_000, 1)];
    const acquire = vi.spyOn(w.dispatch, 'acquire');
    await handleAttention(w.deps, attention);
    expect(acquireMax(acquire)).toBe(3);
    const ended = logs.find((l) => l.message === 'slice ended');
    expect(ended?.fields).toMatchObject({ effectiveSource: 'store' });
    expect(ended?.fields).not.toHaveProperty('campaignId');
  });

  it('takes its lease under a raised cap from the campaign’s first instant, counted and logged as applied', async () => {
    lists['tenant'] = [campaign('bf', T0, T0 + 60_000, 5)];
    const acquire = vi.spyOn(w.dispatch, 'acquire');
    await handleAttention(w.deps, attention);
    expect(acquireMax(acquire)).toBe(5);
    expect(w.telemetry.total(MetricNames.slicesUnderCampaign, { scope: 'tenant' })).toBe(1);
    expect(w.telemetry.total(MetricNames.slicesUnderCampaign, { scope: 'store' })).toBe(0);
    expect(logs.find((l) => l.message === 'campaign applied')?.fields).toMatchObject({
      campaignId: 'bf',
      campaignScope: 'tenant',
    });
    expect(logs.find((l) => l.message === 'slice ended')?.fields).toMatchObject({
      effectiveSource: 'campaign',
      campaignId: 'bf',
      campaignScope: 'tenant',
    });
  });

  it('gives up its slot when a campaign has lowered the cap below the slots the store holds', async () => {
    lists['store'] = [campaign('quiet', T0 - 1_000, T0 + 60_000, 1)];
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toEqual({ kind: 'discarded', reason: 'over_limit' });
    expect(Object.keys((await w.dispatch.read('s1'))?.slots ?? {})).toEqual(['b']);
    expect(w.deps.marketplace.deliver).not.toHaveBeenCalled();
  });

  it('runs its slice to its end under the cap it was taken with, then lets its slot go under the lowered one', async () => {
    // The campaign starts 1.5 s into the slice (two calls of a second each).
    lists['store'] = [campaign('quiet', T0 + 1_500, T0 + 60_000, 1)];
    const requeue = vi.spyOn(w.dispatch, 'requeue');
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages', delivered: 2 } });
    expect(requeueMax(requeue)).toBe(1);
    // Two slots over a cap of one: this one goes, the other carries on; no attention re-published for it.
    expect(Object.keys((await w.dispatch.read('s1'))?.slots ?? {})).toEqual(['b']);
    expect(w.published).toEqual([]);
  });

  it('hands its slot back under the store’s own cap once the campaign has ended, and logs applied then reverted', async () => {
    // Ends 1.5 s into the first slice.
    lists['store'] = [campaign('wide', T0 - 5_000, T0 + 1_500, 2)];
    const acquire = vi.spyOn(w.dispatch, 'acquire');
    const requeue = vi.spyOn(w.dispatch, 'requeue');
    await handleAttention(w.deps, attention);
    expect(acquireMax(acquire)).toBe(2);
    expect(requeueMax(requeue)).toBe(3);
    await handleAttention(w.deps, attention);
    expect((acquire.mock.calls[1]?.[2] as { max: number }).max).toBe(3);
    expect(
      logs.filter((l) => l.message.startsWith('campaign ')).map((l) => [l.message, l.fields?.['campaignId']]),
    ).toEqual([
      ['campaign applied', 'wide'],
      ['campaign reverted', 'wide'],
    ]);
  });

  it('logs the revert with the plan the store returns to, not the campaign’s scope or policy', async () => {
    lists['store'] = [campaign('wide', T0 - 5_000, T0 + 1_500, 2)];
    await handleAttention(w.deps, attention);
    await handleAttention(w.deps, attention);
    expect(logs.find((l) => l.message === 'campaign reverted')?.fields).toEqual({
      storeId: 's1',
      tenantId: 't1',
      campaignId: 'wide',
      plan: 'pro',
    });
  });

  it('logs no campaign transition for a worker that does not track them', async () => {
    delete w.deps.campaignTransitions;
    lists['store'] = [campaign('wide', T0 - 5_000, T0 + 60_000, 2)];
    await handleAttention(w.deps, attention);
    expect(logs.filter((l) => l.level === 'info').map((l) => l.message)).toEqual(['slice ended']);
  });
});
