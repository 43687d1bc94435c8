import { SETTLE_TRIES } from '../lambdas/core/delivered-settle.js';
import { deliveryKey } from '../lambdas/core/names.js';
import type { DeliveredSettle } from '../lambdas/core/ports.js';
import type { MemoryDeliveryLog } from '../test/support/memory-delivery-log.js';
import type { SimContext } from './context.js';
import { Rng } from './rng.js';

/**
 * The delivered settles' BatchWriteItem as DynamoDB runs it: each item written on its own, not atomically
 * with the others, and, under throttling, some left unprocessed and answered back for the worker to try
 * again. Per seed, a chance of 0 (half the seeds) up to 0.5 that an item is left unprocessed, while faults
 * run; drawn from its own generator, so the rest of the run's randomness does not depend on it.
 *
 * Throttling is transient: one settle is left unprocessed at most SETTLE_TRIES − 1 times, so the worker's
 * last try writes it. A settle refused on every try is DynamoDB failing outright — the same window as a
 * crash between the call and the settle, and a hard DynamoDB error is another model's fault (issue #10).
 */
export const injectUnprocessed = (log: MemoryDeliveryLog, ctx: SimContext): void => {
  const rng = new Rng(ctx.scenario.seed ^ 0xba7c);
  const chance = rng.chance(0.5) ? rng.next() * 0.5 : 0;
  const refused = new WeakMap<DeliveredSettle, number>();
  log.unprocessed = (settle) => {
    const times = refused.get(settle) ?? 0;
    if (!ctx.faultsOn || times >= SETTLE_TRIES - 1 || !rng.chance(chance)) return false;
    refused.set(settle, times + 1);
    ctx.stats.unprocessedSettles++;
    return true;
  };
};

/** The delivery keys a settleDelivered call wrote: those of its items not answered back as unprocessed. */
export const deliveredKeys = (settles: DeliveredSettle[], unprocessed: DeliveredSettle[]): string[] =>
  settles
    .filter((settle) => !unprocessed.includes(settle))
    .map((settle) => deliveryKey(settle.storeId, settle.eventId));

/**
 * The settles whose attempt still held its claim when the write applied. Only those put the 2xx on record
 * in time: a `delivered` written after the claim was taken over (its worker stalled past the claim) lands
 * unconditionally, but the other attempt may already be calling — that repeat is the stall's, as it was
 * when the late settle was a refused conditional write.
 */
export const stillHeld = (log: MemoryDeliveryLog, settles: DeliveredSettle[]): DeliveredSettle[] =>
  settles.filter(
    (settle) =>
      log.records.get(deliveryKey(settle.storeId, settle.eventId))?.holder === settle.claimed.holder,
  );
