import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
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

  /** One task in the queue, and the marketplace answers it 429 with a Retry-After of 30 s. */
  const answers429For30s = () => {
    w.deps.tasks.receive = vi.fn(async () => [backlogTask(1)]);
    w.deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 30,
    }));
  };

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
    answers429For30s();
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

  it('starts its slice at the rate the store learnt from the marketplace, not at the policy rate', async () => {
    w.store = proStore({ maxConcurrentConsumers: 1, ratePerSecond: 20 });
    const item = await w.dispatch.read('s1');
    // A header said 4/s: the calls go 250 ms apart from the first, where the policy's 20/s would be 50 ms.
    w.dispatch.items.set('s1', { ...item!, rate: { why: 'header', r: 4, at: T0 } });
    w.backlog = 3;
    const calls: number[] = [];
    w.deps.marketplace.deliver = vi.fn(async () => {
      calls.push(w.now);
      return { kind: 'ok' as const, status: 200 };
    });
    await handleAttention(w.deps, attention);
    expect(calls.map((t) => t - (calls[0] ?? 0))).toEqual([0, 250, 500]);
  });

  it.each<{ case: string; slots: DispatchItem['slots'] }>([
    { case: 'a queued slot', slots: { a: { s: 'q', at: T0 } } },
    { case: 'no slot at all', slots: {} },
  ])('throws, before any slice, when the lease write answers with $case', async ({ slots }) => {
    const item = await w.dispatch.read('s1');
    vi.spyOn(w.dispatch, 'acquire').mockResolvedValue({ ok: true, item: { ...item!, slots } });
    await expect(handleAttention(w.deps, attention)).rejects.toThrow(
      'lease write for s1/a returned no lease',
    );
    expect(w.deps.tasks.receive).not.toHaveBeenCalled();
  });

  it('writes no hold after an error end that was told no Retry-After', async () => {
    w.deps.tasks.receive = vi.fn(async () => {
      throw new Error('SQS timed out');
    });
    const hold = vi.spyOn(w.dispatch, 'holdTat');
    const outcome = await handleAttention(w.deps, attention);
    expect({ outcome, holds: hold.mock.calls.length }).toEqual({
      outcome: { kind: 'sliced', slice: expect.objectContaining({ end: 'error' }) },
      holds: 0,
    });
  });

  it('writes no hold after an error end whose Retry-After is already over', async () => {
    answers429For30s();
    // The settle after the 429 stalls past the Retry-After, then fails.
    vi.spyOn(w.deps.deliveries, 'settle').mockImplementation(async () => {
      w.now += 31_000;
      throw new Error('DynamoDB unavailable');
    });
    const hold = vi.spyOn(w.dispatch, 'holdTat');
    const outcome = await handleAttention(w.deps, attention);
    expect({ outcome, holds: hold.mock.calls.length }).toEqual({
      outcome: {
        kind: 'sliced',
        slice: expect.objectContaining({ end: 'error', throttledUntil: T0 + 30_000 }),
      },
      holds: 0,
    });
  });

  it('warns with the error when the Retry-After hold of an error end cannot be written', async () => {
    answers429For30s();
    vi.spyOn(w.deps.deliveries, 'settle').mockRejectedValue(new Error('DynamoDB unavailable'));
    vi.spyOn(w.dispatch, 'holdTat').mockRejectedValue(new Error('hold refused'));
    const warnings: LogRecord[] = [];
    w.deps.telemetry = new RecordingTelemetry((record) => void warnings.push(record), 'warn');
    await handleAttention(w.deps, attention);
    expect(warnings.find((l) => l.message === 'store not held')?.fields).toMatchObject({
      error: 'Error: hold refused',
    });
  });
});
