import { z } from 'zod';

export const PLAN_NAMES = ['basic', 'pro', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

/** Longest slice any override may ask for; the worker's Lambda timeout is derived from it (see timing.ts). */
export const SLICE_SECONDS_LIMIT = 60;

/** Store priority across stores (contract, "Scheduling policy"): what share of a saturated worker pool a store's level gets. */
export const STORE_PRIORITIES = ['high', 'normal', 'low'] as const;
export type StorePriority = (typeof STORE_PRIORITIES)[number];

/**
 * What a marketplace 429 throttles (contract, "Marketplace delivery" and "The marketplace's own limits"):
 * `store` — the store as a whole: every consumer waits out the Retry-After, and a bare 429 lowers the store's
 * effective rate (AIMD); `task` — only the task answered: it comes back after its Retry-After as a fresh copy
 * while the store's other tasks go on at its rate, and no 429 lowers the rate (rate headers still do). `task` is
 * an operator's choice for a marketplace whose 429s no rate causes (issue #13's known limitation).
 */
export const THROTTLE_SCOPES = ['store', 'task'] as const;
export type ThrottleScope = (typeof THROTTLE_SCOPES)[number];

export const PolicySchema = z.object({
  maxConcurrentConsumers: z.number().int().min(1).max(50),
  maxMessagesPerSlice: z.number().int().min(1).max(10_000),
  maxSliceSeconds: z.number().int().min(1).max(SLICE_SECONDS_LIMIT),
  ratePerSecond: z.number().positive().max(1_000),
  /** Marketplace attempts (5xx, timeouts, connection errors) before a task is dead-lettered. */
  maxAttempts: z.number().int().min(1).max(50),
  /** The store's level when the worker pool is saturated; changes nothing while it is not. */
  priority: z.enum(STORE_PRIORITIES),
  /** What a marketplace 429 throttles: the whole store (default) or only the task it answered. */
  throttleScope: z.enum(THROTTLE_SCOPES),
});
export type Policy = z.infer<typeof PolicySchema>;

export const OverridesSchema = PolicySchema.partial().strict();
export type Overrides = z.infer<typeof OverridesSchema>;

/**
 * Contract defaults. ratePerSecond is ours to choose: conservative figures in the range marketplace
 * seller APIs publish for their write endpoints, raised per store with an override.
 */
export const PLAN_DEFAULTS: Readonly<Record<PlanName, Policy>> = {
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
};

export const resolvePolicy = (plan: PlanName, overrides: Overrides | undefined): Policy => ({
  ...PLAN_DEFAULTS[plan],
  ...(overrides ?? {}),
});

/**
 * Receives before SQS itself moves a task to the store's DLQ. Far above any plan's maxAttempts (the worker
 * dead-letters on those itself, with the reason): it only catches a message that crashes every worker
 * that touches it. Throttled tasks are re-sent as fresh copies, so throttling never counts toward it.
 */
export const MAX_RECEIVE_COUNT = 100;
