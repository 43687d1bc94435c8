import { deliveryKey } from '../lambdas/core/names.js';
import type { DeliveryRequest } from '../lambdas/core/ports.js';

/**
 * The marketplace as real APIs behave: a call whose Idempotency-Key already succeeded returns the stored
 * answer without a second effect. It also records what a test marketplace would: successful calls per key
 * (raw duplicates), effects per task, and concurrent calls per store.
 */
export class SimMarketplace {
  /** Keys whose effect took place (the marketplace's idempotency records). */
  readonly appliedKeys = new Set<string>();
  /** Effects per task (`storeId:eventId` from the body), whatever key carried them. */
  readonly effectsByTask = new Map<string, number>();
  /** Successful calls per Idempotency-Key, including those answered from the idempotency record. */
  readonly successesByKey = new Map<string, number>();
  readonly inFlight = new Map<string, number>();

  start(storeId: string): number {
    const n = (this.inFlight.get(storeId) ?? 0) + 1;
    this.inFlight.set(storeId, n);
    return n;
  }

  end(storeId: string): void {
    this.inFlight.set(storeId, (this.inFlight.get(storeId) ?? 1) - 1);
  }

  /** The server side of a call that succeeded: applies the effect unless the key already did (true if it did now). */
  succeed(request: DeliveryRequest): boolean {
    const key = request.idempotencyKey;
    this.successesByKey.set(key, (this.successesByKey.get(key) ?? 0) + 1);
    if (this.appliedKeys.has(key)) return false;
    this.appliedKeys.add(key);
    const task = deliveryKey(request.storeId, request.body.eventId);
    this.effectsByTask.set(task, (this.effectsByTask.get(task) ?? 0) + 1);
    return true;
  }

  effected(storeId: string, eventId: string): boolean {
    return (this.effectsByTask.get(deliveryKey(storeId, eventId)) ?? 0) > 0;
  }

  rawDuplicates(): number {
    let n = 0;
    for (const count of this.successesByKey.values()) n += Math.max(0, count - 1);
    return n;
  }
}
