import { z } from 'zod';
import type { ThrottleScope } from './plans.js';
import { MAX_DELAY_SECONDS } from './timing.js';

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
  /**
   * The `RateLimit-Limit` count when the answer named no window (no quota policy): `perSecond` is then that count
   * read per second, a guess. The store learns the window from the longest `RateLimit-Reset` it saw (`learnWindow`).
   */
  perWindow?: number;
}

/**
 * The stored state (`rate` on the dispatch item). `r`: the rate set at `at` — the marketplace's header rate, or
 * the rate a backoff dropped to; `c`: for a backoff, the estimate of the marketplace's limit found by the 429
 * (the recovery is fast up to just under it, then slow, then probes above it ever faster). `at` is on the
 * writer's clock.
 */
export const RateStateSchema = z.object({
  why: z.enum(['header', 'backoff']),
  r: z.number().positive(),
  at: z.number(),
  c: z.number().positive().optional(),
  /** For a header rate whose limit named no window: the window learnt (seconds, the longest Reset seen). */
  w: z.number().positive().optional(),
});
export type RateState = z.infer<typeof RateStateSchema>;

/** A bare 429 multiplies the store's effective rate by this (TCP's halving: quick to relieve a marketplace). */
export const BACKOFF_FACTOR = 0.5;
/** After a backoff, the rate climbs back by this share of the policy rate per second up to the knee. */
export const FAST_RECOVERY_SHARE = 0.2;
/**
 * The knee: this share of the limit estimate (`c`). Past it the rate climbs slowly: a token-bucket marketplace
 * answers 429 only once its burst is spent, so the slower the rate crosses its limit, the closer to the limit
 * the next 429 comes (and the fewer 429s a store meets).
 */
export const RECOVERY_KNEE = 0.85;
/** Past the knee, the rate climbs by this share of `c` per second (the additive increase)... */
export const SLOW_RECOVERY_SHARE = 0.01;
/** ...for this long: about the time a 429 takes to come back when the limit is where it was found... */
export const PROBE_AFTER_SECONDS = 15;
/**
 * ...then faster and faster (this share of `c` per second², quadratic): the estimate decays, so a limit the
 * marketplace raised is found again within seconds rather than minutes (a doubled limit in about 10 s more).
 */
export const PROBE_ACCELERATION_SHARE = 0.02;
/**
 * Fast convergence (after TCP CUBIC's): a 429 that comes before the recovery passed this share of the last
 * estimate says the limit fell below the knee — the marketplace lowered it. The new estimate then goes under the
 * rate at that 429 (× CONVERGE_FACTOR), so the next knee lies under the new limit at once, instead of one 429
 * per step the mean-rate estimate takes down from the old limit.
 */
export const CONVERGE_BELOW = 0.9;
export const CONVERGE_FACTOR = (1 + BACKOFF_FACTOR) / 2;
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

/** The shape of a backoff's recovery: fast from `r` to the knee, then slow, then probing ever faster. */
const curve = (state: RateState, policyRate: number) => {
  const estimate = Math.max(state.r, state.c ?? state.r / BACKOFF_FACTOR);
  const fast = FAST_RECOVERY_SHARE * policyRate;
  const knee = Math.max(state.r, RECOVERY_KNEE * estimate);
  return {
    fast,
    knee,
    slow: SLOW_RECOVERY_SHARE * estimate,
    accel: PROBE_ACCELERATION_SHARE * estimate,
    toKnee: (knee - state.r) / fast,
  };
};

/** The rate a backoff has climbed back to `now` (not clamped to the policy). */
const recovered = (state: RateState, policyRate: number, now: number): number => {
  const { fast, knee, slow, accel, toKnee } = curve(state, policyRate);
  const seconds = Math.max(0, now - state.at) / 1000;
  if (seconds <= toKnee) return state.r + fast * seconds;
  const past = seconds - toKnee;
  return knee + slow * past + accel * Math.max(0, past - PROBE_AFTER_SECONDS) ** 2;
};

/**
 * The mean rate of the recovery from the backoff to `now` (the integral of `recovered`, over the time): what
 * the store sent on average before the marketplace said 429 again. A token bucket lets a rate run above the
 * limit until the burst is spent, so the rate at the 429 overshoots the limit; the mean since the last change
 * is closer to it (burst / time above it), and sits below the rate at the 429.
 */
const meanRecovered = (state: RateState, policyRate: number, now: number): number => {
  const { fast, knee, slow, accel, toKnee } = curve(state, policyRate);
  const seconds = Math.max(0, now - state.at) / 1000;
  if (seconds <= 0) return state.r;
  const rising = Math.min(seconds, toKnee);
  let area = state.r * rising + (fast * rising ** 2) / 2;
  const past = Math.max(0, seconds - toKnee);
  const probing = Math.max(0, past - PROBE_AFTER_SECONDS);
  area += knee * past + (slow * past ** 2) / 2 + (accel * probing ** 3) / 3;
  return area / seconds;
};

/**
 * The state a store's rate follows under its policy's `throttleScope`: under `task` no 429 lowers the rate, and
 * a backoff learnt before the operator chose it no longer holds (a header rate still does).
 */
export const heededState = (state: RateState | undefined, scope: ThrottleScope): RateState | undefined =>
  scope === 'task' && state?.why === 'backoff' ? undefined : state;

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
  /**
   * The rate the store's calls actually started at over the recent window (`SentCount.perSecond`: all its
   * consumers, since the last change); undefined while too little was seen. Bounds a 429's limit estimate.
   */
  sentPerSecond?: number;
  /** A 429's Retry-After as the slice honours it (seconds, clamped): not the rate's; the slice keeps it. */
  retryAfterSeconds?: number;
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
  // The limit estimate: the rate at the 429, or after an earlier backoff the mean rate since (closer to the
  // limit: the rate at the 429 overshoots it by the marketplace's burst) — and never above the rate the store
  // actually sent: consumers slower than their effective rate (call latency, slice restarts, holds) send
  // below the curve, and an estimate taken from the curve alone would then start high and take a 429 per
  // ×0.85 step to come down to the limit.
  const curveEstimate =
    state?.why === 'backoff' ? Math.min(current, meanRecovered(state, policyRate, now)) : current;
  const sent = answer.sentPerSecond;
  const bounded =
    sent !== undefined && Number.isFinite(sent) && sent > 0 ? Math.min(curveEstimate, sent) : curveEstimate;
  const fell = state?.why === 'backoff' && state.c !== undefined && current < CONVERGE_BELOW * state.c;
  const estimate = fell ? Math.min(bounded, CONVERGE_FACTOR * current) : bounded;
  return {
    why: 'backoff',
    r: Math.max(floor(policyRate), current * BACKOFF_FACTOR),
    c: Math.max(floor(policyRate), estimate),
    at: now,
  };
};

/** The sent rate is measured over at most this window back from the 429, from the last change on... */
export const SENT_WINDOW_MS = 10_000;
/** ...but over at least this much (a 429 right after a change measures the seconds before it too)... */
export const SENT_MIN_WINDOW_MS = 2_000;
/** ...and not at all from less than this span of samples (a lease that has only just started)... */
export const SENT_MIN_SPAN_MS = 1_000;
/**
 * ...or, after a backoff, this span: the bound is for the first convergence from the policy rate (consumers that
 * send well below it would otherwise start the estimate high). After a backoff the curve's mean rate is already
 * close to the limit, and a few seconds of a lease's samples (one per reservation of a block) measure the store's
 * rate too roughly: the bound cut the estimate under the limit, and the knee with it (the adaptive-rate model:
 * 86.6 % of the real limit with a 1 s span, 89.9 % with this one, at the same 429 share; session 24).
 */
export const SENT_MIN_SPAN_AFTER_BACKOFF_MS = 8_000;

/**
 * The store's calls as one lease sees them: samples of (when, how many calls the store had started by then) —
 * the shared schedule's call count (`tatCalls`: the instants all consumers reserved, less those given back)
 * handed back with each reservation, or a single-consumer lease's own count. Kept for SENT_WINDOW_MS; one older sample anchors it.
 */
export class SentCount {
  private samples: { at: number; count: number }[] = [];

  add(at: number, count: number): void {
    const last = this.samples[this.samples.length - 1];
    // Out of order (a slow reservation answering after a later one) or a count that went back: not a sample.
    if (last !== undefined && (at < last.at || count < last.count)) return;
    this.samples.push({ at, count });
    // Drop what lies wholly before the window, keeping the newest such sample as the window's anchor.
    const old = this.samples.findIndex((s) => s.at >= at - SENT_WINDOW_MS);
    if (old > 1) this.samples = this.samples.slice(old - 1);
  }

  /**
   * Calls per second from `since` (clamped to [now − SENT_WINDOW_MS, now − SENT_MIN_WINDOW_MS]) to the
   * latest sample; undefined when the samples span less than `minSpan`.
   */
  perSecond(since: number | undefined, now: number, minSpan = SENT_MIN_SPAN_MS): number | undefined {
    const from = Math.min(now - SENT_MIN_WINDOW_MS, Math.max(now - SENT_WINDOW_MS, since ?? -Infinity));
    const last = this.samples[this.samples.length - 1];
    // The latest sample at or before `from`, else the earliest one (a lease younger than the window).
    const base = this.samples.filter((s) => s.at <= from).pop() ?? this.samples[0];
    if (last === undefined || base === undefined || last.at - base.at < minSpan) return undefined;
    return ((last.count - base.count) * 1000) / (last.at - base.at);
  }
}

/** The longest window `learnWindow` assumes: a day (a longer Reset is taken for a day's quota). */
export const MAX_WINDOW_SECONDS = 86_400;

/**
 * A limit that named no window (`perWindow`) is a count per some window; read as per second it may be that
 * window's length times too fast (a 5 s quota of 30 read as 30/s). The window is at least as long as any
 * `RateLimit-Reset` the store has seen, so the rate is taken as the count over the longest one (`known`: the
 * window learnt so far, from the store's rate state or this lease's answers): exact once an answer early in a
 * window was seen, and only ever lower than the per-second reading. Answers the limit to apply and the window
 * learnt; a limit that named its window, or none, passes unchanged.
 */
export const learnWindow = (
  limit: MarketLimit | undefined,
  known: number | undefined,
): { limit: MarketLimit | undefined; window: number | undefined } => {
  if (limit?.perWindow === undefined) return { limit, window: known };
  const window = Math.min(MAX_WINDOW_SECONDS, Math.max(known ?? 1, limit.resetSeconds ?? 1));
  return { limit: { ...limit, perSecond: Math.min(limit.perSecond, limit.perWindow / window) }, window };
};

/**
 * How long a store's learnt window (`w`, written with its header rate at `at`) is followed by later leases: ten
 * minutes, or two windows if longer. After that a lease learns it again from its own answers (the first one late
 * in a window may set a short window, and the next early one the right one: two writes, at most a window spent
 * early, which the quota hold keeps). A store whose rate stays put writes nothing, so its window is learnt
 * again about every ten minutes.
 */
export const WINDOW_MEMORY_MS = 600_000;

/** The store's learnt window while it is remembered (`WINDOW_MEMORY_MS`), else undefined. */
export const windowRemembered = (state: RateState | undefined, now: number): number | undefined =>
  state?.w !== undefined && now - state.at <= Math.max(WINDOW_MEMORY_MS, 2 * state.w * 1000)
    ? state.w
    : undefined;

/** The least a 429 holds a store: the least a Retry-After means. */
export const FIRST_HOLD_MS = 1_000;

/**
 * On a 429, a store with several consumers is held first, before any other write, until the whole Retry-After
 * ends (never less than FIRST_HOLD_MS): the calls the other consumers would reserve meanwhile, at the old
 * spacing and into the marketplace's empty bucket, wait instead. (A first hold of FIRST_HOLD_MS alone, with the
 * full one written after the rate's writes and the settle, let a consumer reserve between the two the instant
 * where the short one ended and call inside the Retry-After: CI, on a loaded host; the simulation's variant
 * `first-hold-short`.) The slice's later holds write the same end again, from their own clock.
 */
export const firstHoldUntil = (retryAfterSeconds: number | undefined, now: number): number =>
  now + Math.max(FIRST_HOLD_MS, (retryAfterSeconds ?? 0) * 1000);

/**
 * A Retry-After up to this long is slept through inside the slice (its lease keeps the task in hand and calls
 * again when it ends), instead of ending the slice and coming back through a delayed attention: a 1 s hold then
 * costs the store 1 s, not the 2–3 s of a slice restart. Longer ones end the slice (the worker goes elsewhere).
 */
export const SLEEP_THROUGH_MAX_SECONDS = 2;

/**
 * When a lease whose call was answered 429 (`now`, with this Retry-After) may call again within its slice:
 * the Retry-After's end, if it is short and comes before the slice deadline; undefined when the slice ends.
 */
export const resumeWithinSlice = (
  afterSeconds: number,
  now: number,
  deadline: number,
): number | undefined => {
  if (afterSeconds > SLEEP_THROUGH_MAX_SECONDS) return undefined;
  const at = now + afterSeconds * 1000;
  return at < deadline ? at : undefined;
};

/**
 * The marketplace's quota for the window spent (IETF draft `RateLimit-Remaining: 0`, on any answer): no call of
 * the store may start before `RateLimit-Reset` seconds from now, when the window resets — whatever the rate says
 * (a `RateLimit-Limit` without a quota policy is read as per second, where the marketplace may mean a longer
 * window; and a store paced at its limit may still spend a window's quota early). Undefined when the answer says
 * no such thing (calls left, or no reset). At most SQS's longest delay, as a Retry-After (the messages in hand
 * come back as copies delayed that long; a longer quota is held again by the first answer after it).
 */
export const quotaSpentUntil = (limit: MarketLimit | undefined, now: number): number | undefined =>
  limit?.remaining !== undefined &&
  limit.remaining <= 0 &&
  limit.resetSeconds !== undefined &&
  limit.resetSeconds > 0
    ? now + Math.ceil(Math.min(MAX_DELAY_SECONDS, limit.resetSeconds) * 1000)
    : undefined;

/**
 * The rules as one value, so the deterministic simulation can run a deliberately broken variant of them
 * (sim/variants-adaptive.ts); the worker always runs ADAPTIVE_RULES.
 */
export interface RateRules {
  effectiveRate: typeof effectiveRate;
  afterAnswer: typeof afterAnswer;
  resumeWithinSlice: typeof resumeWithinSlice;
  firstHoldUntil: typeof firstHoldUntil;
  quotaSpentUntil: typeof quotaSpentUntil;
}
export const ADAPTIVE_RULES: RateRules = {
  effectiveRate,
  afterAnswer,
  resumeWithinSlice,
  firstHoldUntil,
  quotaSpentUntil,
};
