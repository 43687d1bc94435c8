import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import {
  attentionFor,
  workerWorld,
  backlogTask,
  proStore,
  T0,
  type WorkerWorld,
} from '../support/attention-world.js';

/** What the lease carries into the slice and what an error end writes back (mutation survivors). */
const attention = attentionFor('a');

describe('an attention around its slice', () => {
  let w: WorkerWorld;

  beforeEach(async () => {
    w = await workerWorld({ store: proStore({ maxConcurrentConsumers: 1 }) });
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
  });

  it('keeps the store awake past the lease when a failed receive stalled beyond it (its messages hide from its answer)', async () => {
    w.deps.tasks.receive = vi.fn(async () => {
      w.now += 10_000; // the receive stalls 10 s, then fails: it may have applied with its answer lost
      throw new Error('SQS timed out');
    });
    await handleAttention(w.deps, attention);
    // Asked at T0: the lease's 35 s + the 5 s visibility margin, from the answer at T0 + 10 s.
    expect((await w.dispatch.read('s1'))?.wakeAt).toBe(T0 + 10_000 + 40_000 + WAKE_MARGIN_MS);
  });

  it('still hands the slot back after an error when the Retry-After hold cannot be written, and warns', async () => {
    w.deps.tasks.receive = vi.fn(async () => [backlogTask(1)]);
    w.deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 30,
    }));
    // The settle after the 429 fails (an error end told a Retry-After), and so does every hold.
    vi.spyOn(w.deps.deliveries, 'settle').mockRejectedValue(new Error('DynamoDB unavailable'));
    vi.spyOn(w.dispatch, 'holdTat').mockRejectedValue(new Error('DynamoDB unavailable'));
    const logs: string[] = [];
    w.deps.telemetry = new RecordingTelemetry((record) => void logs.push(record.message), 'warn');
    const outcome = await handleAttention(w.deps, attention);
    expect({
      end: outcome.kind === 'sliced' ? outcome.slice.end : undefined,
      slot: (await w.dispatch.read('s1'))?.slots['a'],
      published: w.published.map((p) => p.delay),
      warned: logs.includes('store not held'),
    }).toEqual({
      end: 'error',
      // Not before the Retry-After: the slot is due when it ends, the first error of a streak.
      slot: expect.objectContaining({ s: 'q', at: T0 + 30_000, e: 1 }),
      published: [30],
      warned: true,
    });
  });

  it('measures the time the store took to drain, from when it became active to its idle', async () => {
    w.now = T0 + 12_000;
    const outcome = await handleAttention(w.deps, attention);
    expect({ outcome, drain: w.telemetry.timings.get(MetricNames.timeToDrain) }).toEqual({
      outcome: { kind: 'sliced', slice: expect.objectContaining({ end: 'empty', idle: true }) },
      drain: [12_000],
    });
  });
});
