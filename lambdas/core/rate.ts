import type { Clock, DispatchState, TatReservation } from './ports.js';

/**
 * Waits until a lease's next marketplace call may start, so that a store never exceeds its ratePerSecond,
 * whatever its number of consumers (contract; any 5 s window).
 *
 * A single-consumer store paces locally: only one lease exists at a time, and the pace is carried from
 * lease to lease in the dispatch item (slot `n`, store `tat`), at no extra cost. A store with several
 * consumers shares one GCRA schedule in the dispatch item: right before each call, one atomic ADD moves the
 * store's theoretical arrival time on by 1/rate and hands this call its own instant, so the store's calls
 * never start closer together than 1/rate across all its leases. When the schedule lags the clock (the store
 * was quiet, or its consumers are slower than its rate), a conditional write restarts it at now instead, so
 * idle time is never spent as a burst. One DynamoDB write per call either way, and no retry loops.
 */
export interface Pacer {
  /** Waits for the next call's turn; false when the call could not start before `deadline`. */
  acquire(deadline: number): Promise<boolean>;
  /** The earliest start of a further call (carried to the next lease of a single-consumer store). */
  readonly carry: number;
  /**
   * After `acquire` answered false: the instant the refused call would have had. Past the slice deadline
   * by a whole Retry-After when another consumer's 429 holds the store (`holdTat`), so the slice asks to
   * be looked at then, not at once.
   */
  readonly blockedUntil: number;
  /**
   * After `acquire` answered false: whether it was because the store is held (the instant lay further off
   * than a normal wait), not merely because the slice deadline came — decided once, where the wait was seen.
   */
  readonly held: boolean;
}

export const intervalMs = (ratePerSecond: number): number => 1000 / ratePerSecond;

/**
 * A pacer's spacing between calls: fixed, or read before each call (the adaptive rate: the marketplace's own
 * limit may lower it mid-slice). A lowered interval only moves instants later, so resume times computed from
 * it are never earlier than the rate allows, and never later than the interval in force when they were set.
 */
export type Interval = number | (() => number);
const read = (interval: Interval): number => (typeof interval === 'number' ? interval : interval());

const sleepUntil = async (clock: Clock, at: number): Promise<void> => {
  const wait = at - clock.now();
  if (wait > 0) await clock.sleep(wait);
};

export const localPacer = (interval: Interval, startAt: number, clock: Clock): Pacer => {
  /** When the last call started; the next may start one interval later — the interval in force then. */
  let last: number | undefined;
  let blockedUntil = 0;
  const due = (): number => (last === undefined ? startAt : last + read(interval));
  return {
    async acquire(deadline) {
      const start = Math.max(clock.now(), due());
      if (start >= deadline) {
        blockedUntil = start;
        return false;
      }
      await sleepUntil(clock, start);
      last = Math.max(start, clock.now());
      return true;
    },
    get carry() {
      return due();
    },
    get blockedUntil() {
      return blockedUntil;
    },
    // One consumer: nothing else reserves its schedule, so a refusal is only ever the deadline.
    held: false,
  };
};

/** How late a call may start after its instant before it takes a new one: half an interval, ≥ 5 ms of timer jitter. */
const lateness = (interval: number): number => Math.max(interval / 2, 5);
/** Late wake-ups are retried this often before the call goes ahead regardless. */
const MAX_TRIES = 5;

/**
 * The longest a multi-consumer store's call normally waits for its instant: each of its N consumers holds at
 * most one reserved instant, so N intervals, doubled for jitter, and never under a second. An instant further
 * out means the store is held (`holdTat`, another consumer's 429): the caller stops rather than sleeps.
 */
export const maxPaceWaitMs = (interval: number, consumers: number): number =>
  Math.max(1000, 2 * interval * consumers);

export const sharedPacer = (
  dispatch: DispatchState,
  storeId: string,
  spacing: Interval,
  clock: Clock,
  maxWait: Interval = Number.POSITIVE_INFINITY,
  /**
   * Told each reservation or restart as the schedule left it: the store's learnt rate (another consumer may
   * have changed it) and its write count (the store's calls, for the adaptive rate's sent-rate bound).
   */
  onReservation: (reservation: TatReservation) => void = () => undefined,
): Pacer => {
  let interval = read(spacing);
  /** The latest reservation made by `advanceTat` (the schedule as it left it), while it may be given back. */
  let reserved: { tat: number; seq: number } | undefined;
  const reserve = async (): Promise<number> => {
    const first = await dispatch.advanceTat(storeId, interval);
    onReservation(first);
    const learnt = read(spacing);
    let got = first;
    if (learnt > interval) {
      // Another consumer lowered the store's rate (adaptive rate): this reservation used the old spacing, so
      // push the schedule on by the difference — the next call is then one new interval after this one (one
      // more write, only when the rate was lowered since this lease last looked).
      got = await dispatch.advanceTat(storeId, learnt - interval);
      interval = learnt;
    }
    reserved = got.seq === undefined ? undefined : { tat: got.tat, seq: got.seq };
    return got.tat;
  };
  let next = clock.now();
  let blockedUntil = 0;
  let held = false;
  /** Whether the schedule lagged the clock last time: then a restart is tried first (one write either way). */
  let lagging = true;
  const take = async (): Promise<number> => {
    const now = clock.now();
    interval = read(spacing);
    reserved = undefined;
    const restart = async (): Promise<boolean> => {
      const restarted = await dispatch.restartTat(storeId, now, interval);
      if (restarted !== undefined) onReservation(restarted);
      return restarted !== undefined;
    };
    if (lagging && (await restart())) return now;
    let tat = await reserve();
    if (tat <= now) {
      // The schedule lagged a whole interval (a slow call): going now would leave it behind this call, and
      // the next restart would succeed against it at once — two calls together. Re-register it at now
      // first (a second write, only after such a lag); if another consumer moved it meanwhile, reserve again.
      if (await restart()) {
        reserved = undefined;
        return now;
      }
      tat = await reserve();
    }
    // A schedule less than an interval behind takes no credit for it: the call goes now, and the next one
    // at the schedule's next instant, less than an interval later once (GCRA's burst of one).
    lagging = tat - interval <= clock.now();
    return Math.max(tat - interval, now);
  };
  return {
    async acquire(deadline) {
      for (let i = 0; i < MAX_TRIES; i++) {
        const instant = await take();
        next = instant + interval;
        held = instant - clock.now() > read(maxWait);
        if (held || instant >= deadline) {
          blockedUntil = instant;
          // The slice will not use this instant: give it back, so the slice resuming at it finds it free.
          // Kept, every slice of a store whose interval exceeds the slice would push the schedule one
          // interval on and never call (a livelock; simulation seeds 10392, 64157). A held store keeps its
          // reservation: its instant lies past a Retry-After, where the hold itself already put the schedule.
          if (!held && reserved !== undefined)
            // A failed give-back only leaves that one instant unused.
            await dispatch.returnTat(storeId, reserved, interval).catch(() => false);
          return false;
        }
        await sleepUntil(clock, instant);
        // Woke too late (an event-loop stall): going now would bunch with the calls after this instant.
        if (clock.now() - instant <= lateness(interval)) return true;
      }
      // Going ahead regardless after MAX_TRIES late wake-ups — but never past the slice deadline: the
      // writes above may have stalled for longer than the lease (found by the simulation, seed 958).
      if (clock.now() >= deadline) {
        blockedUntil = clock.now();
        return false;
      }
      return true;
    },
    get carry() {
      return next;
    },
    get blockedUntil() {
      return blockedUntil;
    },
    get held() {
      return held;
    },
  };
};
