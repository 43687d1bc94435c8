import { FixedWindows, TokenBuckets } from '../bin/local/limit-counters.js';
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
  private readonly buckets = new TokenBuckets();
  private readonly windows = new FixedWindows();

  /** The answer the limit imposes on a call of `storeId` starting now, or the planned one (with headers). */
  apply(storeId: string, spec: MarketLimitSpec, now: number, planned: DeliveryOutcome): DeliveryOutcome {
    if (spec.window) return this.quota(storeId, spec.perSecond, spec.window, now, planned);
    const taken = this.buckets.take(storeId, spec.perSecond, Math.max(1, spec.perSecond), now);
    const limit = spec.headers ? { limit: { perSecond: spec.perSecond } } : {};
    if (!taken.allowed) {
      const seconds = Math.max(1, Math.ceil(taken.untilToken));
      return { kind: 'throttled', status: 429, retryAfterSeconds: seconds, ...limit };
    }
    return { ...planned, ...limit };
  }

  private quota(
    storeId: string,
    perSecond: number,
    window: NonNullable<MarketLimitSpec['window']>,
    now: number,
    planned: DeliveryOutcome,
  ): DeliveryOutcome {
    const quota = Math.max(1, Math.round(perSecond * window.seconds));
    const { allowed, remaining, resetSeconds } = this.windows.take(storeId, quota, window.seconds, now);
    // Misread: a bare count, which the adapter reads per second and keeps to learn the window (`perWindow`).
    const stated = window.misread
      ? { perSecond: quota, perWindow: quota }
      : { perSecond: quota / window.seconds };
    if (!allowed)
      return {
        kind: 'throttled',
        status: 429,
        retryAfterSeconds: resetSeconds,
        limit: { ...stated, remaining, resetSeconds },
      };
    return { ...planned, limit: { ...stated, remaining, resetSeconds } };
  }
}
