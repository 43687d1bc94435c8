import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { BACKOFF_FACTOR, SENT_MIN_SPAN_AFTER_BACKOFF_MS } from '../../../lambdas/core/adaptive-rate.js';
import { StoreRate } from '../../../lambdas/core/store-rate.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

const T = 1_800_000_000_000;
const POLICY = 20;

const setup = async () => {
  const w = { now: T };
  const dispatch = new MemoryDispatchState();
  await dispatch.recordEnqueued('s1', 1, T);
  await dispatch.issueSlot('s1', 'a', T, 3, T);
  const deps = {
    dispatch,
    clock: { now: () => w.now, sleep: async (ms: number) => void (w.now += ms) },
    telemetry: new RecordingTelemetry(),
  };
  return { w, dispatch, rate: new StoreRate(deps, 's1', POLICY, undefined) };
};

describe('StoreRate: the sent-rate bound', () => {
  it('bounds a 429’s estimate by the store’s calls counted by the shared schedule (all consumers)', async () => {
    const { w, dispatch, rate } = await setup();
    // The store's consumers reserved 8 calls/s for 5 s (the schedule's call count), this lease one in four.
    for (let ms = 0; ms <= 5_000; ms += 500) {
      w.now = T + ms;
      rate.reserved({ tat: w.now, calls: (ms / 1000) * 8 });
    }
    await rate.observe({ throttled: true, startedAt: w.now - 30 });
    expect(dispatch.items.get('s1')?.rate).toEqual({
      why: 'backoff',
      r: POLICY * BACKOFF_FACTOR,
      c: 8,
      at: T + 5_000,
    });
  });

  it('counts a block’s instants where the schedule puts them, not when they were reserved', async () => {
    const { w, dispatch, rate } = await setup();
    // 4/s: a block of 4 instants (to T + 1 s), then one of 20 reserved ahead at T + 0.9 s (to T + 6 s). Read at the
    // clock, the second block's 20 instants in 0.9 s looked like 22 calls/s.
    rate.reserved({ tat: T + 1_000, calls: 4 });
    w.now = T + 900;
    rate.reserved({ tat: T + 6_000, calls: 24 });
    w.now = T + 2_000;
    await rate.observe({ throttled: true, startedAt: w.now - 30 });
    expect(dispatch.items.get('s1')?.rate?.c).toBeCloseTo(4);
  });

  it('after a backoff, bounds the estimate only by a count spanning SENT_MIN_SPAN_AFTER_BACKOFF_MS', async () => {
    const run = async (span: number) => {
      const { w, dispatch, rate } = await setup();
      // A backoff 20 s ago to 4/s with a limit estimate of 8/s: the rate has climbed past the knee since.
      await dispatch.noteRate('s1', { why: 'backoff', r: 4, c: 8, at: T - 20_000 }, undefined);
      rate.adopt((await dispatch.read('s1'))?.rate);
      // The schedule counted 3 calls a second over `span`.
      rate.reserved({ tat: T, calls: 100 });
      rate.reserved({ tat: T + span, calls: 100 + (3 * span) / 1000 });
      w.now = T + span;
      await rate.observe({ throttled: true, startedAt: w.now - 30 });
      return dispatch.items.get('s1')?.rate?.c;
    };
    expect(await run(SENT_MIN_SPAN_AFTER_BACKOFF_MS)).toBeCloseTo(3);
    expect(await run(SENT_MIN_SPAN_AFTER_BACKOFF_MS - 1)).toBeGreaterThan(6);
  });

  it('a single-consumer store counts its own calls (no shared schedule hands a count)', async () => {
    const { w, dispatch, rate } = await setup();
    // Calls start every 250 ms (4/s) for 3 s; no reservation carries a count.
    for (let ms = 0; ms <= 3_000; ms += 250) {
      w.now = T + ms + 20;
      rate.reserved({ tat: w.now });
      await rate.observe({ throttled: ms === 3_000, startedAt: T + ms });
    }
    expect(dispatch.items.get('s1')?.rate?.c).toBeCloseTo(4);
  });

  it('once a shared count is seen, its own calls no longer count', async () => {
    const { w, dispatch, rate } = await setup();
    for (let ms = 0; ms <= 2_000; ms += 100) {
      w.now = T + ms;
      if (ms % 1_000 === 0) rate.reserved({ tat: w.now, calls: ms / 1000 });
      await rate.observe({ throttled: ms === 2_000, startedAt: w.now });
    }
    // One call a second by the schedule's count, not the ten a second this lease observed.
    expect(dispatch.items.get('s1')?.rate?.c).toBeCloseTo(1);
  });

  it('without enough samples, the estimate is the rate at the 429 (the policy, at first)', async () => {
    const { w, dispatch, rate } = await setup();
    rate.reserved({ tat: w.now, calls: 1 });
    w.now += 500;
    rate.reserved({ tat: w.now, calls: 5 });
    await rate.observe({ throttled: true, startedAt: w.now });
    expect(dispatch.items.get('s1')?.rate?.c).toBe(POLICY);
  });

  it('follows the learnt rate a reservation hands back', async () => {
    const { rate } = await setup();
    rate.reserved({ tat: T, rate: { why: 'header', r: 5, at: T }, calls: 3 });
    expect(rate.current()).toEqual({ configured: POLICY, effective: 5, reason: 'header' });
  });
});

describe('StoreRate: the look before a call (peek)', () => {
  it('is wanted only while a backoff holds the rate under the policy', async () => {
    const { w, rate } = await setup();
    expect(rate.peekWanted()).toBe(false);
    await rate.observe({ throttled: true, startedAt: w.now - 30 });
    expect(rate.peekWanted()).toBe(true);
    // Recovered to the policy (hours later): no more looks.
    w.now += 3_600_000;
    expect(rate.peekWanted()).toBe(false);
  });

  it('adopts the rate another consumer wrote since, and keeps its own view when the read fails', async () => {
    const { w, dispatch, rate } = await setup();
    const theirs = { why: 'backoff' as const, r: 1, c: 2, at: T + 5 };
    await dispatch.noteRate('s1', theirs, undefined);
    await rate.peek();
    expect(rate.current()).toEqual({ configured: POLICY, effective: 1, reason: 'backoff' });
    vi.spyOn(dispatch, 'read').mockRejectedValueOnce(new Error('DynamoDB unavailable'));
    w.now = T + 5;
    await rate.peek();
    expect(rate.current().effective).toBe(1);
  });
});

describe('StoreRate: what a look answers', () => {
  it('another consumer’s new backoff: one new interval after its 429; the same state again: nothing', async () => {
    const { dispatch, rate } = await setup();
    const theirs = { why: 'backoff' as const, r: 4, c: 8, at: T - 100 };
    await dispatch.noteRate('s1', theirs, undefined);
    // 100 ms after their 429 the rate climbed from 4 (+4/s a second): 4.4/s, an interval of 228 ms.
    expect(await rate.peek()).toBe(T - 100 + Math.ceil(1000 / 4.4));
    expect(await rate.peek()).toBeUndefined();
  });

  it('a header rate another consumer learnt: adopted, no quiet time (it is not a 429)', async () => {
    const { dispatch, rate } = await setup();
    await dispatch.noteRate('s1', { why: 'header', r: 3, at: T - 100 }, undefined);
    expect(await rate.peek()).toBeUndefined();
    expect(rate.current()).toEqual({ configured: POLICY, effective: 3, reason: 'header' });
  });
});

describe('StoreRate: the rate change in the logs', () => {
  it('names a backoff’s limit estimate, and no estimate for a header rate', async () => {
    const records: LogRecord[] = [];
    const w = { now: T };
    const dispatch = new MemoryDispatchState();
    await dispatch.recordEnqueued('s1', 1, T);
    const deps = {
      dispatch,
      clock: { now: () => w.now, sleep: async (ms: number) => void (w.now += ms) },
      telemetry: new RecordingTelemetry((r) => records.push(r), 'info'),
    };
    const rate = new StoreRate(deps, 's1', POLICY, undefined);
    await rate.observe({ throttled: true, startedAt: T - 30 });
    w.now += 1_000;
    await rate.observe({ throttled: false, startedAt: w.now - 30, limit: { perSecond: 4 } });
    expect(
      records
        .filter((r) => r.message === 'marketplace rate adjusted')
        .map((r) => ({ reason: r.fields?.['reason'], limitEstimate: r.fields?.['limitEstimate'] })),
    ).toEqual([
      { reason: 'backoff', limitEstimate: POLICY },
      { reason: 'header', limitEstimate: undefined },
    ]);
    expect(records.filter((r) => r.message === 'marketplace rate adjusted')[1]?.fields).not.toHaveProperty(
      'limitEstimate',
    );
  });
});

describe("StoreRate: a write another consumer's came before", () => {
  it('takes the rate another consumer wrote first for the store’s (its own news reaches it next time)', async () => {
    const { w, dispatch, rate } = await setup();
    // Another consumer learnt a header rate after this lease last saw the state.
    await dispatch.noteRate('s1', { why: 'header', r: 3, at: T + 10 }, undefined);
    w.now = T + 20;
    await rate.observe({ throttled: true, startedAt: T + 15 });
    expect(dispatch.items.get('s1')?.rate).toEqual({ why: 'header', r: 3, at: T + 10 });
    expect(rate.current()).toEqual({ configured: POLICY, effective: 3, reason: 'header' });
  });

  it('keeps its own view when a reservation hands back no rate', async () => {
    const { rate } = await setup();
    rate.reserved({ tat: T, rate: { why: 'header', r: 5, at: T }, calls: 1 });
    rate.reserved({ tat: T, calls: 2 });
    rate.adopt(undefined);
    expect(rate.current()).toEqual({ configured: POLICY, effective: 5, reason: 'header' });
  });

  it('warns, and keeps following its own answer, when the write fails', async () => {
    const records: LogRecord[] = [];
    const dispatch = new MemoryDispatchState();
    await dispatch.recordEnqueued('s1', 1, T);
    vi.spyOn(dispatch, 'noteRate').mockRejectedValueOnce(new Error('DynamoDB unavailable'));
    const deps = {
      dispatch,
      clock: { now: () => T, sleep: async () => undefined },
      telemetry: new RecordingTelemetry((r) => records.push(r), 'info'),
    };
    const rate = new StoreRate(deps, 's1', POLICY, undefined);
    await rate.observe({ throttled: false, startedAt: T - 30, limit: { perSecond: 4 } });
    expect(rate.current().effective).toBe(4);
    expect(records.filter((r) => r.level === 'warn')).toEqual([
      expect.objectContaining({
        message: 'marketplace rate not recorded',
        fields: expect.objectContaining({ error: 'Error: DynamoDB unavailable' }),
      }),
    ]);
  });
});
