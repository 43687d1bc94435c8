import { describe, expect, it } from 'vitest';
import {
  afterAnswer,
  BACKOFF_FACTOR,
  CONVERGE_BELOW,
  CONVERGE_FACTOR,
  effectiveRate,
  FAST_RECOVERY_SHARE,
  FIRST_HOLD_MS,
  firstHoldUntil,
  MIN_RATE_PER_SECOND,
  PROBE_ACCELERATION_SHARE,
  PROBE_AFTER_SECONDS,
  quotaSpentUntil,
  learnWindow,
  windowRemembered,
  WINDOW_MEMORY_MS,
  MAX_WINDOW_SECONDS,
  RECOVERY_KNEE,
  resumeWithinSlice,
  RATE_REASONS,
  RateStateSchema,
  SENT_MIN_SPAN_MS,
  SENT_MIN_WINDOW_MS,
  SENT_WINDOW_MS,
  SentCount,
  SLEEP_THROUGH_MAX_SECONDS,
  SLOW_RECOVERY_SHARE,
  type RateState,
} from '../../../lambdas/core/adaptive-rate.js';

const T = 1_800_000_000_000;
const POLICY = 20;

describe('effectiveRate', () => {
  it('is the policy rate while nothing is learnt', () => {
    expect(effectiveRate(undefined, POLICY, T)).toEqual({ configured: 20, effective: 20, reason: 'policy' });
  });

  it.each([
    [6, { configured: 20, effective: 6, reason: 'header' }],
    [20, { configured: 20, effective: 20, reason: 'policy' }],
    [50, { configured: 20, effective: 20, reason: 'policy' }],
  ])('follows a header rate of %d/s, never above the policy', (r, expected) => {
    expect(effectiveRate({ why: 'header', r, at: T }, POLICY, T + 60_000)).toEqual(expected);
  });

  it('recovers a backoff fast up to the knee under the estimate, slowly past it, then probes ever faster', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const fast = FAST_RECOVERY_SHARE * POLICY;
    const slow = SLOW_RECOVERY_SHARE * 6;
    const accel = PROBE_ACCELERATION_SHARE * 6;
    const knee = RECOVERY_KNEE * 6;
    const toKnee = ((knee - 3) / fast) * 1000;
    const probing = toKnee + PROBE_AFTER_SECONDS * 1000;
    expect(effectiveRate(state, POLICY, T).effective).toBe(3);
    expect(effectiveRate(state, POLICY, T + 100).effective).toBeCloseTo(3 + fast * 0.1);
    expect(effectiveRate(state, POLICY, T + toKnee).effective).toBeCloseTo(knee);
    expect(effectiveRate(state, POLICY, T + toKnee + 2_000).effective).toBeCloseTo(knee + slow * 2);
    expect(effectiveRate(state, POLICY, T + probing).effective).toBeCloseTo(
      knee + slow * PROBE_AFTER_SECONDS,
    );
    expect(effectiveRate(state, POLICY, T + probing + 5_000).effective).toBeCloseTo(
      knee + slow * (PROBE_AFTER_SECONDS + 5) + accel * 25,
    );
    // A doubled limit is reached within about 10 s of probing.
    expect(effectiveRate(state, POLICY, T + probing + 10_000).effective).toBeGreaterThan(12);
    expect(effectiveRate(state, POLICY, T + probing + 5_000).reason).toBe('backoff');
    // Long enough without a 429: back at the policy rate, and said so.
    expect(effectiveRate(state, POLICY, T + 3_600_000)).toEqual({
      configured: 20,
      effective: 20,
      reason: 'policy',
    });
  });

  it('never slows a store below one call per 10 s (or its policy, if lower)', () => {
    expect(effectiveRate({ why: 'header', r: 0.001, at: T }, POLICY, T).effective).toBe(MIN_RATE_PER_SECOND);
    expect(effectiveRate({ why: 'header', r: 0.001, at: T }, 0.05, T).effective).toBe(0.05);
  });
});

describe('afterAnswer', () => {
  const ok = { throttled: false, startedAt: T };

  it('changes nothing on a plain success', () => {
    expect(afterAnswer(undefined, ok, POLICY, T)).toBeUndefined();
  });

  it('takes a header rate, and writes again only when it moves by more than 2 %', () => {
    const learnt = afterAnswer(undefined, { ...ok, limit: { perSecond: 6 } }, POLICY, T);
    expect(learnt).toEqual({ why: 'header', r: 6, at: T });
    expect(afterAnswer(learnt, { ...ok, limit: { perSecond: 6.1 } }, POLICY, T + 1)).toBeUndefined();
    expect(afterAnswer(learnt, { ...ok, limit: { perSecond: 3 } }, POLICY, T + 2)).toEqual({
      why: 'header',
      r: 3,
      at: T + 2,
    });
  });

  it('does not write a header at or above the policy when nothing is learnt', () => {
    expect(afterAnswer(undefined, { ...ok, limit: { perSecond: 40 } }, POLICY, T)).toBeUndefined();
  });

  it('lets a header raise a learnt rate again (the marketplace raised its limit)', () => {
    const state: RateState = { why: 'header', r: 3, at: T };
    const raised = afterAnswer(state, { ...ok, limit: { perSecond: 40 } }, POLICY, T + 5);
    expect(effectiveRate(raised, POLICY, T + 5)).toEqual({ configured: 20, effective: 20, reason: 'policy' });
  });

  it('halves the effective rate on a bare 429 and remembers where it came', () => {
    expect(afterAnswer(undefined, { throttled: true, startedAt: T }, POLICY, T + 10)).toEqual({
      why: 'backoff',
      r: POLICY * BACKOFF_FACTOR,
      c: POLICY,
      at: T + 10,
    });
  });

  it('backs off once per congestion: a 429 for a call that started before the last change is ignored', () => {
    const state: RateState = { why: 'backoff', r: 10, c: 20, at: T + 10 };
    expect(afterAnswer(state, { throttled: true, startedAt: T + 5 }, POLICY, T + 20)).toBeUndefined();
    const again = afterAnswer(state, { throttled: true, startedAt: T + 15 }, POLICY, T + 20);
    expect(again?.r).toBeCloseTo(effectiveRate(state, POLICY, T + 20).effective * BACKOFF_FACTOR);
  });

  it('after a backoff, takes the mean rate since as the limit estimate (below the rate at the 429)', () => {
    // Recovering from 3 with an estimate of 6: fast to the knee, then slowly past it; a 429 after 10 s.
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const now = T + 10_000;
    const current = effectiveRate(state, POLICY, now).effective;
    const next = afterAnswer(state, { throttled: true, startedAt: now - 50 }, POLICY, now);
    // The mean of the recovery, by steps: the estimate is the store's average rate since the last change.
    let sum = 0;
    for (let ms = 0; ms < 10_000; ms += 1) sum += effectiveRate(state, POLICY, T + ms + 0.5).effective;
    expect(next?.c).toBeCloseTo(sum / 10_000, 3);
    expect(next?.c).toBeLessThan(current);
    expect(next?.r).toBeCloseTo(current * BACKOFF_FACTOR);
    // The next recovery climbs fast only to the knee under that estimate.
    const after = next as RateState;
    expect(effectiveRate(after, POLICY, now + 60_000).effective).toBeGreaterThan(
      (RECOVERY_KNEE * sum) / 10_000,
    );
  });

  it('probing past the estimate: a 429 there keeps an estimate above the previous one', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const now = T + 24_000;
    const next = afterAnswer(state, { throttled: true, startedAt: now - 50 }, POLICY, now);
    expect(next?.c).toBeGreaterThan(6);
    expect(next?.c).toBeLessThan(effectiveRate(state, POLICY, now).effective);
  });

  it('a header on a 429 wins over the backoff (the marketplace said how much)', () => {
    expect(
      afterAnswer(undefined, { throttled: true, startedAt: T, limit: { perSecond: 4 } }, POLICY, T),
    ).toEqual({ why: 'header', r: 4, at: T });
  });

  it('never recovers above the policy rate, whatever the answers (property)', () => {
    let state: RateState | undefined;
    let now = T;
    for (let i = 0; i < 2_000; i++) {
      now += (i * 7919) % 900;
      const throttled = i % 37 === 0;
      state = afterAnswer(state, { throttled, startedAt: now - 50 }, POLICY, now) ?? state;
      expect(effectiveRate(state, POLICY, now).effective).toBeLessThanOrEqual(POLICY);
      expect(effectiveRate(state, POLICY, now).effective).toBeGreaterThanOrEqual(MIN_RATE_PER_SECOND);
    }
  });
});

describe('the rules at their edges', () => {
  const okAnswer = { throttled: false, startedAt: T };

  it('takes a header exactly 2 % off as a repeat, and one at the policy as nothing new', () => {
    expect(
      afterAnswer({ why: 'header', r: 50, at: T }, { ...okAnswer, limit: { perSecond: 51 } }, 100, T),
    ).toBe(undefined);
    expect(
      afterAnswer({ why: 'header', r: 50, at: T }, { ...okAnswer, limit: { perSecond: 49 } }, 100, T),
    ).toBe(undefined);
    expect(afterAnswer(undefined, { ...okAnswer, limit: { perSecond: POLICY } }, POLICY, T)).toBeUndefined();
    // A header over a backoff replaces it even when it equals the backoff's rate.
    expect(
      afterAnswer(
        { why: 'backoff', r: 5, c: 10, at: T },
        { ...okAnswer, limit: { perSecond: 5 } },
        POLICY,
        T + 1,
      ),
    ).toEqual({ why: 'header', r: 5, at: T + 1 });
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'ignores a header rate of %s (a 429 carrying it is a bare one)',
    (perSecond) => {
      expect(afterAnswer(undefined, { ...okAnswer, limit: { perSecond } }, POLICY, T)).toBeUndefined();
      expect(
        afterAnswer(undefined, { throttled: true, startedAt: T, limit: { perSecond } }, POLICY, T),
      ).toEqual({ why: 'backoff', r: POLICY * BACKOFF_FACTOR, c: POLICY, at: T });
    },
  );

  it('a 429 for a call that started exactly at the last change is a new congestion', () => {
    const state: RateState = { why: 'backoff', r: 10, c: 20, at: T };
    expect(afterAnswer(state, { throttled: true, startedAt: T }, POLICY, T + 1_000)).toBeDefined();
  });

  it('a 429 at the very instant of the last change takes under the rate then as its estimate (it fell)', () => {
    const state: RateState = { why: 'backoff', r: 4, c: 8, at: T };
    expect(afterAnswer(state, { throttled: true, startedAt: T }, POLICY, T)).toEqual({
      why: 'backoff',
      r: 4 * BACKOFF_FACTOR,
      c: 4 * CONVERGE_FACTOR,
      at: T,
    });
  });

  it('a backoff without an estimate (an older state) recovers towards twice its rate', () => {
    const state: RateState = { why: 'backoff', r: 3, at: T };
    const knee = RECOVERY_KNEE * 6;
    const toKnee = ((knee - 3) / (FAST_RECOVERY_SHARE * POLICY)) * 1000;
    expect(effectiveRate(state, POLICY, T + toKnee).effective).toBeCloseTo(knee);
    expect(effectiveRate(state, POLICY, T + toKnee + 1_000).effective).toBeCloseTo(
      knee + SLOW_RECOVERY_SHARE * 6,
    );
  });

  it('a state written on a clock ahead of this one holds at its rate (no negative recovery)', () => {
    expect(effectiveRate({ why: 'backoff', r: 3, c: 6, at: T + 5_000 }, POLICY, T).effective).toBe(3);
  });

  it('a backoff state is reported as one, a header as a header', () => {
    expect(effectiveRate({ why: 'backoff', r: 3, c: 6, at: T }, POLICY, T).reason).toBe('backoff');
    expect(RATE_REASONS).toEqual(['policy', 'header', 'backoff']);
  });
});

describe('more edges (mutation survivors)', () => {
  it('a header at or above the policy over a learnt state replaces it (the policy holds again)', () => {
    expect(
      afterAnswer(
        { why: 'header', r: 3, at: T },
        { throttled: false, startedAt: T, limit: { perSecond: 40 } },
        POLICY,
        T + 5,
      ),
    ).toEqual({ why: 'header', r: 40, at: T + 5 });
  });

  it('a 429 while probing takes the mean of the whole recovery, probing included, as its estimate', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const now = T + 24_000; // well into the probing, still under the policy
    const next = afterAnswer(state, { throttled: true, startedAt: now - 50 }, POLICY, now);
    let sum = 0;
    for (let ms = 0; ms < 24_000; ms += 1) sum += effectiveRate(state, POLICY, T + ms + 0.5).effective;
    expect(next?.c).toBeCloseTo(sum / 24_000, 3);
  });

  it('the stored state knows both reasons and nothing else', () => {
    expect(RateStateSchema.parse({ why: 'header', r: 4, at: T })).toEqual({ why: 'header', r: 4, at: T });
    expect(RateStateSchema.parse({ why: 'backoff', r: 2, at: T, c: 4 })).toEqual({
      why: 'backoff',
      r: 2,
      at: T,
      c: 4,
    });
    expect(RateStateSchema.safeParse({ why: 'policy', r: 4, at: T }).success).toBe(false);
    expect(RateStateSchema.safeParse({ why: 'header', r: 0, at: T }).success).toBe(false);
  });

  it('counts a sample at the same instant with more calls, and one later with no more', () => {
    const same = new SentCount();
    same.add(T, 0);
    same.add(T + 1_000, 2);
    same.add(T + 1_000, 4);
    expect(same.perSecond(undefined, T + 1_000)).toBe(4);
    const still = new SentCount();
    still.add(T, 0);
    still.add(T + 1_000, 5);
    still.add(T + 5_000, 5); // no call for 4 s: the rate over the 5 s falls
    expect(still.perSecond(undefined, T + 5_000)).toBe(1);
  });
});

describe('fast convergence: a 429 under the knee says the limit fell', () => {
  // Recovering from 3 towards an estimate of 8: the knee is 6.8, reached after (6.8 − 3) / 4 s = 0.95 s.
  const state: RateState = { why: 'backoff', r: 3, c: 8, at: T };
  const at = (rate: number): number => {
    // The instant the recovery reaches `rate` (in its fast phase: 4/s a second from 3).
    return T + ((rate - 3) / (FAST_RECOVERY_SHARE * POLICY)) * 1000;
  };

  it('is CUBIC’s (1 + β) / 2 of the rate at the 429, and the split is at 90 % of the estimate', () => {
    expect(CONVERGE_FACTOR).toBe(0.75);
    expect(CONVERGE_BELOW).toBe(0.9);
  });

  it('a 429 during the fast climb takes 3/4 of the rate at it as the estimate, under the old knee', () => {
    const now = at(5);
    const current = effectiveRate(state, POLICY, now).effective;
    expect(current).toBeCloseTo(5);
    const next = afterAnswer(state, { throttled: true, startedAt: now - 10 }, POLICY, now) as RateState;
    expect(next.c).toBeCloseTo(CONVERGE_FACTOR * 5);
    expect(next.r).toBeCloseTo(5 * BACKOFF_FACTOR);
    // The next recovery's knee lies under the rate that met the 429.
    expect(RECOVERY_KNEE * (next.c as number)).toBeLessThan(5 * CONVERGE_FACTOR);
  });

  it('takes the lower of that and the sent-rate bound', () => {
    const now = at(5);
    const next = afterAnswer(
      state,
      { throttled: true, startedAt: now - 10, sentPerSecond: 2.5 },
      POLICY,
      now,
    );
    expect(next?.c).toBeCloseTo(2.5);
  });

  it('a 429 at or above 90 % of the estimate keeps the mean-rate estimate (the limit is near it)', () => {
    // Past the knee, climbing slowly (0.08/s): 7.2 = 90 % of 8 is reached 5 s after it.
    const knee = T + 950;
    const justBelow = knee + 4_900;
    const justAbove = knee + 5_100;
    expect(effectiveRate(state, POLICY, justBelow).effective).toBeLessThan(CONVERGE_BELOW * 8);
    expect(effectiveRate(state, POLICY, justAbove).effective).toBeGreaterThan(CONVERGE_BELOW * 8);
    const below = afterAnswer(state, { throttled: true, startedAt: justBelow - 10 }, POLICY, justBelow);
    const above = afterAnswer(state, { throttled: true, startedAt: justAbove - 10 }, POLICY, justAbove);
    expect(below?.c).toBeCloseTo(CONVERGE_FACTOR * effectiveRate(state, POLICY, justBelow).effective);
    // Above: the mean rate of the recovery since the backoff, by steps.
    let sum = 0;
    for (let ms = 0; ms < justAbove - T; ms += 1) sum += effectiveRate(state, POLICY, T + ms + 0.5).effective;
    expect(above?.c).toBeCloseTo(sum / (justAbove - T), 3);
  });

  it('a 429 exactly at 90 % of the estimate is not a fall', () => {
    // At the instant of the backoff the rate is its r: 9 = 90 % of 10.
    const at90: RateState = { why: 'backoff', r: 9, c: 10, at: T };
    expect(afterAnswer(at90, { throttled: true, startedAt: T }, POLICY, T)?.c).toBe(9);
    const under: RateState = { why: 'backoff', r: 8.99, c: 10, at: T };
    expect(afterAnswer(under, { throttled: true, startedAt: T }, POLICY, T)?.c).toBeCloseTo(
      8.99 * CONVERGE_FACTOR,
    );
  });

  it('does not apply to a first backoff, or after a header rate', () => {
    expect(afterAnswer(undefined, { throttled: true, startedAt: T }, POLICY, T + 10)?.c).toBe(POLICY);
    const header: RateState = { why: 'header', r: 6, at: T };
    expect(afterAnswer(header, { throttled: true, startedAt: T + 10 }, POLICY, T + 20)?.c).toBe(6);
  });
});

describe('the sent-rate bound on a 429', () => {
  it('bounds the first estimate by the rate the store actually sent, not the rate (policy) it was allowed', () => {
    const next = afterAnswer(undefined, { throttled: true, startedAt: T, sentPerSecond: 9 }, POLICY, T + 10);
    // The rate itself still halves from where it was (the bound only moves the knee and the probing).
    expect(next).toEqual({ why: 'backoff', r: POLICY * BACKOFF_FACTOR, c: 9, at: T + 10 });
  });

  it('bounds an estimate taken from the recovery curve when the store sent less than the curve allowed', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const now = T + 10_000;
    const curve = afterAnswer(state, { throttled: true, startedAt: now - 50 }, POLICY, now)?.c as number;
    const sent = curve - 1;
    const next = afterAnswer(
      state,
      { throttled: true, startedAt: now - 50, sentPerSecond: sent },
      POLICY,
      now,
    );
    expect(next?.c).toBe(sent);
    expect(next?.r).toBeCloseTo(effectiveRate(state, POLICY, now).effective * BACKOFF_FACTOR);
  });

  it('never raises an estimate: a sent rate above the curve changes nothing', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const now = T + 10_000;
    const curve = afterAnswer(state, { throttled: true, startedAt: now - 50 }, POLICY, now);
    expect(
      afterAnswer(state, { throttled: true, startedAt: now - 50, sentPerSecond: 100 }, POLICY, now),
    ).toEqual(curve);
  });

  it.each([0, -3, Number.NaN, Number.POSITIVE_INFINITY])('ignores a sent rate of %s', (sent) => {
    expect(
      afterAnswer(undefined, { throttled: true, startedAt: T, sentPerSecond: sent }, POLICY, T + 10),
    ).toEqual({ why: 'backoff', r: POLICY * BACKOFF_FACTOR, c: POLICY, at: T + 10 });
  });

  it('keeps the estimate at or above the floor however little was sent', () => {
    const next = afterAnswer(undefined, { throttled: true, startedAt: T, sentPerSecond: 0.01 }, POLICY, T);
    expect(next?.c).toBe(MIN_RATE_PER_SECOND);
  });

  it('a sent rate on a plain success or a header answer changes nothing', () => {
    expect(afterAnswer(undefined, { throttled: false, startedAt: T, sentPerSecond: 1 }, POLICY, T)).toBe(
      undefined,
    );
    expect(
      afterAnswer(
        undefined,
        { throttled: true, startedAt: T, sentPerSecond: 1, limit: { perSecond: 4 } },
        POLICY,
        T,
      ),
    ).toEqual({ why: 'header', r: 4, at: T });
  });
});

describe('SentCount', () => {
  it('says nothing from no samples, or samples spanning less than the minimum span', () => {
    const count = new SentCount();
    expect(count.perSecond(undefined, T)).toBeUndefined();
    count.add(T, 0);
    count.add(T + SENT_MIN_SPAN_MS - 1, 5);
    expect(count.perSecond(undefined, T + SENT_MIN_SPAN_MS)).toBeUndefined();
    count.add(T + SENT_MIN_SPAN_MS, 6);
    expect(count.perSecond(undefined, T + SENT_MIN_SPAN_MS)).toBe(6);
  });

  it('measures over the whole window when nothing changed, at most SENT_WINDOW_MS back', () => {
    const count = new SentCount();
    // 4 calls/s for 20 s, then 1/s for 10 s.
    for (let ms = 0; ms <= 20_000; ms += 250) count.add(T + ms, ms / 250);
    for (let ms = 21_000; ms <= 30_000; ms += 1_000) count.add(T + ms, 80 + (ms - 20_000) / 1_000);
    expect(count.perSecond(undefined, T + 30_000)).toBeCloseTo(1);
  });

  it('measures from the last change, but over at least SENT_MIN_WINDOW_MS', () => {
    const count = new SentCount();
    // 10 calls/s for 10 s, then 2/s for 5 s.
    for (let ms = 0; ms <= 10_000; ms += 100) count.add(T + ms, ms / 100);
    for (let ms = 10_500; ms <= 15_000; ms += 500) count.add(T + ms, 100 + (ms - 10_000) / 500);
    const now = T + 15_000;
    expect(count.perSecond(T + 10_000, now)).toBeCloseTo(2);
    // A change 100 ms ago: the last SENT_MIN_WINDOW_MS (all at 2/s here).
    expect(count.perSecond(now - 100, now)).toBeCloseTo(2);
    // A change long ago: the whole window, 5 s at 10/s and 5 s at 2/s.
    expect(count.perSecond(T - 60_000, now)).toBeCloseTo(6);
    expect(SENT_MIN_WINDOW_MS).toBeLessThan(5_000);
    expect(SENT_WINDOW_MS).toBe(10_000);
  });

  it('a lease younger than the window measures over what it saw', () => {
    const count = new SentCount();
    for (let ms = 0; ms <= 3_000; ms += 250) count.add(T + ms, (ms * 8) / 1000);
    expect(count.perSecond(undefined, T + 3_000)).toBeCloseTo(8);
  });

  it('drops samples out of order or going back (a slow reservation answering late)', () => {
    const count = new SentCount();
    count.add(T, 10);
    count.add(T + 2_000, 30);
    count.add(T + 1_000, 40); // older than the latest: ignored
    count.add(T + 2_500, 20); // the count went back: ignored
    expect(count.perSecond(undefined, T + 2_500)).toBe(10);
  });

  it('keeps one sample before the window as its anchor, and forgets the older ones', () => {
    const count = new SentCount();
    count.add(T, 0);
    count.add(T + 1_000, 100); // a burst long ago
    count.add(T + 30_000, 100);
    count.add(T + 35_000, 110);
    // From T + 25 s: the anchor is T + 1 s (the newest before the window), not T.
    expect(count.perSecond(undefined, T + 35_000)).toBeCloseTo(10 / 34);
  });
});

describe('resumeWithinSlice', () => {
  const deadline = T + 20_000;

  it('sleeps through a short Retry-After that ends before the slice deadline', () => {
    expect(resumeWithinSlice(1, T, deadline)).toBe(T + 1_000);
    expect(resumeWithinSlice(SLEEP_THROUGH_MAX_SECONDS, T, deadline)).toBe(
      T + SLEEP_THROUGH_MAX_SECONDS * 1000,
    );
  });

  it('ends the slice for a longer one, or one that outlasts the deadline', () => {
    expect(resumeWithinSlice(SLEEP_THROUGH_MAX_SECONDS + 1, T, deadline)).toBeUndefined();
    expect(resumeWithinSlice(1, deadline - 1_000, deadline)).toBeUndefined();
    expect(resumeWithinSlice(1, deadline - 1_001, deadline)).toBe(deadline - 1);
  });
});

describe('firstHoldUntil', () => {
  it("holds a multi-consumer store for the 429's whole Retry-After at once", () => {
    expect(firstHoldUntil(3, T)).toBe(T + 3_000);
    expect(firstHoldUntil(30, T)).toBe(T + 30_000);
  });

  it('never for less than FIRST_HOLD_MS, the least a Retry-After means', () => {
    expect(FIRST_HOLD_MS).toBe(1_000);
    expect(firstHoldUntil(undefined, T)).toBe(T + FIRST_HOLD_MS);
    expect(firstHoldUntil(0.5, T)).toBe(T + FIRST_HOLD_MS);
    expect(firstHoldUntil(1.5, T)).toBe(T + 1_500);
  });
});

describe('quotaSpentUntil (RateLimit-Remaining: 0 until RateLimit-Reset)', () => {
  it('holds until the reset when no call is left in the window', () => {
    expect(quotaSpentUntil({ perSecond: 5, remaining: 0, resetSeconds: 4 }, T)).toBe(T + 4_000);
    // A fractional reset, rounded up to a whole millisecond (never before it).
    expect(quotaSpentUntil({ perSecond: 5, remaining: 0, resetSeconds: 0.0015 }, T)).toBe(T + 2);
    // A count gone below zero (a marketplace counting calls over the quota) is spent as well.
    expect(quotaSpentUntil({ perSecond: 5, remaining: -1, resetSeconds: 1 }, T)).toBe(T + 1_000);
  });

  it('at most SQS’s longest delay: a Reset that is an epoch time does not hold for decades', () => {
    expect(quotaSpentUntil({ perSecond: 5, remaining: 0, resetSeconds: 900 }, T)).toBe(T + 900_000);
    expect(quotaSpentUntil({ perSecond: 5, remaining: 0, resetSeconds: 1_800_000_000 }, T)).toBe(T + 900_000);
  });

  it.each([
    ['no limit', undefined],
    ['calls left', { perSecond: 5, remaining: 1, resetSeconds: 4 }],
    ['no Remaining', { perSecond: 5, resetSeconds: 4 }],
    ['no Reset', { perSecond: 5, remaining: 0 }],
    ['a Reset of 0', { perSecond: 5, remaining: 0, resetSeconds: 0 }],
  ])('no hold with %s', (_name, limit) => {
    expect(quotaSpentUntil(limit, T)).toBeUndefined();
  });
});

describe('learnWindow (a RateLimit-Limit that names no window)', () => {
  it('takes the count over the longest Reset seen as the rate, never above the per-second reading', () => {
    const bare = { perSecond: 30, perWindow: 30 };
    expect(learnWindow({ ...bare, resetSeconds: 5 }, undefined)).toEqual({
      limit: { ...bare, resetSeconds: 5, perSecond: 6 },
      window: 5,
    });
    // A later answer's shorter Reset (late in a window) keeps the window learnt.
    expect(learnWindow({ ...bare, resetSeconds: 2 }, 5).limit?.perSecond).toBe(6);
    expect(learnWindow({ ...bare, resetSeconds: 10 }, 5)).toMatchObject({
      limit: { perSecond: 3 },
      window: 10,
    });
    // No Reset, or under a second: per second, as read.
    expect(learnWindow(bare, undefined)).toEqual({ limit: bare, window: 1 });
    expect(learnWindow({ ...bare, resetSeconds: 0.5 }, undefined).limit?.perSecond).toBe(30);
  });

  it('a day at most', () => {
    expect(MAX_WINDOW_SECONDS).toBe(86_400);
    expect(learnWindow({ perSecond: 86_400, perWindow: 86_400, resetSeconds: 1e9 }, undefined)).toMatchObject(
      {
        limit: { perSecond: 1 },
        window: 86_400,
      },
    );
  });

  it('passes a limit that named its window, or none, unchanged, with the window known', () => {
    const named = { perSecond: 6, remaining: 3, resetSeconds: 4 };
    expect(learnWindow(named, 5)).toEqual({ limit: named, window: 5 });
    expect(learnWindow(undefined, undefined)).toEqual({ limit: undefined, window: undefined });
  });
});

describe('windowRemembered (the store’s learnt window, while fresh)', () => {
  const state = (w: number | undefined): RateState => ({
    why: 'header',
    r: 6,
    at: T,
    ...(w === undefined ? {} : { w }),
  });

  it('follows the stored window for ten minutes after it was written', () => {
    expect(WINDOW_MEMORY_MS).toBe(600_000);
    expect(windowRemembered(state(5), T + WINDOW_MEMORY_MS)).toBe(5);
    expect(windowRemembered(state(5), T + WINDOW_MEMORY_MS + 1)).toBeUndefined();
  });

  it('or two windows, if longer', () => {
    expect(windowRemembered(state(3_600), T + 7_200_000)).toBe(3_600);
    expect(windowRemembered(state(3_600), T + 7_200_001)).toBeUndefined();
  });

  it('none stored, none remembered', () => {
    expect(windowRemembered(state(undefined), T)).toBeUndefined();
    expect(windowRemembered(undefined, T)).toBeUndefined();
  });
});
