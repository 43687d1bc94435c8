import type { Clock, DispatchState, TatReservation } from './ports.js';

/**
 * Waits until a lease's next marketplace call may start, so that a store never exceeds its ratePerSecond,
 * whatever its number of consumers (contract; any 5 s window).
 *
 * A single-consumer store paces locally: only one lease exists at a time, and the pace is carried from
 * lease to lease in the dispatch item (slot `n`, store `tat`), at no extra cost. A store with several
 * consumers shares one GCRA schedule in the dispatch item: one atomic ADD moves the store's theoretical
 * arrival time on by k/rate and hands the lease a block of k instants of its own (k ≤ 10, the messages in
 * hand), so the store's calls never start closer together than 1/rate across all its leases, at one write per
 * block. When the schedule lags the clock (the store was quiet, or its consumers are slower than its rate), a
 * conditional write restarts it at now instead, so idle time is never spent as a burst. No retry loops.
 */
export interface Pacer {
  /**
   * Waits for the next call's turn; false when the call could not start before `deadline`. `inHand`: the
   * messages the lease holds for calls, this one included (a shared pacer reserves up to that many instants).
   * `atInstant`: a look taken once the wait is over and before the call's lateness is judged (the slice's
   * re-read of its store): its time counts as the call's, so a slow read makes the call late for its instant
   * (a shared pacer then takes a later one) or moves a lone consumer's pace, never bunches calls; false from it
   * refuses the call (a shared pacer gives its block back).
   */
  acquire(deadline: number, inHand?: number, atInstant?: () => Promise<boolean>): Promise<boolean>;
  /** The earliest start of a further call (carried to the next lease of a single-consumer store). */
  readonly carry: number;
  /**
   * After `acquire` answered false: the instant the refused call would have had. Past the slice deadline
   * by a whole Retry-After when another consumer's 429 holds the store (`holdTat`), or at a spent window's reset
   * (`quotaPacer`), so the slice asks to be looked at then, not at once.
   */
  readonly blockedUntil: number;
  /**
   * After `acquire` answered false: whether it was because the store is held (the instant lay further off
   * than a normal wait), not merely because the slice deadline came — decided once, where the wait was seen.
   */
  readonly held: boolean;
  /**
   * After `acquire` answered false: because the host is stalled — MAX_TRIES late wake-ups (or block writes
   * stalled past their instants) in a row, past the lateness the spacing pays for (the slice ends `stalled`).
   */
  readonly stalled: boolean;
  /**
   * The time this pacer has spent asleep for the pace (its instants, a quota), all calls together: a lease's time
   * in `acquire` less this is work on its path (schedule writes, looks), which the store's fan-out counts.
   */
  readonly sleptMs: number;
}

export const intervalMs = (ratePerSecond: number): number => 1000 / ratePerSecond;

/**
 * A pacer's spacing between calls: fixed, or read before each call (the adaptive rate: the marketplace's own
 * limit may lower it mid-slice). A lowered interval only moves instants later, so resume times computed from
 * it are never earlier than the rate allows, and never later than the interval in force when they were set.
 */
export type Interval = number | (() => number);
const read = (interval: Interval): number => (typeof interval === 'number' ? interval : interval());

/**
 * A time as whole milliseconds, rounded up: a stretched spacing (`spacingOf`) puts instants between them, and the
 * clocks and the times that leave the pacer (a resume, a carried pace) are whole. Less a microsecond first, so a
 * sum of stretched steps that should land on a millisecond and lands a rounding error past it stays there.
 */
const wholeMs = (at: number): number => Math.ceil(at - 0.001);

/** Sleeps until `at` (to the whole millisecond); answers how long it slept. */
const sleepUntil = async (clock: Clock, at: number): Promise<number> => {
  const from = clock.now();
  const wait = wholeMs(at) - from;
  if (wait > 0) await clock.sleep(wait);
  return clock.now() - from;
};

export const localPacer = (interval: Interval, startAt: number, clock: Clock): Pacer => {
  /**
   * Where the last call's pace stands: its due time when it started within the millisecond after it (sleeps are
   * whole milliseconds, spacings are not), else when it actually started (a stall). The next call is due one
   * interval later — the interval in force then.
   */
  let last: number | undefined;
  let blockedUntil = 0;
  let sleptMs = 0;
  const due = (): number => (last === undefined ? startAt : last + read(interval));
  return {
    async acquire(deadline, _inHand, atInstant) {
      const start = Math.max(clock.now(), due());
      if (start >= deadline) {
        blockedUntil = wholeMs(start);
        return false;
      }
      sleptMs += await sleepUntil(clock, start);
      if (atInstant !== undefined && !(await atInstant())) {
        blockedUntil = clock.now();
        return false;
      }
      // A wake-up (or a look) past the deadline (an event-loop stall) must not call: the lease may have expired.
      if (clock.now() >= deadline) {
        blockedUntil = clock.now();
        return false;
      }
      last = clock.now() - start < 1 ? start : clock.now();
      return true;
    },
    get carry() {
      return wholeMs(due());
    },
    get blockedUntil() {
      return blockedUntil;
    },
    // One consumer: nothing else reserves its schedule, so a refusal is only ever the deadline.
    held: false,
    stalled: false,
    get sleptMs() {
      return sleptMs;
    },
  };
};

/** The contract averages a store's rate over any window of this length. */
export const RATE_WINDOW_MS = 5_000;
/**
 * How much later one call may reach the marketplace than another that started as late: the network's and the
 * sender's jitter. Calls are paced by when they start; the contract's windows are counted where they arrive.
 */
export const ARRIVAL_JITTER_MS = 50;
/**
 * The least lateness a multi-consumer store's call is allowed: a loaded host's timer and write jitter. At 5 ms, a
 * 1,000/s store's calls on the bench's loaded machine woke or got their writes back late nearly every time,
 * re-reserving up to five times before going regardless (5.0 rate writes per task, issue #11).
 */
export const LATENESS_FLOOR_MS = 50;
/** The clock's resolution: a single consumer's call starts up to this after its due time (`localPacer`). */
const CLOCK_STEP_MS = 1;
/**
 * The most lateness a call is allowed, at any rate: the spacing pays for it (`pacedInterval`), so half an interval
 * (250 ms at 2/s: 6 % of the rate) would cost more than the rare wake-up that late (it takes the next instant).
 */
export const LATENESS_CEILING_MS = 100;
/** How late a call may start after its instant before it takes a later one: half an interval, within the bounds. */
export const lateness = (interval: number): number =>
  Math.min(Math.max(interval / 2, LATENESS_FLOOR_MS), LATENESS_CEILING_MS);
/**
 * The most lateness a block may take (issue #11: the reach): a lease whose calls take 30 ms at 1,000/s starts its
 * j-th instant j × 29 ms late, so at the standard lateness (50 ms) a block held two instants and every other call
 * cost a schedule write. A block may take as much as keeps the messages in hand (`blockLateness`); its spacing
 * pays for it (`reachSpacing`: 20 % wider at a second), so it takes no more than its store's consumers cannot
 * use anyway (their calls a second at most, cap / cycle, stay under the wider spacing's rate), and a later block
 * of smaller lateness starts the difference after it (the schedule's `tatLate`, `sharedPacer`).
 */
export const LATENESS_REACH_MS = 1_000;
/**
 * The most schedule a block past the standard lateness may span (its instants' first to last): leases reserve
 * one after another, each behind the blocks before it, so a long block makes the next lease wait for its first
 * instant though the store does not bind. At 50/s (instants 20 ms apart) a lease of 100 ms calls reserved seven
 * instants at the reach and the fourth of four leases waited 465 ms for its first: 73 calls in the busiest 5 s
 * against 201 at the standard lateness (the property harness of rate-window.test.ts). The reach is for dense
 * schedules — at 1,000/s ten instants span 11 ms — where a block of the messages in hand costs no wait.
 */
export const REACH_SPAN_MS = 50;
/**
 * The most calls any 5 s window may hold at `interval` (the rate's, 1000 / rate as computed, not rounded): rate × 5 s,
 * whole, and at least one (a rate under 0.2/s keeps its interval). Allows for the division's rounding error only:
 * a rate just under a whole budget (2.9999/s: 14.9995 calls) gets the whole number below it (it allowed a
 * microsecond's rounding before, and so 15 calls there: found in review, session 23).
 */
export const windowCalls = (interval: number): number =>
  Math.max(1, Math.floor(RATE_WINDOW_MS / interval + 1e-9));
/** Whole microseconds, rounded up (never denser): see `spanOf`. */
const wholeUs = (ms: number): number => Math.ceil(ms * 1000 - 1e-6) / 1000;

/**
 * The spacing a store's calls are paced at for the effective rate's `interval`, so that no closed 5 s window of
 * arrivals at the marketplace holds more than the policy allows (`windowCalls` of `policyInterval`: the contract).
 * A call arrives up to `spread` after its paced time (the arrival jitter; on a shared schedule also the lateness
 * allowed at the spacing itself), so n + 1 calls in a window W have paced times within W + spread: n spacings must
 * exceed that.
 *  - One consumer (`localPacer`, spaced from the calls' own due times on one clock, each starting within the
 *    clock's millisecond after it): (W + 51 ms) / n, 1 % under the rate where rate × 5 s is whole.
 *  - Several (`sharedPacer`'s instants, a call up to `lateness` after its own): (W + lateness + 50 ms) / n, 2 %
 *    under the rate over 10/s, 3 % at 5/s and under.
 * A policy rate whose 5 s budget is not whole runs at the whole budget (0.5/s: two calls per 5 s). A lower rate
 * learnt from the marketplace keeps its own interval where that is wider (its limit is the marketplace's, not
 * the contract's; the policy's budget still bounds it).
 */
export const pacedInterval = (interval: number, shared: boolean, policyInterval = interval): number => {
  const n = windowCalls(policyInterval);
  const spread = (paced: number): number => ARRIVAL_JITTER_MS + (shared ? lateness(paced) : CLOCK_STEP_MS);
  // From above (the lateness at its ceiling) down to where the lateness at the spacing itself is paid for.
  let paced = (RATE_WINDOW_MS + ARRIVAL_JITTER_MS + LATENESS_CEILING_MS) / n;
  for (let i = 0; i < 4; i++) paced = (RATE_WINDOW_MS + spread(paced)) / n;
  paced = wholeUs(paced);
  while (n * paced <= RATE_WINDOW_MS + spread(paced)) paced += 0.001;
  return Math.max(wholeUs(interval), wholeUs(policyInterval), paced);
};
/**
 * The spacing of a shared schedule's instants at a (paced) `interval`: the interval itself in whole microseconds,
 * so the schedule's sums stay exact (`spanOf`).
 */
export const spacingOf = (interval: number): number => wholeUs(interval);
/**
 * The spacing of a block whose calls may start up to `late` after their instants, for a schedule paced at
 * `paced` (`pacedInterval`, which pays for `lateness(paced)`): n instants of it exceed the window, the
 * arrival jitter and `late` wherever n of `paced` exceed the window, the jitter and `lateness(paced)` — the
 * same stretch by ratio, so no policy budget is needed here. At `lateness(paced)` or less, `paced` itself.
 */
export const reachSpacing = (paced: number, late: number): number => {
  const paid = RATE_WINDOW_MS + ARRIVAL_JITTER_MS + lateness(paced);
  return late <= lateness(paced)
    ? spacingOf(paced)
    : wholeUs((paced * (paid - lateness(paced) + late)) / paid);
};
/**
 * The span a write moves the schedule by for `count` instants `step` apart, in whole microseconds. DynamoDB adds
 * decimals exactly, and a give-back is conditional on `tat` being what the block write answered (parsed into a
 * double): a sum with more digits than a double keeps would never compare equal again, and every give-back at a
 * stretched spacing would fail. Microseconds survive the round trip at epoch times (a double there resolves a
 * quarter of one).
 */
export const spanOf = (count: number, step: number): number => Math.round(count * step * 1000) / 1000;
/** Late wake-ups (or stalled block writes) in a row after which the pacer refuses the call: the host is stalled. */
const MAX_TRIES = 5;
/**
 * The furthest ahead of the clock a restart places its first instant to allow for its own write's latency
 * (`sharedPacer`): a stalled table costs a call at most this much wait, never a burst.
 */
export const MAX_RESTART_AHEAD_MS = 250;
/**
 * Where a lone consumer's pace may start after a shared schedule that ends at `tat`: its last block's calls may
 * start up to `tatLate` after their instants, and the lone consumer's spacing pays for none (a schedule
 * written before `tatLate` was kept: the most any block had then). Undefined for no schedule.
 */
export const scheduleClearAt = (tat: number | undefined, tatLate: number | undefined): number | undefined =>
  tat === undefined ? undefined : tat + (tatLate ?? LATENESS_CEILING_MS);
/** The most instants one write reserves: an SQS batch, the most messages a lease holds at once. */
export const MAX_BLOCK = 10;
/** A shared pacer sizes its blocks for the slower of its lease's last this many cycles (`sharedPacer`). */
export const PACE_CYCLES = 2;
/**
 * Records a lease's newest cycle in `cycles` (newest first, at most PACE_CYCLES) and answers its pace: the slowest
 * of them (`sharedPacer`'s, and the scale model's).
 */
export const recordCycle = (cycles: number[], cycle: number): number => {
  cycles.unshift(cycle);
  cycles.length = Math.min(cycles.length, PACE_CYCLES);
  return Math.max(...cycles);
};

/**
 * The longest a multi-consumer store's call normally waits for its instant: each of its N consumers holds at
 * most one reserved instant, so N intervals, doubled for jitter, and never under a second. An instant further
 * out means the store is held (`holdTat`, another consumer's 429): the caller stops rather than sleeps.
 */
export const maxPaceWaitMs = (interval: number, consumers: number): number =>
  Math.max(1000, 2 * interval * consumers);

/**
 * How many instants the next block reserves, given the messages in hand, where the block is expected to
 * start, the slice deadline, the longest wait for an instant (`horizon`: a hold is learnt at the next block,
 * so no block reaches further than a single reservation could), and the lease's own pace — the time from one
 * call's start to its next acquire (`cycle`). Consecutive instants are one interval apart: a lease slower
 * than that starts its j-th call j × (cycle − interval) after its instant, on top of the lag its first call
 * started with (`startLag`), so the block stops where that lag would pass the lateness allowed less a wake-up's
 * millisecond (a slower lease reserves one instant per call, as before blocks). Sized at the edge, the last
 * instant was forfeited whenever a call ran a millisecond longer: a 100/s store of ten leases with 60 ms calls
 * reserved two instants a block and used one, and reached 59 % of its rate (session 26).
 */
export const blockSize = (opts: {
  interval: number;
  inHand: number;
  start: number;
  deadline: number;
  horizon: number;
  cycle: number | undefined;
  /** The block's lateness (`lateness(interval)` unless it takes the reach). */
  late?: number;
  /** How late after its instant the lease's last block's first call started (its wake-up, its look). */
  startLag?: number;
}): number => {
  const { interval, cycle } = opts;
  const beforeDeadline = Math.ceil((opts.deadline - opts.start) / interval);
  const withinHorizon = Math.floor(opts.horizon / interval) + 1;
  const late = opts.late ?? lateness(interval);
  const startLag = opts.startLag ?? 0;
  const paced = (at: number): number =>
    cycle === undefined || cycle <= interval
      ? MAX_BLOCK
      : Math.max(0, Math.floor((at - startLag - CLOCK_STEP_MS) / (cycle - interval))) + 1;
  // Past the standard lateness, no further than REACH_SPAN_MS of schedule (never fewer than the standard allows).
  const keepsPace =
    late > lateness(interval)
      ? Math.max(paced(lateness(interval)), Math.min(paced(late), Math.floor(REACH_SPAN_MS / interval) + 1))
      : paced(late);
  return Math.max(1, Math.min(MAX_BLOCK, opts.inHand, beforeDeadline, withinHorizon, keepsPace));
};

/**
 * Whether a block that started `ahead` of the clock found its store binding deep (`sharedPacer`'s test, and the
 * scale model's): further ahead than the largest gap a lowering costs, or — for a lease that keeps up with the
 * interval (`cycle`) — ahead at all.
 */
export const bindsDeep = (ahead: number, interval: number, cycle: number | undefined): boolean =>
  ahead > LATENESS_REACH_MS - lateness(interval) || (cycle !== undefined && cycle <= interval && ahead > 0);

/**
 * A shared schedule block's lateness (`sharedPacer`'s choice, and the scale model's): the standard where the
 * store binds deep (`deep`); else never less than the schedule's as the lease last saw it (`knownLate`), and
 * while the schedule lags the clock (`lagging`), for a lease slower than the interval, as much as keeps the
 * messages in hand within one block of at most REACH_SPAN_MS, in whole 10 ms — up to LATENESS_REACH_MS, and
 * only as far as the wider spacing costs nothing: its rate stays above what the store's `consumers` can call
 * at the lease's pace (the spacing at lateness L is `paced` × (W + J + L) / (W + J + l), l the standard).
 */
export const blockLateness = (opts: {
  interval: number;
  inHand: number;
  cycle: number | undefined;
  lagging: boolean;
  deep: boolean;
  knownLate: number | undefined;
  consumers: number;
  /** As `blockSize`'s: the lag the block's first call starts with. */
  startLag?: number;
}): number => {
  const { interval, cycle } = opts;
  const standard = lateness(interval);
  if (opts.deep) return standard;
  const kept = Math.max(standard, opts.knownLate ?? standard);
  if (!opts.lagging || cycle === undefined || cycle <= interval) return kept;
  const wanted = Math.min(opts.inHand, MAX_BLOCK, Math.floor(REACH_SPAN_MS / interval) + 1);
  const lag = (opts.startLag ?? 0) + CLOCK_STEP_MS + (wanted - 1) * (cycle - interval);
  const needed = Math.ceil(lag / 10) * 10;
  const paid = RATE_WINDOW_MS + ARRIVAL_JITTER_MS;
  const free = ((paid + standard) * cycle) / (opts.consumers * interval) - paid;
  return Math.max(kept, Math.min(needed, LATENESS_REACH_MS, Math.floor(free / 10) * 10));
};

/**
 * A lease's look at its store's learnt rate just before a call (`sharedPacer`), while the marketplace's bare
 * 429s set it: another consumer's 429 lowers the rate and holds the store, but the instants this lease
 * reserved before that, at the old spacing, would still go out into the marketplace's empty bucket (the 429s
 * that come in pairs). `wanted`: whether the store's rate is one such a 429 can change (a backoff);
 * `read`: adopts the store's rate as it stands (one read), and answers, when that was another consumer's new
 * 429, when this lease may call next: one new interval after that 429 (`quietUntil`). The lease then
 * respaces what is left of its block at the new interval from then on, inside the span its write reserved: no
 * instant is handed out twice, and the span is not wasted. (Dropping the blocks left gaps of 2–4 s after each
 * 429 in the bench; keeping them quiet for the first hold's whole second cost ~6 % of throughput there, where
 * the marketplace's bucket refills a token every interval.)
 */
export interface RatePeek {
  wanted(): boolean;
  read(): Promise<number | undefined>;
}
/** A peek wakes this long before its instant (its read's time; a read that takes longer makes the call late). */
export const PEEK_LEAD_MS = 15;
/** No peek when the lease saw the store's rate this recently (its reservation hands it back). */
export const PEEK_FRESH_MS = 50;

/**
 * The pacing arithmetic: a store's spacing and a block write's. The simulation swaps in broken ones
 * (`block-in-one-interval`, `aimd-above-policy`).
 */
export interface BlockRules {
  /** The spacing of a store's calls at the effective rate's `interval` (`pacedInterval`). */
  paced(interval: number, shared: boolean, policyInterval: number): number;
  /**
   * The spacing of a block's `count` instants at `interval` whose calls may start up to `late` after them; one
   * write moves the schedule on by count × it.
   */
  step(count: number, interval: number, late: number): number;
  /**
   * The gap a block of lateness `late` leaves after the schedule's last block, of lateness `last`: that block's
   * late calls may land where this one's instants lie, and this block's spacing pays only for its own lateness.
   */
  gap(last: number, late: number): number;
}
export const BLOCK_RULES: BlockRules = {
  paced: pacedInterval,
  step: (_count, interval, late) => reachSpacing(interval, late),
  gap: (last, late) => Math.max(0, last - late),
};

/** A run of reserved instants, `first + j × step` for j < count; those before `next` are spent or forfeited. */
export interface Block {
  first: number;
  count: number;
  /** The interval in force when the block was reserved, and the spacing of its instants (the same, unbroken). */
  interval: number;
  step: number;
  /** How late after its instant a call may start (`lateness(interval)`, or the reach: `LATENESS_REACH_MS`). */
  late: number;
  next: number;
  /** The write as it left the schedule (end of the block), while its unused tail may be given back. */
  reserved?: { tat: number; seq: number };
}

/**
 * What is left of a block from `instant` on, respaced at `interval` and starting no earlier than `quietUntil`,
 * inside the span its write reserved (up to `first + count × step`, where the next reservation's first instant
 * may lie): undefined when no instant fits (the lease then reserves again, after the schedule's end).
 */
export const respaced = (
  block: Block,
  instant: number,
  interval: number,
  quietUntil: number | undefined,
): Block | undefined => {
  const from = Math.max(instant, quietUntil ?? instant);
  // At the block's lateness, which the schedule recorded for it.
  const step = reachSpacing(interval, block.late);
  const count = Math.floor((block.first + block.count * block.step - from) / step);
  if (count < 1) return undefined;
  // No `reserved`: the span's tail is not this block's count × step any more, so nothing is given back.
  return { first: from, count, interval, step, late: block.late, next: 0 };
};

/** The block's earliest unspent instant not more than `lateness` behind `now` (earlier ones are forfeited). */
const nextInstant = (block: Block, now: number): number | undefined => {
  const earliest = now - block.late;
  let from = Math.ceil((earliest - block.first) / block.step);
  // The division and the product round apart: never pick an instant the lateness check then refuses.
  if (block.first + from * block.step < earliest) from++;
  const j = Math.max(block.next, from);
  if (j >= block.count) return undefined;
  block.next = j;
  return block.first + j * block.step;
};

/**
 * A multi-consumer store's pacer. One write reserves a block of up to `MAX_BLOCK` consecutive instants on the
 * store's shared GCRA schedule (`advanceTat` by count × interval, or `restartTat` at now when the schedule lags
 * the clock); the lease then paces locally through them, one call per instant, each starting at its instant
 * and at most `lateness` after it. A late wake-up never re-reserves and never calls off an instant: it forfeits
 * the instants it overslept and takes the block's next one (waiting for it); only a block used up reserves
 * again. A block's unused tail is given back when the slice deadline or a hold refuses it (`returnTat` by the
 * tail's span, conditional on the block write being the schedule's last). The store learns another consumer's
 * hold (`holdTat`) at its next block write: a block reserved before a hold landed may still call — as a single
 * reserved instant could before blocks — but only within `maxWait` of its write, since no block reaches further.
 */
/** A shared pacer's settings beyond its schedule, spacing and clock (`sharedPacer`). */
export interface SharedPacerOptions {
  /** Past this wait for its instant the store is held (another consumer's 429): the call is refused (`held`). */
  maxWait?: Interval;
  /**
   * Told each reservation or restart as the schedule left it: the store's learnt rate (another consumer may
   * have changed it) and its call count (the calls reserved by all consumers, for the adaptive rate's
   * sent-rate bound).
   */
  onReservation?: (reservation: TatReservation) => void;
  rules?: BlockRules;
  peek?: RatePeek;
  /**
   * How far ahead one block may reach (`maxWait` by default). A store's consumers reserve one after another,
   * each behind the blocks before it, so their blocks stacked end to end must still fit `maxWait`: a consumer
   * whose first instant lay further out took it for another consumer's hold (`held`) with no hold at all — a
   * slice ending `throttled` on a slow marketplace that never answered 429 (session 24's black-box pass). The
   * slice passes `maxWait` / the store's cap.
   */
  horizon?: Interval;
  /** The schedule's lateness as the lease's acquire read it (`tatLate`): its first block may take it. */
  knownLate?: number;
  /** The store's consumers at most (its cap): a block's lateness costs nothing while they cannot bind it. */
  consumers?: number;
}

export const sharedPacer = (
  dispatch: DispatchState,
  storeId: string,
  spacing: Interval,
  clock: Clock,
  options: SharedPacerOptions = {},
): Pacer => {
  const maxWait = options.maxWait ?? Number.POSITIVE_INFINITY;
  const onReservation = options.onReservation ?? ((): void => undefined);
  const rules = options.rules ?? BLOCK_RULES;
  const { peek } = options;
  const horizon = options.horizon ?? maxWait;
  const consumers = options.consumers ?? 1;
  /** The schedule's lateness as this lease last saw it (its acquire's read, its own writes, a refusal). */
  let knownLate = options.knownLate;
  let block: Block | undefined;
  /** Where this lease last left the schedule (its block's end). */
  let knownEnd: number | undefined;
  /**
   * Whether the schedule lagged the clock at this lease's last reservation (its first instant was due at
   * once): then the next reservation tries a restart first — one write either way when the guess is right.
   */
  let lagging = true;
  /** How far ahead of the clock this lease's last block started (≤ 0 while the schedule lags). */
  let ahead = 0;
  /** This lease's reservations in a row that found its store binding deep (`deepAt`). */
  let deepRuns = 0;
  /**
   * When this lease's last call started, and the lease's own pace: the slower of its last PACE_CYCLES cycles
   * (from a call's start to its next acquire). Sized for the last cycle alone, a block's last instants were
   * forfeited whenever the next calls ran slower — every block of a lease whose calls vary. The slowest of four
   * kept more of them, but one long cycle (a Retry-After slept through) then sized four blocks as a slow lease's,
   * and the adaptive-rate model lost three points of throughput.
   */
  let lastCallAt: number | undefined;
  let cycle: number | undefined;
  const cycles: number[] = [];
  /** How late after its instant the lease's last block's first call started, and whether it has yet. */
  let startLag = 0;
  let firstOfBlock = true;
  let blockedUntil = 0;
  let held = false;
  let stalled = false;
  let sleptMs = 0;
  /** When this lease last saw the store's rate: its last reservation's answer, or its last peek. */
  let seenAt = Number.NEGATIVE_INFINITY;

  /** The block a reservation answered, `count` instants `step` apart ending where the write left the schedule. */
  const blockOf = (
    got: TatReservation,
    count: number,
    interval: number,
    step: number,
    late: number,
  ): Block => {
    knownEnd = got.tat;
    return {
      first: got.tat - spanOf(count, step),
      count,
      interval,
      step,
      late,
      next: 0,
      ...(got.seq === undefined ? {} : { reserved: { tat: got.tat, seq: got.seq } }),
    };
  };
  /**
   * Refused writes of one reservation (another consumer's write came between) before the block stops lowering
   * and takes the schedule's lateness, with no condition on depth.
   */
  const LOWER_TRIES = 2;
  const advance = async (count: number, interval: number, late: number, tries = 0): Promise<Block> => {
    let step = rules.step(count, interval, late);
    // A raise over the standard lateness only while the schedule does not lead the clock (`TatLate.deepFrom`).
    const standard = lateness(interval);
    const deepFrom = late > standard && tries <= LOWER_TRIES ? clock.now() : undefined;
    const first = await timed(() =>
      dispatch.advanceTat(storeId, spanOf(count, step), count, {
        ms: late,
        ...(deepFrom === undefined ? {} : { deepFrom }),
      }),
    );
    seenAt = clock.now();
    if (first.refused !== undefined) {
      const last = first.refused.late ?? LATENESS_CEILING_MS;
      knownLate = last;
      // The schedule's last block may start its calls later than this one would (a lagging store's reach). A
      // lease that binds deep starts this block the difference after it (one more write, once per such
      // lowering); one that does not takes that lateness (no gap).
      // After LOWER_TRIES refusals (other consumers writing between), the schedule's own lateness; a few more
      // (each one another consumer's raise), the reach, which no schedule refuses.
      if (last > late) {
        if (isDeep() && tries < LOWER_TRIES) return lower(first, count, interval, late, tries);
        return advance(count, interval, tries > LOWER_TRIES + 2 ? LATENESS_REACH_MS : last, tries + 1);
      }
      // A raise refused: the store binds deep at a smaller lateness; this block takes that, or the standard one
      // if larger (no deeper than that, a raise needs no condition).
      return advance(count, interval, Math.max(last, standard), tries + 1);
    }
    knownLate = late;
    onReservation(first);
    const learnt = read(spacing);
    let got = first;
    let used = interval;
    if (learnt > interval) {
      // Another consumer lowered the store's rate (adaptive rate): this block used the old spacing, so push the
      // schedule on by the difference for each instant — one more write, only when the rate was lowered since.
      const wider = rules.step(count, learnt, late);
      const widened = await timed(() =>
        dispatch.advanceTat(storeId, spanOf(1, spanOf(count, wider) - spanOf(count, step)), 0),
      );
      if (first.seq !== undefined && widened.seq === first.seq + 1) {
        got = widened;
        step = wider;
        used = learnt;
      } else {
        // Another write landed between the two: another consumer reserving or widening its own block — or
        // another consumer's 429 holding the store (`holdTat`), which this lease has now seen in the schedule.
        // Calling from the first write's span would go out inside that hold (simulation seeds 7013067 and
        // 7057230, once the stretched spacing moved their interleavings). Reserve again after the schedule's
        // end instead, at the new interval; the first span's few instants stay unused.
        return advance(count, learnt, late, tries);
      }
    }
    return blockOf(got, count, used, step, late);
  };
  /**
   * A block of lateness `late` after a schedule whose last block's is larger (`refused`: the schedule as the
   * refusal found it): placed at the gap after the schedule's end, or at now (`restartAt`) if that lies behind
   * the clock, conditional on no write having moved the schedule since. Another write first: the lowering is
   * tried again; after LOWER_TRIES the block takes the schedule's lateness (no gap: no lowering). It took the
   * reach until review: a binding store's lateness went up to 1 s, and its next lowering paid a 950 ms gap.
   */
  const lower = async (
    refused: TatReservation,
    count: number,
    interval: number,
    late: number,
    tries: number,
  ): Promise<Block> => {
    const last = refused.refused?.late ?? LATENESS_CEILING_MS;
    const step = rules.step(count, interval, late);
    // Whole microseconds, as every span (`spanOf`): a give-back or a later placement compares `tat` exactly, and
    // a lateness of half a paced interval has half-microsecond digits (found in review: 614 of 2,000 placements
    // no longer survived DynamoDB's decimal → double round trip after the next ADD).
    const at = wholeUs(Math.max(refused.tat + rules.gap(last, late), restartAt(clock.now(), interval)));
    const placed = await timed(() =>
      dispatch.placeTat(
        storeId,
        { tat: refused.tat, ...(refused.seq === undefined ? {} : { seq: refused.seq }) },
        at,
        spanOf(count, step),
        count,
        late,
      ),
    );
    if (placed === undefined) return advance(count, interval, late, tries + 1);
    seenAt = clock.now();
    knownLate = late;
    onReservation(placed);
    return blockOf(placed, count, interval, step, late);
  };
  /** How long this lease's last two schedule writes took, to place a restart where its write will have landed. */
  const latencies: number[] = [];
  const timed = async <T>(write: () => Promise<T>): Promise<T> => {
    const sent = clock.now();
    const result = await write();
    latencies.unshift(clock.now() - sent);
    latencies.length = Math.min(latencies.length, 2);
    return result;
  };
  /**
   * Where a restart should put its first instant: now, or — when this lease's writes take longer than the
   * lateness allowed (a loaded table, a high rate: 5 ms at 1,000/s) — where the write is expected to have
   * landed, the faster of the last two, so one slow write does not push every later restart out.
   */
  const restartAt = (now: number, interval: number): number => {
    const expected = latencies.length === 0 ? 0 : Math.min(...latencies);
    return expected > lateness(interval) ? now + Math.min(expected, MAX_RESTART_AHEAD_MS) : now;
  };
  const restart = async (
    now: number,
    count: number,
    interval: number,
    late: number,
  ): Promise<Block | undefined> => {
    const step = rules.step(count, interval, late);
    // `at` may lie ahead of the clock: the write is conditional on the schedule not reaching past `at`, so every
    // instant reserved before it lies before `at` — the first instant here is spaced from them as any other.
    const at = restartAt(now, interval);
    const restarted = await timed(() => dispatch.restartTat(storeId, at, spanOf(count, step), count, late));
    if (restarted === undefined) return undefined;
    seenAt = clock.now();
    knownLate = late;
    onReservation(restarted);
    // Sized to end before the deadline from `at`, so refused by it only when `at` itself is past the deadline:
    // then its instants are given back like any block's.
    return blockOf({ ...restarted, tat: at + spanOf(count, step) }, count, interval, step, late);
  };
  /**
   * Whether this lease's last block found its store binding deep: it started further ahead of the clock than the
   * largest gap a lowering costs (a schedule nearer the clock is the consumers' own blocks reserved side by side,
   * or a lowering's own gap: a store that does not bind, or barely, whose lateness stays where it is). A threshold
   * of the schedule's own lateness less the standard fed on itself: each lowering's gap put the other leases that
   * deep, a lagging lease raised it again, and the next lowered it (a 1,000/s store of ten leases stalled 30
   * times for 220 ms in 12 s: 685 calls in the busiest 5 s against 1,669). Or the lease keeps up with the
   * interval and still waited for its block.
   */
  const deepAt = (interval: number): boolean => bindsDeep(ahead, interval, cycle);
  /**
   * Deep at this lease's last two reservations: one alone is the store's consumers fanning out, each block behind
   * the ones reserved just before it (ten leases of 55 ms blocks at 200/s start 495 ms ahead, and paid the gap
   * though the store did not bind: 577 calls in the busiest 5 s against 836).
   */
  const isDeep = (): boolean => deepRuns >= 2;
  /**
   * This block's lateness (`blockLateness`; the spacing pays for it). A raise only where the schedule lags: a
   * binding store never raises it again (`TatLate.deepFrom`). The first choice — the whole reach for any slower
   * lease, deep or not — cost the calibration workload's pro and enterprise stores (3 and 10 consumers, ~100 ms
   * calls at 20 and 50/s) a gap at every other block (12–17 % more worker time a task) and mid-rate stores most
   * of their rate (REACH_SPAN_MS).
   */
  const latenessFor = (interval: number, inHand: number, lags: boolean): number =>
    blockLateness({ interval, inHand, cycle, lagging: lags, deep: isDeep(), knownLate, consumers, startLag });
  const reserve = async (inHand: number, deadline: number): Promise<Block> => {
    const now = clock.now();
    const interval = read(spacing);
    let late = latenessFor(interval, inHand, lagging);
    const size = (start: number): number =>
      blockSize({ interval, inHand, start, deadline, horizon: read(horizon), cycle, late, startLag });
    // The schedule may lag the clock (it did at this lease's last reservation, and this lease's own block has
    // ended — else the schedule is surely ahead): restart it at now, one write.
    if (lagging && (knownEnd === undefined || knownEnd <= now)) {
      const restarted = await restart(now, size(restartAt(now, interval)), interval, late);
      if (restarted) return restarted;
      // Refused: the schedule leads the clock, where a raise would be refused too (one write more each block:
      // 271 of them in the property harness's 1,000/s store of ten leases).
      late = latenessFor(interval, inHand, false);
    }
    const count = size(Math.max(now, knownEnd ?? now));
    const got = await advance(count, interval, late);
    if (got.first + (got.count - 1) * got.step < clock.now() - got.late) {
      // The whole block lies too far behind the clock to use (the schedule lagged a slow call): going now would
      // leave the schedule behind this call, and the next restart would succeed against it at once — two calls
      // together. Restart it at now instead (a second write, only after such a lag); if another consumer moved
      // it meanwhile, advance again.
      // At the block's interval: a widened block's (another consumer's lowered rate), not the one read before.
      const again = clock.now();
      return (
        (await restart(again, size(restartAt(again, got.interval)), got.interval, got.late)) ??
        (await advance(count, got.interval, got.late))
      );
    }
    return got;
  };
  /** Gives back the block's instants from `next` on (one conditional write), if it was the schedule's last write. */
  const giveBack = async (unused: Block): Promise<void> => {
    if (unused.reserved === undefined) return;
    // A failed give-back only leaves those instants unused.
    await dispatch
      .returnTat(
        storeId,
        unused.reserved,
        spanOf(unused.count - unused.next, unused.step),
        unused.count - unused.next,
      )
      .catch(() => false);
  };

  /**
   * No call from `unused`: the slice will not use its instants, so give them back and the slice resuming at them
   * finds them free. Kept, every slice of a store whose interval exceeds the slice would push the schedule on and
   * never call (a livelock; simulation seeds 10392, 64157); a held block lies past the hold, where the schedule
   * goes back to.
   */
  const refuse = async (until: number, unused: Block): Promise<false> => {
    blockedUntil = wholeMs(until);
    block = undefined;
    await giveBack(unused);
    return false;
  };

  return {
    async acquire(deadline, inHand = 1, atInstant) {
      stalled = false;
      if (lastCallAt !== undefined) cycle = recordCycle(cycles, clock.now() - lastCallAt);
      for (let late = 0; late < MAX_TRIES;) {
        // A lowered rate (this lease's own answer stretched the schedule): the block's instants are too close.
        if (block !== undefined && read(spacing) > block.interval) block = undefined;
        let instant = block === undefined ? undefined : nextInstant(block, clock.now());
        if (instant === undefined) {
          block = await reserve(inHand, deadline);
          firstOfBlock = true;
          ahead = block.first - clock.now();
          deepRuns = deepAt(block.interval) ? deepRuns + 1 : 0;
          lagging = ahead <= 0;
          instant = nextInstant(block, clock.now());
          // The write stalled past every instant it reserved: as a late wake-up.
          if (instant === undefined) {
            late++;
            continue;
          }
        }
        const current: Block = block as Block;
        held = instant - clock.now() > read(maxWait);
        if (held || instant >= deadline) return refuse(instant, current);
        if (peek?.wanted() && instant - seenAt > PEEK_FRESH_MS && instant - clock.now() >= PEEK_LEAD_MS) {
          sleptMs += await sleepUntil(clock, instant - PEEK_LEAD_MS);
          const quietUntil = await peek.read();
          seenAt = clock.now();
          const interval = read(spacing);
          if (interval > current.interval || (quietUntil !== undefined && quietUntil > instant)) {
            block = respaced(current, instant, Math.max(interval, current.interval), quietUntil);
            continue;
          }
        }
        sleptMs += await sleepUntil(clock, instant);
        if (atInstant !== undefined && !(await atInstant())) return refuse(clock.now(), current);
        // A wake-up (or a look's read) that ran past the deadline: no call at or after it, as the local pacer.
        if (clock.now() >= deadline) return refuse(clock.now(), current);
        if (clock.now() - instant <= current.late) {
          current.next++;
          lastCallAt = clock.now();
          // A block's first call: how late this lease starts a block (its wake-up, its look), the lag its next
          // block's later instants add to.
          if (firstOfBlock) startLag = lastCallAt - instant;
          firstOfBlock = false;
          return true;
        }
        // Woke too late (an event-loop stall): going now would bunch with the calls after this instant; the next
        // round takes the block's next instant instead, or reserves a block once this one is spent.
        late++;
      }
      // MAX_TRIES late wake-ups (or stalled writes) in a row: the host is stalled past the lateness the spacing pays
      // for. The call is refused and its block given back, so the slice hands its messages back and the store is
      // looked at again at once (`max_time`, due now). Until session 23 it went ahead regardless, on no instant,
      // and the lease's next call took the block's next one: two calls closer than the spacing less the lateness,
      // 13 arrivals within 4,922 ms at 2.4/s in the black-box pass (rate-pacing.test.ts "oversleeps five").
      // (Every try used a block or reserved one, so one is in hand.)
      stalled = true;
      return refuse(clock.now(), block as Block);
    },
    get carry() {
      const next = block === undefined ? undefined : block.first + block.next * block.step;
      return wholeMs(next ?? knownEnd ?? clock.now());
    },
    get blockedUntil() {
      return blockedUntil;
    },
    get held() {
      return held;
    },
    get stalled() {
      return stalled;
    },
    get sleptMs() {
      return sleptMs;
    },
  };
};
