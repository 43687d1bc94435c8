import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { publishAttention, signalStore, type SignalDeps } from '../../../lambdas/core/signal.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

const T0 = 1_800_000_000_000;

describe('signalStore', () => {
  let dispatch: MemoryDispatchState;
  let published: { message: AttentionMessage; delay: number }[];
  let telemetry: RecordingTelemetry;
  let deps: SignalDeps;

  beforeEach(async () => {
    dispatch = new MemoryDispatchState();
    await dispatch.recordEnqueued('s1', 1, T0);
    published = [];
    telemetry = new RecordingTelemetry();
    deps = {
      dispatch,
      attention: { publish: async (message, delay) => void published.push({ message, delay }) },
      clock: { now: () => T0, sleep: async () => undefined },
      ids: { next: () => 'slot-1' },
      telemetry,
    };
  });

  it('issues a slot due after the delay and publishes its attention delayed in whole seconds', async () => {
    const issue = vi.spyOn(dispatch, 'issueSlot');
    expect(
      await signalStore(deps, 's1', { limit: 2, reason: 'ingest', priority: 'low', delayMs: 1_500 }),
    ).toBe(true);
    expect(issue).toHaveBeenCalledWith('s1', 'slot-1', T0 + 1_500, 2, T0, undefined);
    expect(published).toEqual([
      {
        message: {
          v: 1,
          storeId: 's1',
          slotId: 'slot-1',
          reason: 'ingest',
          issuedAt: T0,
          priority: 'low',
          dueAt: T0 + 1_500,
        },
        delay: 2,
      },
    ]);
    expect(telemetry.total(MetricNames.attentionsPublished, { reason: 'ingest' })).toBe(1);
    expect(telemetry.total(MetricNames.attentionsCoalesced, { reason: 'ingest' })).toBe(0);
  });

  it('publishes nothing when the store already holds its limit of slots, and counts it coalesced', async () => {
    await dispatch.issueSlot('s1', 'held', T0, 1, T0);
    expect(await signalStore(deps, 's1', { limit: 1, reason: 'ingest', priority: 'high' })).toBe(false);
    expect(published).toEqual([]);
    expect(telemetry.total(MetricNames.attentionsCoalesced, { reason: 'ingest' })).toBe(1);
    expect(telemetry.total(MetricNames.attentionsPublished, { reason: 'ingest' })).toBe(0);
  });

  it("publishes nothing for a fan-out whose issuer no longer holds its lease (a zombie's)", async () => {
    await dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const lease = await dispatch.acquire('s1', 'a', { now: T0, expiresAt: T0 + 30_000, max: 3 });
    const fence = lease.ok ? (lease.item.fence ?? 0) : -1;
    const by = { slotId: 'a', fence };
    // The reconciler reclaims the expired lease, and another worker takes it again: the old fence is gone.
    await dispatch.reclaim('s1', 'a', fence, T0 + 31_000);
    expect(await signalStore(deps, 's1', { limit: 3, reason: 'fanout', priority: 'normal', by })).toBe(false);
    expect(published).toEqual([]);
    expect(telemetry.total(MetricNames.attentionsCoalesced, { reason: 'fanout' })).toBe(1);
    // While it holds its lease, the same fan-out goes out.
    await dispatch.acquire('s1', 'a', { now: T0 + 31_000, expiresAt: T0 + 61_000, max: 3 });
    const live = { slotId: 'a', fence: fence + 1 };
    expect(await signalStore(deps, 's1', { limit: 3, reason: 'fanout', priority: 'normal', by: live })).toBe(
      true,
    );
    expect(published.map((p) => p.message.reason)).toEqual(['fanout']);
  });

  it('carries a correlation id only when there is one', async () => {
    await publishAttention(deps, 's1', 'a', 'repair', 'normal', T0, 'run-1');
    await publishAttention(deps, 's1', 'b', 'repair', 'high', T0, '');
    expect(published.map((p) => p.message)).toEqual([
      {
        v: 1,
        storeId: 's1',
        slotId: 'a',
        reason: 'repair',
        issuedAt: T0,
        priority: 'normal',
        dueAt: T0,
        correlationId: 'run-1',
      },
      { v: 1, storeId: 's1', slotId: 'b', reason: 'repair', issuedAt: T0, priority: 'high', dueAt: T0 },
    ]);
  });
});
