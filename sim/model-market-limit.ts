import type { DeliveryOutcome } from '../lambdas/core/ports.js';

/**
 * The marketplace's own per-store limit in the simulation (adaptive rate, issue #13): a token bucket of one
 * second's burst on true time. Above it a call is answered 429 with Retry-After (until the next token);
 * with `headers`, every answer also carries the limit (as the HTTP adapter parses `x-amzn-RateLimit-Limit`).
 *
 * Or, with `window`, a fixed window's quota (the IETF draft's `RateLimit-*`): `perSecond × seconds` calls (at
 * least one) per window of true time, every answer carrying what is left (`remaining`) and the whole seconds to
 * the window's end (`resetSeconds`, rounded up); a call over the quota is answered 429 until then. The limit the
 * answers state is the quota per second — or, `misread`, the quota itself, as the adapter reads a
 * `RateLimit-Limit` that names no window (`perWindow`: the store learns the window from the Resets; until then a
 * rate that spends the window early, session 18's black-box finding).
 */
export interface MarketLimitSpec {
  perSecond: number;
  headers: boolean;
  window?: { seconds: number; misread: boolean };
}

export class MarketLimitModel {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly windows = new Map<string, { index: number; used: number }>();

  /** The answer the limit imposes on a call of `storeId` starting now, or the planned one (with headers). */
  apply(storeId: string, spec: MarketLimitSpec, now: number, planned: DeliveryOutcome): DeliveryOutcome {
    if (spec.window) return this.quota(storeId, spec.perSecond, spec.window, now, planned);
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

  private quota(
    storeId: string,
    perSecond: number,
    window: NonNullable<MarketLimitSpec['window']>,
    now: number,
    planned: DeliveryOutcome,
  ): DeliveryOutcome {
    const length = window.seconds * 1000;
    const quota = Math.max(1, Math.round(perSecond * window.seconds));
    const index = Math.floor(now / length);
    const seen = this.windows.get(storeId);
    const current = seen?.index === index ? seen : { index, used: 0 };
    this.windows.set(storeId, current);
    const resetSeconds = Math.ceil(((index + 1) * length - now) / 1000);
    // Misread: a bare count, which the adapter reads per second and keeps to learn the window (`perWindow`).
    const stated = window.misread
      ? { perSecond: quota, perWindow: quota }
      : { perSecond: quota / window.seconds };
    if (current.used >= quota)
      return {
        kind: 'throttled',
        status: 429,
        retryAfterSeconds: resetSeconds,
        limit: { ...stated, remaining: 0, resetSeconds },
      };
    current.used++;
    return { ...planned, limit: { ...stated, remaining: quota - current.used, resetSeconds } };
  }
}
