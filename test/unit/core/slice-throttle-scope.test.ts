import { describe, expect, it } from 'vitest';
import { BACKOFF_FACTOR } from '../../../lambdas/core/adaptive-rate.js';
import { rateView } from '../../../lambdas/core/admin.js';
import type { Policy } from '../../../lambdas/core/plans.js';
import type { ReceivedMessage } from '../../../lambdas/core/ports.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import { leaseOf, policy, setup, store, T0 } from '../support/slice-rate-world.js';

/**
 * `throttleScope: 'task'` (plans.ts): a 429 sends back the task it answered alone, as a fresh copy delayed by its
 * Retry-After; the store's other tasks go on at its rate, nothing holds the store, and no 429 lowers its rate.
 */
const taskScope = (consumers: number): Policy => ({ ...policy(consumers), throttleScope: 'task' });

/** A world whose marketplace answers 429 (Retry-After 3 s) to the calls numbered in `throttled`, with the copies sent. */
const world = (throttled: number[]) => {
  const built = setup((call) =>
    throttled.includes(call)
      ? { kind: 'throttled', status: 429, retryAfterSeconds: 3 }
      : { kind: 'ok', status: 200 },
  );
  const copies: { messages: string[]; delaySeconds: number; at: number }[] = [];
  const events: string[] = [];
  const deliver = built.deps.marketplace.deliver;
  built.deps.marketplace = {
    deliver: async (request) => {
      events.push(request.body.eventId);
      return deliver(request);
    },
  };
  built.deps.tasks = {
    ...built.deps.tasks,
    resend: async (_url: string, messages: ReceivedMessage[], delaySeconds: number) => {
      copies.push({ messages: messages.map((m) => m.messageId), delaySeconds, at: built.w.now });
    },
  } as typeof built.deps.tasks;
  return { ...built, copies, events };
};

describe("a slice under throttleScope 'task'", () => {
  it.each([1, 3])(
    'sends the 429 task back alone, delayed by its Retry-After, and goes on with the others (%i consumers)',
    async (consumers) => {
      const { w, deps, dispatch, fill, copies, events } = world([2]);
      await dispatch.recordEnqueued('s1', 4, T0);
      fill(0, 4);
      const result = await runSlice(
        deps,
        store,
        taskScope(consumers),
        await leaseOf(dispatch, 'a', T0, consumers),
      );
      expect(events).toEqual(['e0', 'e1', 'e2', 'e3']);
      expect(copies).toEqual([{ messages: ['m1'], delaySeconds: 3, at: expect.any(Number) }]);
      expect(result).toMatchObject({ handled: 4, delivered: 3 });
      expect(result.end).not.toBe('throttled');
      // The next call went at the store's pace (20/s), not after the Retry-After; nothing held the schedule.
      expect((w.calls[2] as number) - (w.calls[1] as number)).toBeLessThan(1_000);
      expect(dispatch.items.get('s1')?.tat ?? 0).toBeLessThan((w.calls[1] as number) + 3_000);
      // The rate heard no 429.
      expect(dispatch.items.get('s1')?.rate).toBeUndefined();
    },
  );

  it('forbids idle until the copy is visible, and counts it as an enqueue before sending it and after', async () => {
    const { deps, dispatch, fill, copies } = world([1]);
    await dispatch.recordEnqueued('s1', 1, T0);
    fill(0, 1);
    const seqBefore = dispatch.items.get('s1')?.enqSeq ?? 0;
    const steps: string[] = [];
    const recordEnqueued = dispatch.recordEnqueued.bind(dispatch);
    dispatch.recordEnqueued = async (...args) => {
      steps.push('enqueued');
      return recordEnqueued(...args);
    };
    const resend = deps.tasks.resend;
    deps.tasks = {
      ...deps.tasks,
      resend: async (...args: Parameters<typeof resend>) => {
        steps.push('resend');
        return resend(...args);
      },
    } as typeof deps.tasks;
    const result = await runSlice(deps, store, taskScope(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(steps).toEqual(['enqueued', 'resend', 'enqueued']);
    expect(copies).toHaveLength(1);
    expect(dispatch.items.get('s1')?.enqSeq).toBe(seqBefore + 2);
    const sentAt = (copies[0] as { at: number }).at;
    expect(dispatch.items.get('s1')?.wakeAt).toBeGreaterThanOrEqual(sentAt + 3_000 + WAKE_MARGIN_MS);
    // Not idle: the store waits for its copy.
    expect(result.idle).toBe(false);
  });

  it('sends another copy of that task later in the slice back too, without calling it (an SQS duplicate)', async () => {
    const { w, deps, dispatch, fill, copies, events } = world([2]);
    await dispatch.recordEnqueued('s1', 3, T0);
    fill(0, 3);
    // An SQS duplicate of m1, behind m2 in the same receive.
    w.queue.push({ ...(w.queue[1] as ReceivedMessage), messageId: 'm1-again', receiptHandle: 'r1-again' });
    const result = await runSlice(deps, store, taskScope(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(events).toEqual(['e0', 'e1', 'e2']);
    expect(copies.map((c) => c.messages)).toEqual([['m1'], ['m1-again']]);
    // Each copy comes back no sooner than the 429's Retry-After ends.
    const [first, again] = copies as { delaySeconds: number; at: number }[];
    expect(again?.at ?? 0).toBeGreaterThan(first?.at ?? 0);
    expect((again?.at ?? 0) + (again?.delaySeconds ?? 0) * 1000).toBeGreaterThanOrEqual(
      (w.calls[1] as number) + 3_000,
    );
    expect(again?.delaySeconds).toBeLessThanOrEqual(3);
    expect(result).toMatchObject({ delivered: 2 });
  });

  it('does not sleep through a short Retry-After: the task comes back as a copy, the slice goes on', async () => {
    const { deps, dispatch, fill, copies, events } = world([1, 2]);
    await dispatch.recordEnqueued('s1', 3, T0);
    fill(0, 3);
    const result = await runSlice(deps, store, taskScope(1), await leaseOf(dispatch, 'a', T0, 1));
    // Two 429s in a row end nothing either: each task answered 429 goes back on its own.
    expect(events).toEqual(['e0', 'e1', 'e2']);
    expect(copies.map((c) => c.messages)).toEqual([['m0'], ['m1']]);
    expect(result.end).not.toBe('throttled');
  });

  it('follows no backoff learnt before: the store view says policy, and the slice runs at the policy rate', async () => {
    const { w, deps, dispatch, fill } = world([]);
    await dispatch.recordEnqueued('s1', 3, T0);
    // A backoff the store learnt under 'store' scope: 2/s, estimate 4/s.
    await dispatch.noteRate('s1', { why: 'backoff', r: 20 * BACKOFF_FACTOR * 0.2, c: 4, at: T0 }, undefined);
    const learnt = dispatch.items.get('s1')?.rate;
    expect(rateView(learnt, { ratePerSecond: 20, throttleScope: 'store' }, T0)).toMatchObject({
      reason: 'backoff',
    });
    expect(rateView(learnt, { ratePerSecond: 20, throttleScope: 'task' }, T0)).toEqual({
      configured: 20,
      effective: 20,
      reason: 'policy',
    });
    fill(0, 3);
    await runSlice(deps, store, taskScope(1), await leaseOf(dispatch, 'a', T0, 1));
    // At the policy's 20/s (50 ms apart), not the backoff's 2/s.
    expect((w.calls[2] as number) - (w.calls[0] as number)).toBeLessThan(500);
  });

  it('still follows a rate header, which replaces a backoff learnt before', async () => {
    const { w, deps, dispatch, fill } = setup(() => ({ kind: 'ok', status: 200, limit: { perSecond: 4 } }));
    await dispatch.recordEnqueued('s1', 4, T0);
    await dispatch.noteRate('s1', { why: 'backoff', r: 2, c: 4, at: T0 - 1_000 }, undefined);
    fill(0, 4);
    await runSlice(deps, store, taskScope(1), await leaseOf(dispatch, 'a', T0, 1));
    // From the first answer on, 4/s: 250 ms apart.
    for (const gap of w.calls.slice(1).map((t, i) => t - (w.calls[i] as number)))
      expect(gap).toBeGreaterThanOrEqual(250);
    expect(dispatch.items.get('s1')?.rate).toMatchObject({ why: 'header', r: 4 });
    expect(
      rateView(dispatch.items.get('s1')?.rate, { ratePerSecond: 20, throttleScope: 'task' }, w.now),
    ).toEqual({
      configured: 20,
      effective: 4,
      reason: 'header',
    });
  });
});
