import { z } from 'zod';

/**
 * The marketplace's own limits (issue #13): a store's effective rate is min(policy rate, what the marketplace
 * says). The marketplace says it either with headers (`RateLimit-*`, `x-amzn-RateLimit-Limit`, parsed by the
 * HTTP adapter into `MarketLimit`) or with bare 429s, on which the store backs off multiplicatively and
 * recovers additively while time passes without another 429 (AIMD), never above the policy rate.
 *
 * The state is one small map on the store's dispatch item (`rate`), shared by all its consumers and written
 * only when it changes (a new header rate, a backoff): recovery is a function of the time since the change,
 * so a recovering store costs no write at all.
 */

export const RATE_REASONS = ['policy', 'header', 'backoff'] as const;
export type RateReason = (typeof RATE_REASONS)[number];

/** What one marketplace answer said about the store's limit (any outcome kind may carry it). */
export interface MarketLimit {
  /** Requests per second the marketplace allows this store. */
  perSecond: number;
  /** Requests left in the current window (IETF draft `RateLimit-Remaining`). */
  remaining?: number;
  /** Seconds until the window resets (IETF draft `RateLimit-Reset`). */
  resetSeconds?: number;
}

/**
 * The stored state (`rate` on the dispatch item). `r`: the rate set at `at` — the marketplace's header rate, or
 * the rate a backoff dropped to; `c`: for a backoff, the rate in use when the 429 came (the recovery is fast up
 * to just under it, then slow: the limit was found there). `at` is on the writer's clock.
 */
export const RateStateSchema = z.object({
  why: z.enum(['header', 'backoff']),
  r: z.number().positive(),
  at: z.number(),
  c: z.number().positive().optional(),
});
export type RateState = z.infer<typeof RateStateSchema>;

/** A bare 429 multiplies the store's effective rate by this (TCP's halving: quick to relieve a marketplace). */
export const BACKOFF_FACTOR = 0.5;
/** After a backoff, the rate climbs back by this share of the policy rate per second up to the knee. */
export const FAST_RECOVERY_SHARE = 0.2;
/**
 * The knee: this share of the rate that met the 429 (`c`). A token-bucket marketplace answers 429 only once its
 * burst is spent, so `c` overshoots its limit; from the knee up to `c` the rate climbs slowly, and past `c`
 * without a 429 (the limit was raised) fast again.
 */
export const RECOVERY_KNEE = 0.9;
/** Between the knee and `c`, the rate climbs by this share of `c` per second: 10 s from the knee to `c`. */
export const SLOW_RECOVERY_SHARE = 0.01;
/** Never slower than one call per 10 s: a store that met many 429s is still looked at and probes again. */
export const MIN_RATE_PER_SECOND = 0.1;
/** A header rate within this share of the stored one is not written again (headers repeat on every answer). */
export const HEADER_TOLERANCE = 0.02;

export interface EffectiveRate {
  configured: number;
  effective: number;
  reason: RateReason;
}

const floor = (policyRate: number): number => Math.min(policyRate, MIN_RATE_PER_SECOND);

/** The rate a backoff has climbed back to `now` (not clamped to the policy): fast, slow to `c`, fast again. */
const recovered = (state: RateState, policyRate: number, now: number): number => {
  let seconds = Math.max(0, now - state.at) / 1000;
  const ceiling = Math.max(state.r, state.c ?? state.r / BACKOFF_FACTOR);
  const fast = FAST_RECOVERY_SHARE * policyRate;
  const slow = SLOW_RECOVERY_SHARE * ceiling;
  const knee = Math.max(state.r, RECOVERY_KNEE * ceiling);
  const toKnee = (knee - state.r) / fast;
  if (seconds <= toKnee) return state.r + fast * seconds;
  seconds -= toKnee;
  const toCeiling = (ceiling - knee) / slow;
  if (seconds <= toCeiling) return knee + slow * seconds;
  return ceiling + fast * (seconds - toCeiling);
};

/** The store's rate now: the policy's, or lower where the marketplace said so; never above the policy. */
export const effectiveRate = (
  state: RateState | undefined,
  policyRate: number,
  now: number,
): EffectiveRate => {
  const configured = policyRate;
  if (!state) return { configured, effective: configured, reason: 'policy' };
  const learnt = state.why === 'header' ? state.r : recovered(state, policyRate, now);
  if (learnt >= policyRate) return { configured, effective: configured, reason: 'policy' };
  return { configured, effective: Math.max(floor(policyRate), learnt), reason: state.why };
};

/** One marketplace answer, as the rate sees it. */
export interface RateAnswer {
  throttled: boolean;
  limit?: MarketLimit;
  /** When the answered call started (a 429 for a call older than the last change is the same congestion). */
  startedAt: number;
}

/**
 * The state after one answer, or undefined when it does not change: a header rate replaces whatever was known
 * (when it differs by more than HEADER_TOLERANCE); a bare 429 multiplies the effective rate by BACKOFF_FACTOR,
 * once per congestion: not for a call that started before the last change (its fellow calls in flight).
 */
export const afterAnswer = (
  state: RateState | undefined,
  answer: RateAnswer,
  policyRate: number,
  now: number,
): RateState | undefined => {
  const limit = answer.limit;
  if (limit !== undefined && Number.isFinite(limit.perSecond) && limit.perSecond > 0) {
    const known = state?.why === 'header' ? state.r : undefined;
    if (known !== undefined && Math.abs(limit.perSecond - known) <= HEADER_TOLERANCE * known)
      return undefined;
    // A header at or above the policy while nothing is learnt says nothing new: no write.
    if (state === undefined && limit.perSecond >= policyRate) return undefined;
    return { why: 'header', r: limit.perSecond, at: now };
  }
  if (!answer.throttled) return undefined;
  if (state !== undefined && answer.startedAt < state.at) return undefined;
  const current = effectiveRate(state, policyRate, now).effective;
  return { why: 'backoff', r: Math.max(floor(policyRate), current * BACKOFF_FACTOR), c: current, at: now };
};

/**
 * The two rules as one value, so the deterministic simulation can run a deliberately broken variant of them
 * (sim/variants.ts); the worker always runs ADAPTIVE_RULES.
 */
export interface RateRules {
  effectiveRate: typeof effectiveRate;
  afterAnswer: typeof afterAnswer;
}
export const ADAPTIVE_RULES: RateRules = { effectiveRate, afterAnswer };
