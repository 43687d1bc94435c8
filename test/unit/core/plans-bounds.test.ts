import { describe, expect, it } from 'vitest';
import { PLAN_DEFAULTS, PolicySchema, SLICE_SECONDS_LIMIT } from '../../../lambdas/core/plans.js';

describe('plan defaults', () => {
  it('are the documented figures, every field of every plan', () => {
    expect(PLAN_DEFAULTS).toEqual({
      basic: {
        maxConcurrentConsumers: 1,
        maxMessagesPerSlice: 50,
        maxSliceSeconds: 20,
        ratePerSecond: 5,
        maxAttempts: 5,
        priority: 'low',
        throttleScope: 'store',
      },
      pro: {
        maxConcurrentConsumers: 3,
        maxMessagesPerSlice: 200,
        maxSliceSeconds: 20,
        ratePerSecond: 20,
        maxAttempts: 8,
        priority: 'normal',
        throttleScope: 'store',
      },
      enterprise: {
        maxConcurrentConsumers: 10,
        maxMessagesPerSlice: 1000,
        maxSliceSeconds: 20,
        ratePerSecond: 50,
        maxAttempts: 10,
        priority: 'high',
        throttleScope: 'store',
      },
    });
  });
});

describe('policy bounds', () => {
  const base = PLAN_DEFAULTS.basic;
  it.each([
    { field: 'maxConcurrentConsumers', lowest: 1, highest: 50 },
    { field: 'maxMessagesPerSlice', lowest: 1, highest: 10_000 },
    { field: 'maxSliceSeconds', lowest: 1, highest: SLICE_SECONDS_LIMIT },
    { field: 'maxAttempts', lowest: 1, highest: 50 },
  ])('$field takes whole numbers from $lowest to $highest', ({ field, lowest, highest }) => {
    const valid = (value: number) => PolicySchema.safeParse({ ...base, [field]: value }).success;
    expect([lowest - 1, lowest, highest, highest + 1, lowest + 0.5].map(valid)).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
  });

  it('priority is one of high, normal, low', () => {
    const valid = (priority: string) => PolicySchema.safeParse({ ...base, priority }).success;
    expect(['high', 'normal', 'low', 'urgent', ''].map(valid)).toEqual([true, true, true, false, false]);
  });

  it('throttleScope is store or task', () => {
    const valid = (throttleScope: string) => PolicySchema.safeParse({ ...base, throttleScope }).success;
    expect(['store', 'task', 'Task', 'tenant', ''].map(valid)).toEqual([true, true, false, false, false]);
  });

  it('ratePerSecond takes any positive rate up to 1000 per second, fractions included', () => {
    const valid = (ratePerSecond: number) => PolicySchema.safeParse({ ...base, ratePerSecond }).success;
    expect([0, 0.1, 1_000, 1_000.5].map(valid)).toEqual([false, true, true, false]);
  });
});
