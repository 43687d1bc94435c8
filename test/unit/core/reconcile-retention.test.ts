import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import type { ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { reconcile, type ReconcilerDeps } from '../../../lambdas/core/reconcile.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { quietQueues, RECONCILE_T0, reconcilerStore } from '../support/reconciler-fixtures.js';

/** The reconciler around its retention pass: what a failed pass leaves, and the run's budget of batches. */
const T0 = RECONCILE_T0;
const DAY = 24 * 3600 * 1000;
const storeOf = (storeId: string) => reconcilerStore(storeId);
const old = (i: number): ReceivedMessage => ({
  messageId: `m${i}`,
  receiptHandle: `r${i}`,
  body: `task-${i}`,
  receiveCount: 1,
  sentAt: T0 - 8 * DAY,
});

describe('reconcile and the retention pass', () => {
  let dispatch: MemoryDispatchState;
  let published: AttentionMessage[];
  let receive: ReturnType<typeof vi.fn>;
  let logs: { level: string; message: string; fields?: Record<string, unknown> }[];
  let deps: ReconcilerDeps;
  const now = T0;

  beforeEach(async () => {
    dispatch = new MemoryDispatchState();
    published = [];
    logs = [];
    const queue: ReceivedMessage[] = [old(1), old(2)];
    receive = vi.fn(async (_url: string, opts: { maxMessages: number }) => queue.splice(0, opts.maxMessages));
    const stores = new Map([['s1', storeOf('s1')]]);
    deps = {
      dispatch,
      marks: dispatch,
      tasks: { receive, resend: vi.fn(async () => undefined) } as unknown as TaskQueues,
      stores: { get: async (id) => stores.get(id), create: vi.fn(), replace: vi.fn(), scan: vi.fn() },
      queues: quietQueues(),
      attention: { publish: async (message) => void published.push(message) },
      clock: { now: () => now, sleep: async () => undefined },
      ids: { next: () => 'slot' },
      telemetry: new RecordingTelemetry((record) => logs.push(record), 'info'),
      settings: {
        attentionGraceMs: 20_000,
        sweepStoresPerRun: 0,
        retention: { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun: 100 },
      },
    };
    // Active for a week, with an expired lease to reclaim.
    await dispatch.markActive('s1', T0 - 7 * DAY);
    await dispatch.issueSlot('s1', 'a', T0 - DAY, 1, T0 - DAY);
    await dispatch.acquire('s1', 'a', { now: T0 - DAY, expiresAt: T0 - DAY + 35_000, max: 1 });
  });

  it('goes on with the store’s repairs when its retention pass fails, leaving the bound for the next run', async () => {
    receive.mockRejectedValue(new Error('SQS unavailable'));
    const report = await reconcile(deps);
    expect({
      refreshed: report.refreshed,
      reclaimed: report.repairs.reclaim,
      published: published.map((m) => [m.slotId, m.reason]),
      bound: (await dispatch.read('s1'))?.refreshedAt,
      logged: logs
        .filter((l) => l.level === 'error')
        .map((l) => [l.message, l.fields?.['storeId'], l.fields?.['error']]),
    }).toEqual({
      refreshed: 0,
      reclaimed: 1,
      published: [['a', 'reclaim']],
      bound: undefined,
      logged: [['retention pass failed', 's1', 'Error: SQS unavailable']],
    });
  });

  it('refreshes the old backlog and reclaims the lease in the same run', async () => {
    const report = await reconcile(deps);
    expect({ refreshed: report.refreshed, reclaimed: report.repairs.reclaim }).toEqual({
      refreshed: 2,
      reclaimed: 1,
    });
  });

  describe('overdue passes (alarm RetentionOverdue)', () => {
    const overdueAfter = async (boundAge: number, batchesPerRun = 100) => {
      expect(await dispatch.raiseRefreshed('s1', T0 - boundAge, undefined)).toBe(true);
      deps.settings.retention = { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun };
      const telemetry = deps.telemetry as RecordingTelemetry;
      await reconcile(deps);
      return {
        counted: telemetry.total(MetricNames.retentionOverdue, { queue: 'work' }),
        logged: logs
          .filter((l) => l.message.startsWith('retention overdue'))
          .map((l) => [l.level, l.fields?.['storeId'], l.fields?.['queue'], l.fields?.['boundAgeHours']]),
      };
    };

    it('counts and names a store whose bound is 1.25 refresh ages old (8.75 days) when no budget is left for it', async () => {
      expect(await overdueAfter(8.75 * DAY, 0)).toEqual({
        counted: 1,
        logged: [['warn', 's1', 'work', 210]],
      });
    });

    it('counts it when its pass does not complete (one batch: no budget left for the empty poll)', async () => {
      expect((await overdueAfter(9 * DAY, 1)).counted).toBe(1);
    });

    it('names the store and its tenant, and says an unknown bound (a sweep rescue’s 0) instead of an age', async () => {
      await dispatch.lowerRefreshed('s1');
      deps.settings.retention = { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun: 0 };
      await reconcile(deps);
      expect(
        logs
          .filter(
            (l) =>
              l.message === 'retention overdue: messages may be older than the passes should let them get',
          )
          .map((l) => l.fields),
      ).toEqual([
        {
          storeId: 's1',
          tenantId: storeOf('s1').tenantId,
          queue: 'work',
          boundUnknown: true,
          correlationId: `reconcile-${new Date(T0).toISOString()}`,
        },
      ]);
    });

    it('says nothing when its pass completes', async () => {
      expect((await overdueAfter(9 * DAY)).counted).toBe(0);
    });

    it('says nothing a millisecond before 8.75 days', async () => {
      expect((await overdueAfter(8.75 * DAY - 1, 0)).counted).toBe(0);
    });
  });

  it('makes no pass when the run has no batches to spend', async () => {
    deps.settings.retention = { refreshAgeMs: 7 * DAY, copyDelaySeconds: 900, batchesPerRun: 0 };
    const report = await reconcile(deps);
    expect({
      refreshed: report.refreshed,
      receives: receive.mock.calls.length,
      passes: logs.filter((l) => l.message === 'retention pass').length,
    }).toEqual({
      refreshed: 0,
      receives: 0,
      passes: 0,
    });
  });
});
