import { describe, expect, it } from 'vitest';
import { WINDOW_MEMORY_MS } from '../../../lambdas/core/adaptive-rate.js';
import type { DeliveryOutcome } from '../../../lambdas/core/ports.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import { leaseOf, policy, setup, store, T0 } from '../support/slice-rate-world.js';

/**
 * A marketplace that counts a fixed window of `quota` calls per `windowS` seconds down in `RateLimit-Remaining`
 * and gives the window's end in `RateLimit-Reset`, stating its limit as `quota` per second: the rate alone would
 * spend the window early and meet 429s (the black-box finding of session 18). `named`: it names that (wrong) one
 * second window, so no window is learnt and the quota hold alone keeps the window; else the limit names none, as
 * the adapter reads a bare `RateLimit-Limit` (`perWindow`), and the store learns the window from the Reset.
 */
const windowed = (w: { now: number }, quota: number, windowS: number, named = true) => {
  let start = T0;
  let used = 0;
  return (): DeliveryOutcome => {
    while (w.now >= start + windowS * 1000) {
      start += windowS * 1000;
      used = 0;
    }
    const resetSeconds = Math.ceil((start + windowS * 1000 - w.now) / 1000);
    const stated = { perSecond: quota, ...(named ? {} : { perWindow: quota }) };
    if (used >= quota)
      return { kind: 'throttled', status: 429, limit: { ...stated, remaining: 0, resetSeconds } };
    used++;
    return { kind: 'ok', status: 200, limit: { ...stated, remaining: quota - used, resetSeconds } };
  };
};

/** A slice's world whose marketplace keeps the window (`windowed`). */
const windowWorld = (quota: number, windowS: number, named = true) => {
  const box = { answer: (): DeliveryOutcome => ({ kind: 'ok', status: 200 }) };
  const world = setup(() => box.answer());
  box.answer = windowed(world.w, quota, windowS, named);
  return world;
};

describe('the marketplace’s window quota in a slice (RateLimit-Remaining: 0 until RateLimit-Reset)', () => {
  it('a short reset is slept through: the next call when the window resets, no 429, no copies', async () => {
    const { w, deps, dispatch, fill } = windowWorld(3, 2);
    let resent = 0;
    deps.tasks = { ...deps.tasks, resend: async () => void resent++ };
    await dispatch.recordEnqueued('s1', 6, T0);
    fill(0, 6);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(result).toMatchObject({ delivered: 6, handled: 6 });
    expect(resent).toBe(0);
    // Three calls in the first window (paced at the header's "3/s": 333.334 ms, slept to the whole millisecond);
    // the third's answer (at T0 + 667 ms) says the window resets in 2 s (whole seconds, rounded up): the fourth
    // call then, and none before.
    expect(w.calls.slice(0, 3)).toEqual([T0, T0 + 334, T0 + 667]);
    expect(w.calls[3]).toBe(T0 + 667 + 2_000);
  });

  it('a long reset ends the slice: the rest come back as copies delayed to the reset, the store held until then', async () => {
    const { w, deps, dispatch, fill } = windowWorld(2, 10);
    const copies: { count: number; delay: number }[] = [];
    deps.tasks = {
      ...deps.tasks,
      resend: async (_url: string, batch: unknown[], delay: number) =>
        void copies.push({ count: batch.length, delay }),
    } as typeof deps.tasks;
    await dispatch.recordEnqueued('s1', 5, T0);
    fill(0, 5);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(w.calls).toHaveLength(2);
    expect(result).toMatchObject({ end: 'throttled', delivered: 2 });
    const spentAt = w.calls[1] as number;
    const reset = T0 + 10_000;
    // The window's reset, as the answer said it (whole seconds from the answer, so never before the reset).
    expect(copies).toEqual([{ count: 3, delay: Math.ceil((reset - spentAt) / 1000) }]);
    expect(result.nextCallAt).toBeGreaterThanOrEqual(reset);
    expect(result.resumeAt).toBeGreaterThanOrEqual(reset);
    // On the shared schedule too: a consumer a raised cap adds waits for the reset.
    expect(dispatch.items.get('s1')?.tat).toBeGreaterThanOrEqual(reset);
  });

  it('another consumer of the store does not call before the reset once the hold landed', async () => {
    const { w, deps, dispatch, fill } = windowWorld(2, 10);
    await dispatch.recordEnqueued('s1', 4, T0);
    const a = await leaseOf(dispatch, 'a', T0, 2);
    fill(0, 2);
    await runSlice(deps, store, { ...policy(2), maxMessagesPerSlice: 2 }, a);
    const b = await leaseOf(dispatch, 'b', w.now, 2);
    fill(2, 2);
    expect(w.calls).toHaveLength(2);
    // Its reservation lands after the hold, past a normal wait: it ends its slice until the reset.
    const result = await runSlice(deps, store, policy(2), b);
    expect(w.calls).toHaveLength(2);
    expect(result).toMatchObject({ end: 'throttled' });
    expect(result.resumeAt).toBeGreaterThanOrEqual(T0 + 10_000);
  });

  it.each([
    ['ends on the quota (copies)', 4, 8, 'throttled'],
    ['ends on its messages per slice', 2, 2, 'max_messages'],
  ])(
    'a hold that did not land goes back with the slice, whatever ends it, for the attention to write: %s',
    async (_name, messages, perSlice, end) => {
      const { w, deps, dispatch, fill } = windowWorld(2, 10);
      dispatch.holdTat = async () => {
        throw new Error('throttled by DynamoDB');
      };
      await dispatch.recordEnqueued('s1', messages, T0);
      fill(0, messages);
      const result = await runSlice(
        deps,
        store,
        { ...policy(2), maxMessagesPerSlice: perSlice },
        await leaseOf(dispatch, 'a', T0, 2),
      );
      const spentAt = w.calls[1] as number;
      expect(w.calls).toHaveLength(2);
      expect(result).toMatchObject({
        end,
        throttledUntil: spentAt + Math.ceil((T0 + 10_000 - spentAt) / 1000) * 1000,
      });
    },
  );

  it('a slice that errs after the quota was spent retries no sooner than the reset, and says so', async () => {
    const { deps, dispatch, fill } = windowWorld(2, 30);
    const receive = deps.tasks.receive.bind(deps.tasks);
    let receives = 0;
    deps.tasks = {
      ...deps.tasks,
      receive: async (...args: Parameters<typeof receive>) => {
        if (++receives > 1) throw new Error('SQS unavailable');
        return receive(...args);
      },
    } as typeof deps.tasks;
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    // The second call spent the 30 s window; the receive after it failed: the error's own backoff is shorter.
    expect(result).toMatchObject({ end: 'error', delivered: 2 });
    expect(result.resumeAt).toBeGreaterThanOrEqual(T0 + 30_000);
    expect(result.throttledUntil).toBeGreaterThanOrEqual(T0 + 30_000);
  });

  it('a hold that landed does not go back with the slice', async () => {
    const { deps, dispatch, fill } = windowWorld(2, 10);
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    const result = await runSlice(
      deps,
      store,
      { ...policy(2), maxMessagesPerSlice: 2 },
      await leaseOf(dispatch, 'a', T0, 2),
    );
    expect(result.end).toBe('max_messages');
    expect(result.throttledUntil).toBeUndefined();
  });

  it('a limit that names no window is paced over the window the Resets show, learnt for the store', async () => {
    const { w, deps, dispatch, fill } = windowWorld(5, 5, false);
    await dispatch.recordEnqueued('s1', 8, T0);
    fill(0, 8);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(result.delivered).toBe(8);
    // "5" read per second would be 200 ms apart; the first answer's Reset of 5 s says 5 per 5 s: 1 s apart, from
    // the next call on (the pace is read before each call). The fifth spends the window until T0 + 5 s.
    expect(w.calls).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000].map((at) => T0 + at));
    expect(dispatch.items.get('s1')?.rate).toMatchObject({ why: 'header', r: 1, w: 5 });
  });

  it('a later lease starts from the window the store learnt, whatever Reset its own first answer shows', async () => {
    const { w, deps, dispatch, fill } = windowWorld(5, 5, false);
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    // Late in the next window: its answers' Reset (1–2 s) alone would read 5 per 2 s.
    w.now = T0 + 8_000;
    fill(2, 2);
    await dispatch.recordEnqueued('s1', 2, w.now);
    const before = w.calls.length;
    const lease = await leaseOf(dispatch, 'b', w.now, 1);
    await runSlice(deps, store, policy(1), { ...lease, nextCallAt: w.now });
    expect(w.calls.slice(before)).toEqual([T0 + 8_000, T0 + 9_000]);
    expect(dispatch.items.get('s1')?.rate).toMatchObject({ r: 1, w: 5 });
  });

  it('after WINDOW_MEMORY_MS, a lease learns the window again from its own answers', async () => {
    const { w, deps, dispatch, fill } = windowWorld(5, 5, false);
    await dispatch.recordEnqueued('s1', 2, T0);
    fill(0, 2);
    await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    // Ten minutes on, 2 s before a window's end: its first answer's Reset of 2 s reads 5 per 2 s.
    w.now = T0 + WINDOW_MEMORY_MS + 3_000;
    fill(2, 2);
    await dispatch.recordEnqueued('s1', 2, w.now);
    const before = w.calls.length;
    const lease = await leaseOf(dispatch, 'b', w.now, 1);
    await runSlice(deps, store, policy(1), { ...lease, nextCallAt: w.now });
    expect(w.calls.slice(before)).toEqual([w.calls[before] as number, (w.calls[before] as number) + 400]);
    expect(dispatch.items.get('s1')?.rate).toMatchObject({ r: 2.5, w: 2 });
  });

  it.each([
    ['calls left', { remaining: 1, resetSeconds: 5 }],
    ['no reset', { remaining: 0 }],
    ['a reset of 0', { remaining: 0, resetSeconds: 0 }],
  ])('%s: no hold, the calls go at the rate', async (_name, quota) => {
    const { w, deps, dispatch, fill } = setup(() => ({
      kind: 'ok',
      status: 200,
      limit: { perSecond: 10, ...quota },
    }));
    await dispatch.recordEnqueued('s1', 3, T0);
    fill(0, 3);
    const result = await runSlice(deps, store, policy(1), await leaseOf(dispatch, 'a', T0, 1));
    expect(result.delivered).toBe(3);
    expect(w.calls).toEqual([T0, T0 + 100, T0 + 200]);
  });
});
