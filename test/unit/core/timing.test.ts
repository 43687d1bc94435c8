import { describe, expect, it } from 'vitest';
import { ATTENTION_QUEUE, FUNCTIONS } from '../../../lambdas/config/topology.js';
import { PLAN_NAMES, resolvePolicy, SLICE_SECONDS_LIMIT } from '../../../lambdas/core/plans.js';
import {
  attentionVisibilitySeconds,
  clampDelaySeconds,
  CLOCK_SKEW_MS,
  DEFAULT_MARKETPLACE_TIMEOUT_MS,
  leaseTtlMs,
  MAX_DELAY_SECONDS,
  MAX_MARKETPLACE_TIMEOUT_MS,
  workerTimeoutSeconds,
} from '../../../lambdas/core/timing.js';

const TIMEOUTS = [100, DEFAULT_MARKETPLACE_TIMEOUT_MS, MAX_MARKETPLACE_TIMEOUT_MS];
const SLICES = [1, 20, SLICE_SECONDS_LIMIT];
const cases = SLICES.flatMap((maxSliceSeconds) =>
  TIMEOUTS.map((timeout) => [maxSliceSeconds, timeout] as const),
);

describe('leaseTtlMs', () => {
  it('is the slice, one marketplace call and a 10 s margin', () => {
    expect(leaseTtlMs({ maxSliceSeconds: 20 }, 5_000)).toBe(35_000);
  });

  it.each(cases)(
    'outlasts a %d s slice whose last call takes the whole %d ms timeout, plus clock skew',
    (maxSliceSeconds, timeout) => {
      expect(leaseTtlMs({ maxSliceSeconds }, timeout)).toBeGreaterThan(
        maxSliceSeconds * 1000 + timeout + CLOCK_SKEW_MS,
      );
    },
  );

  it.each(cases)(
    'for a %d s slice and %d ms calls is shorter than the worker’s timeout',
    (maxSliceSeconds, timeout) => {
      expect(leaseTtlMs({ maxSliceSeconds }, timeout)).toBeLessThan(workerTimeoutSeconds() * 1000);
    },
  );

  it.each(PLAN_NAMES)('of the %s plan is shorter than the deployed worker timeout', (plan) => {
    expect(leaseTtlMs(resolvePolicy(plan, undefined), MAX_MARKETPLACE_TIMEOUT_MS)).toBeLessThan(
      FUNCTIONS.worker.timeoutSeconds * 1000,
    );
  });
});

describe('workerTimeoutSeconds', () => {
  it('leaves time after the longest lease for the end-of-slice writes', () => {
    const longest = leaseTtlMs({ maxSliceSeconds: SLICE_SECONDS_LIMIT }, MAX_MARKETPLACE_TIMEOUT_MS);
    expect(workerTimeoutSeconds() * 1000 - longest).toBeGreaterThanOrEqual(10_000);
  });

  it('fits Lambda’s 900 s limit', () => {
    expect(workerTimeoutSeconds()).toBeLessThanOrEqual(900);
  });
});

describe('attentionVisibilitySeconds', () => {
  it.each([1, 30, 100])(
    'is at least 6 × a %d s worker timeout (AWS rule for SQS event sources)',
    (timeout) => {
      expect(attentionVisibilitySeconds(timeout)).toBeGreaterThanOrEqual(6 * timeout);
    },
  );

  it('holds for the deployed attention queue and worker', () => {
    expect(ATTENTION_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(
      6 * FUNCTIONS.worker.timeoutSeconds,
    );
  });

  it('fits SQS’s 12-hour visibility limit', () => {
    expect(ATTENTION_QUEUE.visibilityTimeoutSeconds).toBeLessThanOrEqual(12 * 3600);
  });
});

describe('clampDelaySeconds', () => {
  it.each([
    [-5, 0],
    [0, 0],
    [0.2, 1],
    [1, 1],
    [899.1, 900],
    [900, 900],
    [100_000, MAX_DELAY_SECONDS],
  ])('%d s → %d s', (input, expected) => {
    expect(clampDelaySeconds(input)).toBe(expected);
  });

  it('stops at SQS’s 900 s DelaySeconds limit', () => {
    expect(MAX_DELAY_SECONDS).toBe(900);
  });
});
