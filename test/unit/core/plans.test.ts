import { describe, expect, it } from 'vitest';
import {
  MAX_RECEIVE_COUNT,
  OverridesSchema,
  PLAN_DEFAULTS,
  PLAN_NAMES,
  PolicySchema,
  resolvePolicy,
  SLICE_SECONDS_LIMIT,
  type PlanName,
} from '../../../lambdas/core/plans.js';

describe('resolvePolicy', () => {
  it.each<[PlanName, number, number, number]>([
    ['basic', 1, 50, 20],
    ['pro', 3, 200, 20],
    ['enterprise', 10, 1000, 20],
  ])(
    '%s defaults to the contract’s table',
    (plan, maxConcurrentConsumers, maxMessagesPerSlice, maxSliceSeconds) => {
      expect(resolvePolicy(plan, undefined)).toMatchObject({
        maxConcurrentConsumers,
        maxMessagesPerSlice,
        maxSliceSeconds,
      });
    },
  );

  it.each(PLAN_NAMES)('%s has a valid default policy, rate included', (plan) => {
    expect(PolicySchema.safeParse(resolvePolicy(plan, undefined)).success).toBe(true);
  });

  it('lets an override replace only the fields it names', () => {
    expect(resolvePolicy('pro', { ratePerSecond: 2, maxMessagesPerSlice: 10, priority: 'high' })).toEqual({
      maxConcurrentConsumers: 3,
      maxMessagesPerSlice: 10,
      maxSliceSeconds: 20,
      ratePerSecond: 2,
      maxAttempts: 8,
      priority: 'high',
      throttleScope: 'store',
    });
  });

  it('does not change the plan defaults', () => {
    resolvePolicy('basic', { maxConcurrentConsumers: 7 });
    expect(PLAN_DEFAULTS.basic.maxConcurrentConsumers).toBe(1);
  });
});

describe('OverridesSchema', () => {
  it('accepts any subset of policy fields', () => {
    expect(OverridesSchema.safeParse({ maxSliceSeconds: 5 }).success).toBe(true);
  });

  it('rejects an unknown field', () => {
    expect(OverridesSchema.safeParse({ maxConsumers: 5 }).success).toBe(false);
  });

  it.each([
    ['maxConcurrentConsumers', 0],
    ['maxConcurrentConsumers', 1.5],
    ['maxMessagesPerSlice', 0],
    ['maxSliceSeconds', SLICE_SECONDS_LIMIT + 1],
    ['ratePerSecond', 0],
  ])('rejects %s = %d', (field, value) => {
    expect(OverridesSchema.safeParse({ [field]: value }).success).toBe(false);
  });
});

describe('retry limits', () => {
  it.each(PLAN_NAMES)(
    'lets the worker dead-letter a failing %s task itself long before SQS’s own redrive would',
    (plan) => {
      expect(MAX_RECEIVE_COUNT).toBeGreaterThan(PLAN_DEFAULTS[plan].maxAttempts * 5);
    },
  );
});
