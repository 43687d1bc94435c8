import {
  ADAPTIVE_RULES,
  SENT_MIN_SPAN_AFTER_BACKOFF_MS,
  SENT_MIN_SPAN_MS,
  SentCount,
  heededState,
  learnWindow,
  windowRemembered,
  type EffectiveRate,
  type RateAnswer,
  type RateRules,
  type RateState,
} from './adaptive-rate.js';
import { MetricNames } from './names.js';
import type { ThrottleScope } from './plans.js';
import type { Clock, DispatchState, TatReservation, Telemetry } from './ports.js';
import { intervalMs } from './rate.js';

export interface StoreRateDeps {
  dispatch: DispatchState;
  clock: Clock;
  telemetry: Telemetry;
  /** The AIMD and header rules (the simulation swaps in broken ones); ADAPTIVE_RULES by default. */
  rateRules?: RateRules;
}

/**
 * One lease's view of its store's adaptive rate: it starts from the state read with the lease, follows other
 * consumers' changes (each shared-schedule reservation returns the state), feeds each marketplace answer to
 * the AIMD / header rules, and writes the state only when an answer changes it — one conditional write per
 * change, none while a backoff recovers. The pacer reads `intervalMs()` before each call.
 *
 * It also counts the store's calls (`SentCount`): the shared schedule's call count with each reservation (the
 * calls all consumers reserved, `tatCalls`), at no extra cost — or, for a single-consumer store, its own — so a
 * 429's limit estimate is bounded by the rate the store actually sent.
 */
export class StoreRate {
  /** The store's rate state as this lease last saw it stored (the compare-and-set of `noteRate` is on its `at`). */
  private stored: RateState | undefined;
  /** The state the rate follows: `stored`, less a backoff under `throttleScope: 'task'` (`heededState`). */
  private state: RateState | undefined;
  private readonly sent = new SentCount();
  /** The window this lease learnt for a limit that named none (`learnWindow`), in seconds. */
  private window: number | undefined;
  /** This lease's own calls, the store's count while no shared reservation has given one. */
  private ownCalls = 0;
  private shared = false;

  constructor(
    private readonly deps: StoreRateDeps,
    private readonly storeId: string,
    private readonly policyRate: number,
    initial: RateState | undefined,
    /** `task`: no 429 lowers this store's rate, and a backoff learnt before is not followed (plans.ts). */
    private readonly scope: ThrottleScope = 'store',
  ) {
    this.stored = initial;
    this.state = heededState(initial, scope);
  }

  current(): EffectiveRate {
    const rules = this.deps.rateRules ?? ADAPTIVE_RULES;
    return rules.effectiveRate(this.state, this.policyRate, this.deps.clock.now());
  }

  /** Whole microseconds, rounded up (never faster than the rate; `windowCalls` allows for the rounding). */
  intervalMs(): number {
    return Math.ceil(intervalMs(this.current().effective) * 1000) / 1000;
  }

  /**
   * Whether this lease looks at the store's rate before each call (rate.ts `RatePeek`): while a backoff holds
   * it under the policy, another consumer's next 429 may lower it at any moment.
   */
  peekWanted(): boolean {
    return this.current().reason === 'backoff';
  }

  /**
   * Adopts the store's rate as it stands (one read). When that is another consumer's new backoff (a 429 since
   * this lease last saw the rate), answers when this lease's next call may go: one new interval after that
   * 429. A failed read leaves the view as it was.
   */
  async peek(): Promise<number | undefined> {
    try {
      const before = this.state?.at;
      const rate = (await this.deps.dispatch.read(this.storeId))?.rate;
      this.adopt(rate);
      if (rate?.why === 'backoff' && rate.at !== before) return rate.at + Math.ceil(this.intervalMs());
    } catch (error) {
      this.deps.telemetry.warn('store rate not read', { error: String(error) });
    }
    return undefined;
  }

  /** The state as another consumer left it (returned by a reservation); a newer change replaces ours. */
  adopt(rate: RateState | undefined): void {
    if (rate !== undefined && (this.stored === undefined || rate.at !== this.stored.at)) this.remember(rate);
  }

  private remember(rate: RateState | undefined): void {
    this.stored = rate;
    this.state = heededState(rate, this.scope);
  }

  /** A shared-schedule reservation (or restart): the store's learnt rate and its call count as it stands. */
  reserved(reservation: Pick<TatReservation, 'tat' | 'rate' | 'calls'>): void {
    this.adopt(reservation.rate);
    if (reservation.calls === undefined) return;
    this.shared = true;
    // On the schedule's time: `calls` instants lie before `tat`, the end of what was just reserved. Taken at the
    // clock instead, a block reserved ahead counted its instants seconds early and the rate read off a few
    // samples was skewed by the blocks' sizes (a third low in the adaptive-rate model's traces; session 24).
    this.sent.add(reservation.tat, reservation.calls);
  }

  /** One marketplace answer: changes the rate when it says something new, shared through the dispatch item. */
  async observe(answer: RateAnswer): Promise<void> {
    const now = this.deps.clock.now();
    if (!this.shared) this.sent.add(answer.startedAt, ++this.ownCalls);
    const sentPerSecond = answer.throttled
      ? this.sent.perSecond(
          this.state?.at,
          now,
          this.state?.why === 'backoff' ? SENT_MIN_SPAN_AFTER_BACKOFF_MS : SENT_MIN_SPAN_MS,
        )
      : undefined;
    // A limit that named no window: its rate over the longest window seen (this lease's answers, or the store's
    // while it is fresh: a window that changed, or one odd Reset, is learnt again after WINDOW_MEMORY_MS).
    const storedWindow = windowRemembered(this.stored, now);
    const learnt = learnWindow(answer.limit, Math.max(this.window ?? 0, storedWindow ?? 0) || undefined);
    this.window = learnt.window;
    // `learnWindow` hands the answer's own limit back unless it learnt a window (never undefined for a defined one).
    const heard: RateAnswer = learnt.limit === answer.limit ? answer : { ...answer, limit: learnt.limit };
    const decided = (this.deps.rateRules ?? ADAPTIVE_RULES).afterAnswer(
      this.state,
      sentPerSecond === undefined ? heard : { ...heard, sentPerSecond },
      this.policyRate,
      now,
    );
    if (decided === undefined) return;
    // The window learnt goes with a header rate, so the store's other and later leases start from it.
    const next =
      decided.why === 'header' && learnt.window !== undefined ? { ...decided, w: learnt.window } : decided;
    // Compared with what is stored: under `throttleScope: 'task'` a backoff left from before is stored but not
    // followed, and a header rate must still replace it (conditioned on the state this lease saw stored).
    const seenAt = this.stored?.at;
    // Followed at once by this lease whatever the write does: its own next call must already respect it.
    this.remember(next);
    const { effective, reason } = this.current();
    this.deps.telemetry.count(MetricNames.marketplaceRateAdjusted, 1, { reason: next.why });
    this.deps.telemetry.info('marketplace rate adjusted', {
      configured: this.policyRate,
      effective,
      reason,
      learnt: next.r,
      // A backoff's estimate of the marketplace's limit: where the recovery's knee and probing are set.
      ...(next.c === undefined ? {} : { limitEstimate: next.c }),
    });
    try {
      const written = await this.deps.dispatch.noteRate(this.storeId, next, seenAt);
      // Another consumer changed it first: theirs is the store's rate (this answer's news reaches it next time).
      if (!written.ok && written.current?.rate !== undefined) this.remember(written.current.rate);
    } catch (error) {
      this.deps.telemetry.warn('marketplace rate not recorded', { error: String(error) });
    }
  }
}
