import { describe, expect, it } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { BACKOFF_FACTOR } from '../../../lambdas/core/adaptive-rate.js';
import { rateView } from '../../../lambdas/core/admin.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import { gaps, leaseOf, policy, setup, store, T0 } from '../support/slice-rate-world.js';

/** The adaptive rate inside a slice: the marketplace's own limit feeds the pacer, shared through the dispatch item. */
describe('adaptive rate in a slice', () => {
  it('after an answer with rate-limit headers, paces at the header rate and records it for the store', async () => {
    const { w, deps, dispatch, fill } = setup(() => ({ kind: 'ok', status: 200, limit: { perSecond: 4 } }));
    await dispatch.recordEnqueued('s1', 4, T0);
    fill(0, 4);
    await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    // Policy 20/s would be 50 ms apart; the marketplace said 4/s.
    expect(gaps(w.calls)).toEqual([250, 250, 250]);
    const item = dispatch.items.get('s1');
    expect(rateView(item?.rate, { ratePerSecond: 20, throttleScope: 'store' }, w.now)).toEqual({
      configured: 20,
      effective: 4,
      reason: 'header',
    });
    // Headers repeat on every answer: one change, none for the repeats.
    expect((deps.telemetry as RecordingTelemetry).total(MetricNames.marketplaceRateAdjusted)).toBe(1);
  });

  it('halves on a bare 429 (after its Retry-After) and never runs above the policy rate while it recovers', async () => {
    const { w, deps, dispatch, fill } = setup((call) =>
      call === 2 ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 } : { kind: 'ok', status: 200 },
    );
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(dispatch.items.get('s1')?.rate).toMatchObject({ why: 'backoff', r: 20 * BACKOFF_FACTOR, c: 20 });
    // The next lease (after the Retry-After) starts from the shared state: its calls 100 ms apart at first.
    w.now += 1_000;
    fill(10, 3);
    await dispatch.recordEnqueued('s1', 3, w.now);
    const before = w.calls.length;
    const lease = await leaseOf(dispatch, 'b', w.now, 2);
    await runSlice(deps, store, policy(1), { ...lease, nextCallAt: w.now });
    const next = gaps(w.calls.slice(before));
    for (const gap of next) expect(gap).toBeGreaterThanOrEqual(50);
    expect(next[0]).toBeGreaterThan(50);
  });

  it('sleeps through a short Retry-After inside the slice: the same task again after it, no copies, no restart', async () => {
    const { w, deps, dispatch, fill } = setup((call) =>
      call === 2 ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 } : { kind: 'ok', status: 200 },
    );
    const events: string[] = [];
    const deliver = deps.marketplace.deliver;
    deps.marketplace = {
      deliver: async (request) => {
        events.push(request.body.eventId);
        return deliver(request);
      },
    };
    let resent = 0;
    deps.tasks = {
      ...deps.tasks,
      resend: async () => {
        resent++;
      },
    };
    await dispatch.recordEnqueued('s1', 3, T0);
    fill(0, 3);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(events).toEqual(['e0', 'e1', 'e1', 'e2']);
    expect(resent).toBe(0);
    // The 429 was one of the slice's calls (maxMessagesPerSlice bounds calls).
    expect(result).toMatchObject({ handled: 4, delivered: 3 });
    expect(result.end).not.toBe('throttled');
    // Not before the Retry-After's end; the hold is on the shared schedule for any other consumer.
    expect((w.calls[2] as number) - (w.calls[1] as number)).toBeGreaterThanOrEqual(1_000);
    expect(dispatch.items.get('s1')?.tat).toBeGreaterThanOrEqual((w.calls[1] as number) + 1_000);
  });

  it('ends the slice on a second 429 in a row (a storm): the worker goes back, the tasks come back as copies', async () => {
    const { deps, dispatch, fill } = setup((call) =>
      call <= 2 ? { kind: 'throttled', status: 429, retryAfterSeconds: 1 } : { kind: 'ok', status: 200 },
    );
    let resent = 0;
    deps.tasks = {
      ...deps.tasks,
      resend: async (_url: string, copies: unknown[]) => {
        resent += copies.length;
      },
    } as typeof deps.tasks;
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(result.end).toBe('throttled');
    expect(resent).toBe(2);
  });

  it('another consumer of the store waits out a short hold in its slice instead of ending it', async () => {
    const { w, deps, dispatch, fill } = setup(() => ({ kind: 'ok', status: 200 }));
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    // Another consumer's 429 held the store for 1.5 s (longer than a normal wait for the schedule).
    await dispatch.issueSlot('s1', 'a', T0, 2, T0);
    await dispatch.holdTat('s1', T0 + 1_500);
    const result = await runSlice(deps, store, policy(2), await leaseOf(dispatch, 'b', T0, 2));
    expect(result.end).not.toBe('throttled');
    expect(result.delivered).toBe(2);
    expect(w.calls[0]).toBeGreaterThanOrEqual(T0 + 1_500);
  });

  it("holds the store through a single consumer's Retry-After, so a consumer added by a raised cap waits too", async () => {
    const { w, deps, dispatch, fill } = setup((call) =>
      call === 1 ? { kind: 'throttled', status: 429, retryAfterSeconds: 5 } : { kind: 'ok', status: 200 },
    );
    await dispatch.recordEnqueued('s1', 3, T0);
    fill(0, 3);
    const a = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(a.end).toBe('throttled');
    const until = T0 + 5_000;
    // The cap goes from 1 to 2 during the hold (a campaign, an override): a second slot starts at once.
    w.now += 100;
    fill(10, 3);
    const before = w.calls.length;
    await runSlice(deps, store, policy(2), await leaseOf(dispatch, 'b', w.now, 2));
    for (const at of w.calls.slice(before)) expect(at).toBeGreaterThanOrEqual(until);
    expect(dispatch.items.get('s1')?.tat).toBeGreaterThanOrEqual(until);
  });

  it('shares a rate one consumer learnt with another lease of the store at its next reservation', async () => {
    const { w, deps, dispatch, fill } = setup((call) =>
      call === 1 ? { kind: 'ok', status: 200, limit: { perSecond: 5 } } : { kind: 'ok', status: 200 },
    );
    await dispatch.recordEnqueued('s1', 6, T0);
    // Lease b is taken before a's first answer: it read no learnt rate.
    const a = await leaseOf(dispatch, 'a', T0, 2);
    const b = await leaseOf(dispatch, 'b', T0, 2);
    expect(b.rate).toBeUndefined();
    fill(0, 1);
    await runSlice(deps, store, { ...policy(2), maxMessagesPerSlice: 1 }, a);
    fill(1, 5);
    const before = w.calls.length;
    await runSlice(deps, store, { ...policy(2), maxMessagesPerSlice: 5 }, b);
    // Only a's answer carried the header; b follows it through the shared schedule: 200 ms apart, not 50. The
    // first gap is a's one instant at the policy's 20/s (51.001 ms: paced for the 5 s window, rate.ts
    // pacedInterval) plus the 148.999 ms its answer stretched the schedule.
    expect(gaps(w.calls.slice(before - 1))).toEqual([200, 200, 200, 200, 200]);
  });
});
