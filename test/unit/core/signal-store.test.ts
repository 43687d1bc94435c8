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
    expect(issue).toHaveBeenCalledWith('s1', 'slot-1', T0 + 1_500, 2, T0);
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
