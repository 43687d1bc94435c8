/**
 * The simulated marketplace's own per-store rate limit (adaptive rate, issue #13): a token bucket per store
 * refilled at `perSecond` (one second of burst), answering 429 when empty — with rate-limit headers on every
 * answer (`ietf`: RateLimit-Limit with a 10 s quota window, -Remaining, -Reset; `amzn`: x-amzn-RateLimit-Limit)
 * or bare (`none`: only Retry-After on a 429). Or (`window`) a fixed window of `perSecond × 5 s` calls per 5 s
 * counted down in `RateLimit-Remaining`, its end in `RateLimit-Reset`, and a `RateLimit-Limit` that names no
 * window (so it reads as per second: five times the real rate), a 429 over the quota without Retry-After — the
 * marketplace of session 18's black-box finding. `setPerSecond` changes the limit mid-run (the benchmark does).
 */
import { FixedWindows, TokenBuckets } from './limit-counters.js';

export const LIMIT_HEADER_MODES = ['none', 'ietf', 'amzn', 'window'] as const;
export type LimitHeaderMode = (typeof LIMIT_HEADER_MODES)[number];

export interface MarketplaceLimitOptions {
  perSecond: number;
  headers: LimitHeaderMode;
  /** Seconds of calls the bucket holds (the burst a store may send above the limit): default 1. */
  burstSeconds?: number;
}

export interface LimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

/** The quota window the `ietf` headers state: 10 s, so a fractional per-second limit is still a whole count. */
const IETF_WINDOW_SECONDS = 10;
/** The `window` mode's fixed window. */
export const FIXED_WINDOW_SECONDS = 5;

export class MarketplaceLimit {
  private readonly buckets = new TokenBuckets();
  private readonly windows = new FixedWindows();
  private perSecond: number;

  constructor(private readonly options: MarketplaceLimitOptions) {
    this.perSecond = options.perSecond;
  }

  get limit(): number {
    return this.perSecond;
  }

  setPerSecond(perSecond: number): void {
    this.perSecond = perSecond;
  }

  /** Takes one token of the store's bucket if there is one; the headers to answer with either way. */
  take(storeId: string, now: number): LimitDecision {
    if (this.options.headers === 'window') return this.takeFromWindow(storeId, now);
    const capacity = Math.max(1, this.perSecond * (this.options.burstSeconds ?? 1));
    const { allowed, tokens, untilToken } = this.buckets.take(storeId, this.perSecond, capacity, now);
    const headers: Record<string, string> = {};
    if (!allowed) headers['retry-after'] = String(Math.max(1, Math.ceil(untilToken)));
    if (this.options.headers === 'amzn') headers['x-amzn-ratelimit-limit'] = String(this.perSecond);
    if (this.options.headers === 'ietf') {
      const quota = Math.max(1, Math.round(this.perSecond * IETF_WINDOW_SECONDS));
      headers['ratelimit-limit'] = `${quota}, ${quota};w=${IETF_WINDOW_SECONDS}`;
      headers['ratelimit-remaining'] = String(Math.floor(tokens));
      headers['ratelimit-reset'] = String(Math.max(1, Math.ceil(untilToken)));
    }
    return { allowed, headers };
  }

  private takeFromWindow(storeId: string, now: number): LimitDecision {
    const quota = Math.max(1, Math.round(this.perSecond * FIXED_WINDOW_SECONDS));
    const { allowed, remaining, resetSeconds } = this.windows.take(storeId, quota, FIXED_WINDOW_SECONDS, now);
    return {
      allowed,
      headers: {
        'ratelimit-limit': String(quota),
        'ratelimit-remaining': String(remaining),
        'ratelimit-reset': String(resetSeconds),
      },
    };
  }
}
