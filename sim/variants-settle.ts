import type { DeliveredSettle, DeliveryLog } from '../lambdas/core/ports.js';
import type { Variant } from './protocol-variant.js';

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

/** Broken variants of the batched delivered settles (lambdas/core/delivered-settle.ts). */
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
];
