/**
 * The two counters a marketplace's own per-store limit is made of, shared by local mode's simulated marketplace
 * (`marketplace-limit.ts`) and the deterministic simulation's model of it (`sim/model-market-limit.ts`), so the
 * two enforce one arithmetic. Pure: the caller passes the time.
 */

/** What a token bucket answered one call. */
export interface BucketTake {
  allowed: boolean;
  /** Tokens left after the call (whole or not). */
  tokens: number;
  /** Seconds until the next whole token (0 when the call was allowed). */
  untilToken: number;
}

/** One token bucket per key: `capacity` tokens, refilled at `perSecond`, a call taking one when there is one. */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  take(key: string, perSecond: number, capacity: number, now: number): BucketTake {
    const bucket = this.buckets.get(key) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return { allowed, tokens: bucket.tokens, untilToken: allowed ? 0 : (1 - bucket.tokens) / perSecond };
  }
}

/** What a fixed window answered one call. */
export interface WindowTake {
  allowed: boolean;
  /** Calls left in the window after this one (never below zero, even after the quota was lowered in it). */
  remaining: number;
  /** Whole seconds to the window's end, rounded up. */
  resetSeconds: number;
}

/** One fixed window per key: `quota` calls per `seconds` of true time (windows aligned to time 0). */
export class FixedWindows {
  private readonly windows = new Map<string, { index: number; used: number }>();

  take(key: string, quota: number, seconds: number, now: number): WindowTake {
    const length = seconds * 1000;
    const index = Math.floor(now / length);
    const seen = this.windows.get(key);
    const window = seen?.index === index ? seen : { index, used: 0 };
    this.windows.set(key, window);
    const allowed = window.used < quota;
    if (allowed) window.used++;
    return {
      allowed,
      remaining: Math.max(0, quota - window.used),
      resetSeconds: Math.ceil(((index + 1) * length - now) / 1000),
    };
  }
}
