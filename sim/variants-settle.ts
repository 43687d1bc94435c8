import type { DeliveredSettle, DeliveryLog } from '../lambdas/core/ports.js';
import { override, type Variant } from './protocol-variant.js';
import { REDRIVE_BUDGET_INVARIANT } from './redrive-budget-check.js';

/** The delivery log with `settleDelivered` replaced, its other methods kept (bound to it). */
const withSettleDelivered = (
  inner: DeliveryLog,
  replacement: (settles: DeliveredSettle[]) => Promise<DeliveredSettle[]>,
): DeliveryLog =>
  new Proxy(inner, {
    get: (target, property) => {
      if (property === 'settleDelivered') return replacement;
      const value = (target as unknown as Record<PropertyKey, unknown>)[property];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

/** Broken variants of the effect-once record: the batched delivered settles (lambdas/core/delivered-settle.ts) and a redrive's budget. */
export const SETTLE_VARIANTS: Variant[] = [
  {
    name: 'settle-drops-unprocessed',
    breaks: 6,
    description:
      "the delivered settles' UnprocessedItems are taken as written (not tried again): their messages are deleted with the task left `processing`, and a duplicate copy calls it again once the claim expires",
    deliveries: (inner) =>
      withSettleDelivered(inner, async (settles) => {
        await inner.settleDelivered(settles);
        return [];
      }),
  },
  {
    name: 'redrive-keeps-attempts',
    breaks: REDRIVE_BUDGET_INVARIANT,
    description:
      "a claim reads the task's record without `deadAttempts` (as before session 20): a redriven task's budget counts every call since its first, so a task dead-lettered for exhausted retries is dead-lettered again after one more failure",
    deliveries: (inner) =>
      override(inner, 'claim', async (storeId, eventId, opts) => {
        const claim = await inner.claim(storeId, eventId, opts);
        if (claim.record === undefined) return claim;
        const { deadAttempts: _forgotten, ...record } = claim.record;
        return { ...claim, record };
      }),
  },
];
