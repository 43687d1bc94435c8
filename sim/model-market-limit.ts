import type { DeliveryOutcome } from '../lambdas/core/ports.js';

/**
 * The marketplace's own per-store limit in the simulation (adaptive rate, issue #13): a token bucket of one
 * second's burst on true time. Above it a call is answered 429 with Retry-After (until the next token);
 * with `headers`, every answer also carries the limit (as the HTTP adapter parses `x-amzn-RateLimit-Limit`).
 */
export interface MarketLimitSpec {
  perSecond: number;
  headers: boolean;
}

export class MarketLimitModel {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** The answer the limit imposes on a call of `storeId` starting now, or the planned one (with headers). */
  apply(storeId: string, spec: MarketLimitSpec, now: number, planned: DeliveryOutcome): DeliveryOutcome {
    const capacity = Math.max(1, spec.perSecond);
    const bucket = this.buckets.get(storeId) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * spec.perSecond);
    bucket.at = now;
    this.buckets.set(storeId, bucket);
    const limit = spec.headers ? { limit: { perSecond: spec.perSecond } } : {};
    if (bucket.tokens < 1) {
      const seconds = Math.max(1, Math.ceil((1 - bucket.tokens) / spec.perSecond));
      return { kind: 'throttled', status: 429, retryAfterSeconds: seconds, ...limit };
    }
    bucket.tokens -= 1;
    return { ...planned, ...limit };
  }
}
