import { BLOCK_RULES, pacedInterval } from '../lambdas/core/rate.js';
import {
  ADAPTIVE_RULES,
  effectiveRate,
  FIRST_HOLD_MS,
  resumeWithinSlice,
} from '../lambdas/core/adaptive-rate.js';
import { RATE_INVARIANT } from './rate-check.js';
import type { DeliveryLog } from '../lambdas/core/ports.js';
import { override, type Variant } from './protocol-variant.js';

/**
 * Broken variants of the adaptive rate and the 429's throttle scope (the marketplace's own limits), rejected by
 * the rate invariant: the simulation's marketplaces throttle stores (random 429s, and per-store limits with or
 * without headers), and about one store in three has `throttleScope: 'task'`.
 */
export const ADAPTIVE_VARIANTS: Variant[] = [
  {
    name: 'refused-reservation-kept',
    breaks: 1,
    description:
      'a multi-consumer slice keeps the pacing instant its deadline refused (no returnTat): with a marketplace slower than one call per slice, every slice pushes the schedule one interval on and none calls',
    dispatch: (inner) =>
      new Proxy(inner, {
        get: (target, property) => {
          if (property === 'returnTat') return async () => false;
          const value = (target as unknown as Record<PropertyKey, unknown>)[property];
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }),
  },
  {
    name: 'restart-refusal-taken',
    breaks: RATE_INVARIANT,
    description:
      'a refused schedule restart is taken for a done one (restartTat now hands back the schedule, for the sent-rate count, and a refusal is only its absence): the call goes at once while the schedule is ahead of the clock, beside the calls already reserved there',
    dispatch: (inner) =>
      new Proxy(inner, {
        get: (target, property) => {
          if (property === 'restartTat')
            return async (storeId: string, now: number, intervalMs: number, calls: number, late?: number) =>
              (await target.restartTat(storeId, now, intervalMs, calls, late)) ?? { tat: now + intervalMs };
          const value = (target as unknown as Record<PropertyKey, unknown>)[property];
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }),
  },
  {
    name: 'aimd-above-policy',
    breaks: RATE_INVARIANT,
    description:
      'after a marketplace 429 the AIMD recovery is capped at three times the policy rate instead of the policy rate, ' +
      'and the pacing budgets each 5 s window by the learnt rate, not the policy (either guard alone keeps the rate)',
    rateRules: {
      ...ADAPTIVE_RULES,
      effectiveRate: (state, policyRate, now) =>
        state === undefined
          ? effectiveRate(state, policyRate, now)
          : { ...effectiveRate(state, 3 * policyRate, now), configured: policyRate },
    },
    blockRules: { ...BLOCK_RULES, paced: (interval, shared) => pacedInterval(interval, shared) },
  },
  {
    name: 'sleep-through-no-wait',
    breaks: RATE_INVARIANT,
    description: 'a lease that should sleep through a short Retry-After inside its slice calls again at once',
    rateRules: {
      ...ADAPTIVE_RULES,
      resumeWithinSlice: (afterSeconds, now, deadline) =>
        resumeWithinSlice(afterSeconds, now, deadline) === undefined ? undefined : now,
    },
  },
  {
    name: 'first-hold-short',
    breaks: RATE_INVARIANT,
    description:
      "a multi-consumer store's 429 is first held for 1 s only, the full Retry-After written after the rate's writes: a consumer reserving between the two calls where the short hold ends, inside the Retry-After",
    rateRules: { ...ADAPTIVE_RULES, firstHoldUntil: (_retryAfterSeconds, now) => now + FIRST_HOLD_MS },
  },
  {
    name: 'quota-ignored',
    breaks: RATE_INVARIANT,
    description:
      "an answer's `RateLimit-Remaining: 0` is ignored (no hold until `RateLimit-Reset`): a store paced at a limit the adapter reads per second, where the marketplace means per window, calls on inside a spent window",
    rateRules: { ...ADAPTIVE_RULES, quotaSpentUntil: () => undefined },
  },
  {
    name: 'task-retry-at-dropped',
    breaks: RATE_INVARIANT,
    description:
      "a task-scope 429's settle does not write the Retry-After's end on the task's record (`retryAt`): another copy of the task (an SQS duplicate, a client's repeated POST) is claimed and called inside the Retry-After",
    deliveries: (inner: DeliveryLog) =>
      override(inner, 'settle', (storeId, eventId, holder, { retryAt: _dropped, ...outcome }) =>
        inner.settle(storeId, eventId, holder, outcome),
      ),
  },
];
