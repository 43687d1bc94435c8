import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { ERROR_RETRY_MS, runSlice } from '../../../lambdas/core/slice.js';
import type { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { lease, policy, setup, store, T0 } from '../support/slice-world.js';

/**
 * What an operator sees of a slice: the metrics the dashboards and Logs Insights queries read (oldest task age,
 * time to drain) and the log lines of its failures, with the error that caused them.
 */
const observed = (world: ReturnType<typeof setup>) => {
  const logs: LogRecord[] = [];
  const telemetry = new RecordingTelemetry((record) => void logs.push(record), 'info');
  world.deps.telemetry = telemetry;
  return { logs, telemetry };
};

describe('a slice’s metrics', () => {
  it('records the oldest task’s age once, from the first batch it received', async () => {
    // 12 tasks sent 1 s before the slice: two receive batches (10, then 2), the second received 10 calls later.
    const world = setup({ messages: 12, callMs: 10 });
    const { telemetry } = observed(world);
    await runSlice(world.deps, store, policy(), lease());
    expect(telemetry.timings.get(MetricNames.oldestTaskAge)).toEqual([1_000]);
  });

  it('records the time to drain, and logs it, when the store was marked active', async () => {
    const world = setup();
    const { logs, telemetry } = observed(world);
    await runSlice(world.deps, store, policy(), lease({ activeSince: T0 - 5_000 }));
    expect({
      drain: telemetry.timings.get(MetricNames.timeToDrain),
      logs: logs.filter((l) => l.message === 'store drained').map((l) => l.fields),
    }).toEqual({ drain: [5_000], logs: [{ drainMs: 5_000 }] });
  });

  it('records no time to drain for a store without an active mark (nothing to measure from)', async () => {
    const world = setup();
    const { logs, telemetry } = observed(world);
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({
      idle: result.idle,
      drain: telemetry.timings.get(MetricNames.timeToDrain),
      logs: logs.map((l) => l.message),
    }).toEqual({ idle: true, drain: undefined, logs: [] });
  });
});

describe('a slice’s failure logs', () => {
  it('warns of a failed fan-out with its error, and goes on', async () => {
    const world = setup({ messages: 10, callMs: 10 });
    const { logs } = observed(world);
    world.dispatch.issueSlot.mockRejectedValue(new Error('DynamoDB unavailable'));
    const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({ end: result.end, logs }).toEqual({
      end: 'empty',
      logs: [{ level: 'warn', message: 'fan-out failed', fields: { error: 'Error: DynamoDB unavailable' } }],
    });
  });

  it('logs a failed receive with its error before ending on it', async () => {
    const world = setup();
    const { logs } = observed(world);
    vi.mocked(world.tasks.receive).mockRejectedValue(new Error('AWS.SimpleQueueService.NonExistentQueue'));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, logs }).toEqual({
      end: 'error',
      logs: [
        {
          level: 'error',
          message: 'receive failed',
          fields: { error: 'Error: AWS.SimpleQueueService.NonExistentQueue' },
        },
      ],
    });
  });

  it('warns when a 429’s first hold or the lowered rate’s stretch of the shared schedule is not written', async () => {
    const world = setup({
      messages: 2,
      outcome: (id) =>
        id === 'e0' ? { kind: 'throttled', status: 429, retryAfterSeconds: 30 } : { kind: 'ok', status: 200 },
    });
    const { logs } = observed(world);
    const schedule = ['store not held', 'schedule not stretched'];
    // The first hold (the whole Retry-After) and the stretch fail; the full Retry-After hold after them is written.
    world.dispatch.holdTat.mockRejectedValueOnce(new Error('DynamoDB unavailable'));
    world.dispatch.advanceTat.mockRejectedValue(new Error('DynamoDB unavailable'));
    const result = await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 3 }), lease());
    expect({ end: result.end, warnings: logs.filter((l) => schedule.includes(l.message)) }).toEqual({
      end: 'throttled',
      warnings: [
        { level: 'warn', message: 'store not held', fields: { error: 'Error: DynamoDB unavailable' } },
        {
          level: 'warn',
          message: 'schedule not stretched',
          fields: { error: 'Error: DynamoDB unavailable' },
        },
      ],
    });
  });

  it('ends on an error naming the cause when a write mid-batch fails', async () => {
    const world = setup({ messages: 1, outcome: () => ({ kind: 'transient', status: 503, error: 'x' }) });
    const { logs } = observed(world);
    vi.mocked(world.dispatch.deferWake).mockRejectedValue(new Error('DynamoDB unavailable'));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, resumeAt: result.resumeAt, logs }).toEqual({
      end: 'error',
      resumeAt: T0 + ERROR_RETRY_MS,
      logs: [{ level: 'error', message: 'slice failed', fields: { error: 'Error: DynamoDB unavailable' } }],
    });
  });

  it('ends on an error naming the unwritten settles when DynamoDB refused them every try', async () => {
    const world = setup({ messages: 2 });
    const { logs } = observed(world);
    (world.deps.deliveries as MemoryDeliveryLog).unprocessed = (settle) => settle.eventId === 'e1';
    const result = await runSlice(world.deps, store, policy(), lease());
    // Two calls 2 ms apart (1.011 ms at 1000/s, slept to the whole millisecond), then the settle's tries waited 200
    // and 400 ms; e1's message is kept.
    expect({ end: result.end, resumeAt: result.resumeAt, deleted: world.w.deleted, logs }).toEqual({
      end: 'error',
      resumeAt: T0 + 602 + ERROR_RETRY_MS,
      deleted: ['r0'],
      logs: [
        {
          level: 'error',
          message: 'slice failed',
          fields: { error: 'UnsettledError: 1 delivered settle(s) not written' },
        },
      ],
    });
  });
});
