import { describe, expect, it } from 'vitest';
import {
  afterAnswer,
  BACKOFF_FACTOR,
  effectiveRate,
  FAST_RECOVERY_SHARE,
  MIN_RATE_PER_SECOND,
  RECOVERY_KNEE,
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

  it('recovers a backoff fast up to the knee under the 429, slowly up to where it came, then fast again', () => {
    const state: RateState = { why: 'backoff', r: 3, c: 6, at: T };
    const fast = FAST_RECOVERY_SHARE * POLICY;
    const slow = SLOW_RECOVERY_SHARE * 6;
    const knee = RECOVERY_KNEE * 6;
    const toKnee = ((knee - 3) / fast) * 1000;
    const toCeiling = toKnee + ((6 - knee) / slow) * 1000;
    expect(effectiveRate(state, POLICY, T).effective).toBe(3);
    expect(effectiveRate(state, POLICY, T + 100).effective).toBeCloseTo(3 + fast * 0.1);
    expect(effectiveRate(state, POLICY, T + toKnee).effective).toBeCloseTo(knee);
    expect(effectiveRate(state, POLICY, T + toKnee + 2_000).effective).toBeCloseTo(knee + slow * 2);
    expect(effectiveRate(state, POLICY, T + toCeiling).effective).toBeCloseTo(6);
    expect(effectiveRate(state, POLICY, T + toCeiling + 1_000).effective).toBeCloseTo(6 + fast);
    expect(effectiveRate(state, POLICY, T + toCeiling + 1_000).reason).toBe('backoff');
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
