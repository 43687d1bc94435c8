import { CLOCK_SKEW_MS } from '../lambdas/core/timing.js';
import type { LeaseTrack, WorldView } from './world-view.js';

/** Invariant 9 (contract: "never more per second than its ratePerSecond, averaged over any 5 s window"). */
export const RATE_INVARIANT = 9;
export const RATE_WINDOW_MS = 5_000;
/**
 * What rate.ts promises, loosely: consecutive calls of a store start no closer than 1/rate on the clock of
 * the worker that reserved the instant (the shared GCRA schedule, or the single consumer's carried pace; the
 * paced spacing is a little wider). Instants reserved on different clocks are compared across up to
 * CLOCK_SKEW_MS of disagreement, so a 5 s window of true time can hold the calls of 5 s + CLOCK_SKEW_MS of
 * schedule; and one more because a call may start up to its lateness (50–100 ms; a block of the reach up to 1 s,
 * its spacing paying for it) after its instant next to one on time. Loose by the skew: it cannot judge the
 * reach's gaps (rate.ts `blockLateness`), which `rate-window.test.ts` checks on one clock against the exact bound.
 */
export const rateBound = (ratePerSecond: number): number =>
  Math.floor((ratePerSecond * (RATE_WINDOW_MS + CLOCK_SKEW_MS)) / 1000) + 1;
/**
 * A call after Retry-After may start this early on true time: the hold is written on one worker's clock
 * and read on another's (CLOCK_SKEW_MS); a single-consumer store's requeued slot may be acquired up to
 * CLOCK_SKEW_MS before its due time (acquire's tolerance for early attentions), on a clock that disagrees.
 */
export const RETRY_AFTER_TOLERANCE_MS = 2 * CLOCK_SKEW_MS;

/**
 * Who was told to hold, and when: the worker that got the 429 (`actor`), everyone (`store`: a
 * single-consumer store, whose only consumer got it), or every pacing reservation made after the holdTat
 * write landed (`reservation`: a store with several consumers; calls reserved before it may still go).
 */
interface Hold {
  scope: 'actor' | 'store' | 'reservation';
  actorId?: number;
  /** The lease (slot and fence) of the call that got the 429: within it, one clock, so no skew tolerance. */
  lease?: { slotId: string; fence: number };
  toldAt: number;
  /** True time the Retry-After ends. */
  until: number;
  /** An 'actor' hold its actor's first hold write since has told the other consumers ('reservation'). */
  relayed?: boolean;
}

/**
 * Invariant 9 checked at each call start: the store's calls in the last 5 s (true time) stay within
 * `rateBound`, and a call whose lease or pacing reservation came after the store was told Retry-After
 * does not start before it ends (within RETRY_AFTER_TOLERANCE_MS).
 */
export class RateCheck {
  private readonly starts = new Map<string, number[]>();
  private readonly holds = new Map<string, Hold[]>();
  /** The end of the latest Retry-After told to a store's schedule, in the schedule's numbers. */
  private readonly floors = new Map<string, number>();
  /** Per task (store and eventId): the end of the latest Retry-After its own call was answered with (true time). */
  private readonly taskHolds = new Map<string, number>();

  constructor(
    private readonly world: WorldView,
    private readonly fail: (invariant: number, message: string) => void,
  ) {}

  /**
   * A 429 answered a call of task `eventId` with this Retry-After end (true time), under either throttle scope:
   * the task itself comes back no sooner (a fresh copy delayed by it, or the same lease sleeping through it).
   */
  taskThrottled(storeId: string, eventId: string, until: number): void {
    const key = `${storeId}/${eventId}`;
    this.taskHolds.set(key, Math.max(this.taskHolds.get(key) ?? 0, until));
  }

  /** A call of task `eventId` starts: not before the Retry-After its own last 429 told it. */
  taskCallStarted(storeId: string, eventId: string): void {
    const until = this.taskHolds.get(`${storeId}/${eventId}`);
    if (until !== undefined && this.world.now < until - RETRY_AFTER_TOLERANCE_MS)
      this.fail(
        RATE_INVARIANT,
        `task ${eventId} of ${storeId} was called again ${((until - this.world.now) / 1000).toFixed(1)} s before the Retry-After its own 429 said`,
      );
  }

  /** A 429 answered `actorId`'s call of `storeId` (under `lease`) now, with this Retry-After end (true time). */
  throttled(
    storeId: string,
    until: number,
    single: boolean,
    actorId: number,
    lease?: { slotId: string; fence: number },
  ): void {
    this.hold(storeId, {
      scope: single ? 'store' : 'actor',
      actorId,
      ...(lease === undefined ? {} : { lease: { slotId: lease.slotId, fence: lease.fence } }),
      toldAt: this.world.now,
      until,
    });
  }

  /**
   * `actorId`'s holdTat write landed (several consumers: this is how the others are told). The first one after
   * that actor's 429 tells them the 429's whole Retry-After, whatever it wrote: every hold a slice writes after
   * its 429 reaches at least as far (a first hold shorter than the Retry-After, followed by the full one after
   * the 429's other writes, let a consumer reserve between the two the instant where the short one ended).
   * From then on the store's schedule never hands out an instant before that end, in its own numbers (the
   * holder's clock, `skewMs`): exact, where a call's start on another worker's clock needs the skew tolerance.
   */
  holdLanded(storeId: string, until: number, actorId: number, skewMs: number): void {
    const now = this.world.now;
    this.hold(storeId, { scope: 'reservation', toldAt: now, until });
    for (const heard of this.holds.get(storeId) ?? [])
      if (heard.scope === 'actor' && heard.actorId === actorId && heard.toldAt < now && !heard.relayed) {
        heard.relayed = true;
        this.hold(storeId, { scope: 'reservation', toldAt: now, until: heard.until });
        this.floors.set(storeId, Math.max(this.floors.get(storeId) ?? 0, heard.until + skewMs));
      }
  }

  /** A reservation on the store's schedule landed, its first instant `first` (schedule numbers). */
  reservedFrom(storeId: string, first: number): void {
    const floor = this.floors.get(storeId);
    if (floor !== undefined && first < floor - 1)
      this.fail(
        RATE_INVARIANT,
        `a reservation of ${storeId} after a 429's hold landed starts ${((floor - first) / 1000).toFixed(3)} s before its Retry-After`,
      );
  }

  private told(hold: Hold, actorId: number, lease: LeaseTrack): boolean {
    switch (hold.scope) {
      case 'store':
        return hold.toldAt < this.world.now;
      case 'actor':
        return hold.actorId === actorId && hold.toldAt < this.world.now;
      case 'reservation':
        // Only a lease pacing on the shared schedule reads the hold. A single-consumer lease paces on its
        // slot's carried pace (and the schedule as it found it at its acquire) and is told by the 429 itself
        // ('store'); a zombie's late holdTat — its
        // Retry-After recomputed on waking, long after the marketplace's ended — binds none of them (seed
        // 18336, once holdTat was written for single-consumer stores too).
        return lease.reservedAt !== undefined && hold.toldAt <= lease.reservedAt;
    }
  }

  private hold(storeId: string, hold: Hold): void {
    const holds = this.holds.get(storeId) ?? [];
    holds.push(hold);
    this.holds.set(storeId, holds);
  }

  callStarted(storeId: string, ratePerSecond: number, actorId: number, lease: LeaseTrack): void {
    const now = this.world.now;
    const starts = (this.starts.get(storeId) ?? []).filter((t) => t > now - RATE_WINDOW_MS);
    starts.push(now);
    this.starts.set(storeId, starts);
    const bound = rateBound(ratePerSecond);
    const ratio = starts.length / bound;
    if (ratio > this.world.stats.maxRateRatio) this.world.stats.maxRateRatio = ratio;
    if (starts.length > bound)
      this.fail(
        RATE_INVARIANT,
        `${starts.length} calls of ${storeId} started within 5 s (rate ${ratePerSecond}/s, bound ${bound})`,
      );
    const holds = (this.holds.get(storeId) ?? []).filter((h) => h.until > now - RETRY_AFTER_TOLERANCE_MS);
    this.holds.set(storeId, holds);
    for (const hold of holds) {
      // The lease that got the 429 and sleeps through it in its slice: its own clock, no skew to allow for.
      const sameLease =
        hold.actorId === actorId &&
        hold.lease?.slotId === lease.slotId &&
        hold.lease.fence === lease.fence &&
        hold.toldAt < now;
      if (sameLease && now < hold.until)
        this.fail(
          RATE_INVARIANT,
          `a call of ${storeId} started ${((hold.until - now) / 1000).toFixed(1)} s before the Retry-After its own lease was told`,
        );
      else if (now < hold.until - RETRY_AFTER_TOLERANCE_MS && this.told(hold, actorId, lease))
        this.fail(
          RATE_INVARIANT,
          `a call of ${storeId} started ${((hold.until - now) / 1000).toFixed(1)} s before the Retry-After it was told`,
        );
    }
  }
}
