import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { Clock, DispatchState, TatLate } from '../../../lambdas/core/ports.js';
import {
  bindsDeep,
  blockLateness,
  blockSize,
  lateness,
  LATENESS_REACH_MS,
  MAX_BLOCK,
  MAX_RESTART_AHEAD_MS,
  PEEK_LEAD_MS,
  reachSpacing,
  recordCycle,
  respaced,
  scheduleClearAt,
  sharedPacer,
  spacingOf,
  spanOf,
} from '../../../lambdas/core/rate.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { T0 } from '../support/fixtures.js';

const STORE = 'store-1';

/** A clock that only moves when slept on or advanced; sleep `n` (1-based) overshoots by `late(n)` ms. */
const steppedClock = (late: (n: number) => number = () => 0) => {
  let now = T0;
  let sleeps = 0;
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      sleeps++;
      now += ms + late(sleeps);
    },
  };
  return { clock, advance: (ms: number) => (now += ms) };
};

/**
 * The in-memory dispatch state, recording each schedule write with the span it moved. A schedule already there
 * (`tat`) has its last block's lateness (`tatLate`: 0, calls on time, unless a test says).
 */
const recordingDispatch = (tat?: number, tatLate = 0) => {
  const state = new MemoryDispatchState();
  state.items.set(STORE, { storeId: STORE, ...(tat === undefined ? {} : { tat, tatLate }) } as never);
  const writes: string[] = [];
  /** Where each lowering placed its block (`placeTat`'s `first`). */
  const placed: number[] = [];
  const dispatch = {
    restartTat: async (id: string, now: number, span: number, calls: number, late?: number) => {
      const ok = await state.restartTat(id, now, span, calls, late);
      writes.push(ok ? `restart ${span}` : 'restart-refused');
      return ok;
    },
    advanceTat: async (id: string, span: number, calls: number, late?: TatLate) => {
      const got = await state.advanceTat(id, span, calls, late);
      writes.push(got.refused ? 'advance-refused' : `advance ${span}`);
      return got;
    },
    placeTat: async (
      id: string,
      seen: { tat: number; seq?: number },
      first: number,
      span: number,
      calls: number,
      late: number,
    ) => {
      const got = await state.placeTat(id, seen, first, span, calls, late);
      writes.push(got ? `place ${span}` : 'place-refused');
      placed.push(first);
      return got;
    },
    returnTat: async (id: string, reservation: { tat: number; seq: number }, span: number, calls: number) => {
      const ok = await state.returnTat(id, reservation, span, calls);
      writes.push(ok ? `return ${span}` : 'return-refused');
      return ok;
    },
    holdTat: (id: string, until: number) => state.holdTat(id, until),
  } as unknown as DispatchState;
  return {
    dispatch,
    writes,
    tat: () => state.items.get(STORE)?.tat,
    calls: () => state.items.get(STORE)?.tatCalls,
    late: () => state.items.get(STORE)?.tatLate,
    placed,
    state,
  };
};

/** `calls` acquires of one lease, each call lasting `callMs`: the starts (ms after T0) and what each answered. */
const run = async (
  pacer: ReturnType<typeof sharedPacer>,
  clock: Clock,
  advance: (ms: number) => void,
  opts: { calls: number; inHand: number; deadline: number; callMs?: number },
) => {
  const starts: number[] = [];
  for (let i = 0; i < opts.calls; i++) {
    if (!(await pacer.acquire(opts.deadline, opts.inHand - i))) break;
    starts.push(clock.now() - T0);
    advance(opts.callMs ?? 0);
  }
  return starts;
};

describe('blockSize', () => {
  const base = { interval: 100, inHand: 10, start: T0, deadline: T0 + 60_000, horizon: 3_000, cycle: 0 };
  it.each([
    { name: 'the messages in hand', over: { inHand: 4 }, expected: 4 },
    { name: 'at most an SQS batch', over: { inHand: 25 }, expected: MAX_BLOCK },
    {
      name: 'instants before the deadline (start + j × interval < deadline)',
      over: { deadline: T0 + 301 },
      expected: 4,
    },
    { name: 'none past the deadline, one at least', over: { deadline: T0 + 300 }, expected: 3 },
    { name: 'a deadline already reached still sizes one', over: { deadline: T0 }, expected: 1 },
    { name: 'instants within the horizon of its start', over: { horizon: 450 }, expected: 5 },
    { name: 'an unknown pace (first call of the lease)', over: { cycle: undefined }, expected: 10 },
    { name: 'a lease as fast as the interval', over: { cycle: 100 }, expected: 10 },
    // 120 ms a call at 100 ms instants: the j-th call starts 20·j ms late, allowed up to 50 ms.
    { name: 'a lease slower than the interval: lag within the lateness', over: { cycle: 120 }, expected: 3 },
    { name: 'a lease 1.5 intervals slow: one instant per write', over: { cycle: 151 }, expected: 1 },
    // 1000/s: the lateness floor (50 ms) allowed, a 21 ms call cycle lags 20 ms a call.
    { name: 'a fast rate allows the lateness floor of lag', over: { interval: 1, cycle: 21 }, expected: 3 },
    // The reach (issue #11): 270 ms of lag at 20 ms a call, within REACH_SPAN_MS (51 instants at 1 ms).
    { name: 'a block’s own lateness', over: { interval: 1, cycle: 21, late: 270 }, expected: 10 },
    // 30 ms of lag a call: the tenth instant would start 270 ms late, the lateness exactly — a wake-up's millisecond
    // more and it is forfeited.
    {
      name: 'a block’s own lateness, the last instant at its edge',
      over: { interval: 1, cycle: 31, late: 270 },
      expected: 9,
    },
    {
      name: 'a block’s own lateness, lag within it',
      over: { interval: 1, cycle: 31, late: 271 },
      expected: 10,
    },
    {
      name: 'a block’s own lateness, 100 ms of lag',
      over: { interval: 1, cycle: 21, late: 100 },
      expected: 5,
    },
    // The block's first call starts late too (its wake-up, its look): later instants add to that lag.
    { name: 'the lag its first call starts with', over: { cycle: 120, startLag: 15 }, expected: 2 },
    { name: 'a first call on time', over: { cycle: 120, startLag: 0 }, expected: 3 },
    { name: 'a first call past its lateness, one at least', over: { cycle: 120, startLag: 60 }, expected: 1 },
    // 60 ms a call at 10.2 ms instants (100/s shared): the second would start 49.8 ms late of 50 — one per write.
    {
      name: 'a second instant at the edge of the lateness',
      over: { interval: 10.2, cycle: 60 },
      expected: 1,
    },
    // At 20 ms instants a block past the standard lateness spans at most REACH_SPAN_MS: three instants.
    { name: 'REACH_SPAN_MS of schedule', over: { interval: 20, cycle: 100, late: 500 }, expected: 3 },
    // …never fewer than the standard lateness keeps (at 10 ms lag a call, 50 ms: five; the sixth at its edge).
    { name: 'no fewer than the standard keeps', over: { interval: 20, cycle: 30, late: 500 }, expected: 5 },
  ])('is bounded by $name: $expected', ({ over, expected }) => {
    expect(blockSize({ ...base, ...over })).toBe(expected);
  });
});

describe('reachSpacing: a block’s spacing for its own lateness', () => {
  it.each([
    { paced: 100, late: 50, expected: 100 }, // the standard lateness: the paced spacing
    { paced: 100, late: 20, expected: 100 }, // less: never denser
    { paced: 100, late: 500, expected: 108.824 }, // 100 × 5,550 / 5,100, up to the microsecond
    { paced: 1.021, late: 270, expected: 1.066 }, // 1.021 × 5,320 / 5,100 = 1.06504, up to the microsecond
    { paced: 300, late: 1_000, expected: 352.428 }, // standard 100 ms: 300 × 6,050 / 5,150
  ])('$paced ms at $late ms late: $expected', ({ paced, late, expected }) => {
    expect(reachSpacing(paced, late)).toBe(expected);
  });
});

describe('scheduleClearAt: where a lone consumer may start after a shared schedule', () => {
  it.each([
    { tat: undefined, tatLate: 500, expected: undefined },
    { tat: T0, tatLate: 500, expected: T0 + 500 },
    { tat: T0, tatLate: 0, expected: T0 },
    { tat: T0, tatLate: undefined, expected: T0 + 100 }, // written before lateness was kept: the ceiling
  ])('tat $tat, tatLate $tatLate', ({ tat, tatLate, expected }) => {
    expect(scheduleClearAt(tat, tatLate)).toBe(expected);
  });
});

describe('recordCycle: a lease’s pace, the slower of its last two cycles', () => {
  it('keeps the newest two and answers the slower', () => {
    const cycles: number[] = [];
    expect([30, 90, 40, 20].map((cycle) => recordCycle(cycles, cycle))).toEqual([30, 90, 90, 40]);
    expect(cycles).toEqual([20, 40]);
  });
});

describe('bindsDeep: a block that found its store binding deep', () => {
  // 20 ms instants (50 ms lateness): the largest gap a lowering costs is 950 ms.
  it.each([
    { case: 'further ahead than the largest gap', ahead: 951, cycle: 100, expected: true },
    { case: 'the largest gap exactly: not', ahead: 950, cycle: 100, expected: false },
    { case: 'a slow lease not that far ahead', ahead: 500, cycle: 100, expected: false },
    { case: 'a lease that keeps up and waited for its block', ahead: 1, cycle: 20, expected: true },
    { case: 'a lease that keeps up, its block due at once', ahead: 0, cycle: 20, expected: false },
    { case: 'a pace not known yet', ahead: 500, cycle: undefined, expected: false },
  ])('$case: $expected', ({ ahead, cycle, expected }) => {
    expect(bindsDeep(ahead, 20, cycle)).toBe(expected);
  });
});

describe('blockLateness: the lateness a block takes', () => {
  // 1,000/s (1 ms instants, standard 50 ms), a lease of 30 ms calls, ten messages in hand, the schedule lagging.
  const base = {
    interval: 1,
    inHand: 10,
    cycle: 30 as number | undefined,
    lagging: true,
    deep: false,
    knownLate: undefined as number | undefined,
    consumers: 1,
  };
  it.each([
    { name: 'what keeps the messages in hand: ⌈9 × 29 ms⌉ in 10 ms', over: {}, expected: 270 },
    { name: 'fewer in hand, less: ⌈2 × 29 ms⌉', over: { inHand: 3 }, expected: 60 },
    { name: 'one in hand: the standard', over: { inHand: 1 }, expected: 50 },
    { name: 'where the store binds deep, the standard', over: { deep: true, knownLate: 500 }, expected: 50 },
    {
      name: 'while the schedule leads the clock, the schedule’s',
      over: { lagging: false, knownLate: 270 },
      expected: 270,
    },
    {
      name: 'while it leads, never under the standard',
      over: { lagging: false, knownLate: 0 },
      expected: 50,
    },
    { name: 'an unknown pace: the standard', over: { cycle: undefined }, expected: 50 },
    { name: 'a lease that keeps up: the schedule’s', over: { cycle: 1, knownLate: 180 }, expected: 180 },
    { name: 'never under the schedule’s', over: { knownLate: 500 }, expected: 500 },
    { name: 'at most LATENESS_REACH_MS', over: { cycle: 200 }, expected: LATENESS_REACH_MS },
    // 20 ms instants, 100 ms calls: within REACH_SPAN_MS three instants, 2 × 80 ms and a wake-up's millisecond,
    // in whole 10 ms; the block's first call starting late asks for its lag on top.
    {
      name: 'three instants within REACH_SPAN_MS at 20 ms',
      over: { interval: 20, cycle: 100 },
      expected: 170,
    },
    {
      name: 'and the lag its first call starts with',
      over: { interval: 20, cycle: 100, startLag: 12 },
      expected: 180,
    },
    // The store's consumers at the lease's pace: 10 × 1/30 ms stay under the rate at any lateness up to 10.25 s;
    // 29 of them only up to 225 ms (in 10 ms: 220); 40 could bind it: no more than the standard.
    { name: 'free for ten consumers', over: { consumers: 10 }, expected: 270 },
    { name: 'only what 29 consumers leave free', over: { consumers: 29 }, expected: 220 },
    { name: 'none where the consumers could bind it', over: { consumers: 40 }, expected: 50 },
  ])('$name: $expected', ({ over, expected }) => {
    expect(blockLateness({ ...base, ...over })).toBe(expected);
  });
});

describe('sharedPacer blocks', () => {
  it('reserves the instants of the messages in hand with one write and paces through them locally', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, tat } = recordingDispatch(T0 + 50);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    const starts = await run(pacer, clock, advance, {
      calls: 5,
      inHand: 5,
      deadline: T0 + 60_000,
      callMs: 30,
    });

    expect(starts).toEqual([50, 150, 250, 350, 450]);
    expect(writes).toEqual(['restart-refused', 'advance 500']);
    expect(tat()).toBe(T0 + 550);
  });

  it('carries its next unspent instant while it holds a block, and the end of its last block once it dropped it', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch } = recordingDispatch(T0 + 50);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    await run(pacer, clock, advance, { calls: 2, inHand: 5, deadline: T0 + 60_000, callMs: 30 });
    // Instants 50 and 150 called; 250, 350, 450 still this lease's: its successor may call from 250, not 550.
    expect(pacer.carry).toBe(T0 + 250);

    // The deadline refuses 250: the block is dropped (its tail given back), and the carry is where it ended.
    expect(await pacer.acquire(T0 + 240, 3)).toBe(false);
    expect(pacer.carry).toBe(T0 + 550);
  });

  it('restarts a lagging schedule at now with the whole block, one write', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, tat } = recordingDispatch(T0 - 10_000);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    const starts = await run(pacer, clock, advance, { calls: 3, inHand: 3, deadline: T0 + 60_000 });

    expect(starts).toEqual([0, 100, 200]);
    expect(writes).toEqual(['restart 300']);
    expect(tat()).toBe(T0 + 300);
  });

  it('a late wake-up forfeits the instants it overslept and takes the next, with no write', async () => {
    // The second sleep, meant for T0 + 200, wakes at T0 + 330: more than half an interval past it, so 200 is
    // forfeited and the block's next instant (300, less than half an interval behind) is taken at once.
    const { clock, advance } = steppedClock((n) => (n === 2 ? 130 : 0));
    const { dispatch, writes } = recordingDispatch(T0);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    const starts = await run(pacer, clock, advance, { calls: 4, inHand: 4, deadline: T0 + 60_000 });

    expect(starts).toEqual([0, 100, 330, 400]);
    // One block of four for the first three calls; the fourth message found the block spent: one more write.
    expect(writes).toEqual(['restart 400', 'advance 100']);
  });

  it('never starts calls closer than the interval less the lateness, however late the wake-ups', async () => {
    const lateBy = [0, 70, 20, 240, 0, 55, 10, 0, 300, 0, 0, 0];
    const { clock, advance } = steppedClock((n) => lateBy[n % lateBy.length] as number);
    const { dispatch, writes } = recordingDispatch(T0);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    const starts = await run(pacer, clock, advance, {
      calls: 30,
      inHand: 30,
      deadline: T0 + 60_000,
      callMs: 5,
    });

    expect(starts).toHaveLength(30);
    for (let i = 1; i < starts.length; i++)
      expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(50);
    // Calls within any second: never more than the rate allows plus the one a lateness can add.
    for (const from of starts)
      expect(starts.filter((s) => s >= from && s < from + 1000).length).toBeLessThanOrEqual(11);
    // Writes: one per block of up to ten, not one per late wake-up.
    expect(writes.length).toBeLessThanOrEqual(6);
  });

  it('gives the tail its slice deadline refuses back with one write, so the instants stay free', async () => {
    const { clock, advance } = steppedClock();
    // Another consumer keeps the schedule ahead: the block starts at T0 + 600, its deadline is T0 + 900.
    const { dispatch, writes, tat } = recordingDispatch(T0 + 600);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    const starts = await run(pacer, clock, advance, { calls: 10, inHand: 10, deadline: T0 + 900 });

    // Sized from now (T0) for a deadline 900 ms away: 9 instants, 600..1400; three go before the deadline.
    expect(starts).toEqual([600, 700, 800]);
    expect(pacer.blockedUntil).toBe(T0 + 900);
    expect(pacer.held).toBe(false);
    expect(writes).toEqual(['restart-refused', 'advance 900', 'return 600']);
    expect(tat()).toBe(T0 + 900);
  });

  it('a give-back returns only the unused tail, and nothing once another write moved the schedule', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, tat } = recordingDispatch(T0 + 600);
    const pacer = sharedPacer(dispatch, STORE, 100, clock);

    expect(await pacer.acquire(T0 + 900, 10)).toBe(true); // block 600..1400 reserved, tat T0 + 1500
    await dispatch.advanceTat(STORE, 100, 1); // another consumer reserves after it: tat T0 + 1600
    advance(0);
    const starts = await run(pacer, clock, advance, { calls: 9, inHand: 9, deadline: T0 + 900 });

    expect(starts).toEqual([700, 800]);
    expect(writes.at(-1)).toBe('return-refused');
    expect(tat()).toBe(T0 + 1_600);
  });

  it('learns a hold raised by another consumer at its next block, and never waits past it in its slice', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, tat } = recordingDispatch(T0);
    const pacer = sharedPacer(dispatch, STORE, 100, clock, { maxWait: 2_000 });

    expect(await pacer.acquire(T0 + 60_000, 2)).toBe(true); // block of 2 at T0, T0 + 100
    await dispatch.holdTat(STORE, T0 + 10_000); // another consumer's 429: Retry-After 10 s
    // The block reserved before the hold still calls — within its write's horizon (2 s), as one instant could.
    expect(await pacer.acquire(T0 + 60_000, 1)).toBe(true);
    expect(clock.now()).toBe(T0 + 100);
    advance(0);
    // The next block lands past the hold: held, given back to the hold's end, nothing slept.
    expect(await pacer.acquire(T0 + 60_000, 8)).toBe(false);
    expect(pacer.held).toBe(true);
    expect(pacer.blockedUntil).toBe(T0 + 10_000);
    expect(clock.now()).toBe(T0 + 100);
    expect(tat()).toBe(T0 + 10_000);
    expect(writes).toEqual(['restart 200', 'advance 800', 'return 800']);
  });

  it('counts on the store the calls its blocks reserve, less a tail given back (the sent-rate count)', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, calls } = recordingDispatch(T0);
    const seen: (number | undefined)[] = [];
    const pacer = sharedPacer(dispatch, STORE, 100, clock, {
      maxWait: 2_000,
      onReservation: (r) => seen.push(r.calls),
    });

    expect(await pacer.acquire(T0 + 60_000, 2)).toBe(true); // a restart reserving 2 instants
    await dispatch.advanceTat(STORE, 300, 3); // another consumer reserves 3
    await dispatch.holdTat(STORE, T0 + 10_000); // and is told to hold (no call reserved)
    expect(await pacer.acquire(T0 + 60_000, 1)).toBe(true);
    advance(0);
    expect(await pacer.acquire(T0 + 60_000, 8)).toBe(false); // 8 reserved past the hold, all given back

    expect(writes).toEqual(['restart 200', 'advance 300', 'advance 800', 'return 800']);
    // Each of its reservations hands back the store's count as it left it: 2, then 2 + 3 + 8.
    expect(seen).toEqual([2, 13]);
    expect(calls()).toBe(5);
  });

  it('widens a block in place only when no other write landed between its two writes, else reserves again after it', async () => {
    const { clock, advance } = steppedClock();
    const state = new MemoryDispatchState();
    state.items.set(STORE, { storeId: STORE, tat: T0 + 1_000 } as never);
    let interval = 500;
    let first = true;
    const dispatch = {
      restartTat: (id: string, now: number, span: number, calls: number) =>
        state.restartTat(id, now, span, calls),
      advanceTat: async (id: string, span: number, calls: number) => {
        const got = await state.advanceTat(id, span, calls);
        if (first) {
          first = false;
          interval = 625; // another consumer's answer lowered the store's rate meanwhile...
          await state.advanceTat(id, 10 * 625, 10); // ...and it reserved its block at the new interval
        }
        return got;
      },
      returnTat: (id: string, reservation: { tat: number; seq: number }, span: number, calls: number) =>
        state.returnTat(id, reservation, span, calls),
    } as unknown as DispatchState;
    const pacer = sharedPacer(dispatch, STORE, () => interval, clock);

    const starts = await run(pacer, clock, advance, { calls: 10, inHand: 10, deadline: T0 + 60_000 });

    // Widened in place, its calls would have gone at 7250 … 12875, inside the other's block. Its own first span
    // (T0 + 1000 … 6000) is not used either: what landed between could have been a hold after another
    // consumer's 429 (simulation seeds 7013067, 7057230). All ten go in a block reserved after the schedule's
    // end (13500: the other's block and the widening), at the new interval.
    expect(starts).toEqual(Array.from({ length: 10 }, (_, j) => 13_500 + j * 625));
  });

  it('drops its block when the rate is lowered mid-block and reserves at the new interval', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes } = recordingDispatch(T0);
    let interval = 100;
    const pacer = sharedPacer(dispatch, STORE, () => interval, clock);

    expect(await pacer.acquire(T0 + 60_000, 5)).toBe(true); // block T0..T0 + 400
    interval = 200; // the lease's own answer lowered the rate (slice.ts stretches the schedule itself)
    await dispatch.advanceTat(STORE, 500, 0); // that stretch: tat T0 + 1000
    advance(10);
    expect(await pacer.acquire(T0 + 60_000, 4)).toBe(true);

    expect(clock.now()).toBe(T0 + 1_000);
    expect(writes).toEqual(['restart 500', 'advance 500', 'advance 800']);
  });
});

/** `recordingDispatch` whose schedule writes each take `writeMs` on the clock (a loaded table). */
const slowDispatch = (advance: (ms: number) => void, writeMs: number) => {
  const recorded = recordingDispatch();
  const slow = (name: 'restartTat' | 'advanceTat') => {
    const write = (recorded.dispatch[name] as (...args: unknown[]) => Promise<unknown>).bind(
      recorded.dispatch,
    );
    return async (...args: unknown[]) => {
      const result = await write(...args);
      advance(writeMs);
      return result;
    };
  };
  const dispatch = {
    ...recorded.dispatch,
    restartTat: slow('restartTat'),
    advanceTat: slow('advanceTat'),
  } as unknown as DispatchState;
  return { ...recorded, dispatch };
};

describe('sharedPacer restarts when its writes take longer than the lateness', () => {
  // 1,000/s: 1 ms instants, 50 ms lateness (the floor); each write takes 80 ms; each call takes 1.2 s (its block's
  // next instant is then further behind than even the reach, LATENESS_REACH_MS: one call per block).
  const INTERVAL = 1;
  const WRITE_MS = 80;

  it('places the restart where its write lands, so each call costs one write after the first slow one', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes } = slowDispatch(advance, WRITE_MS);
    const pacer = sharedPacer(dispatch, STORE, INTERVAL, clock);

    const starts = await run(pacer, clock, advance, {
      calls: 6,
      inHand: 6,
      deadline: T0 + 60_000,
      callMs: 1_200,
    });
    expect(starts).toHaveLength(6);
    // The first restart is placed at now (no latency seen yet) and lands 80 ms late: forfeited, one more write.
    // From then on every restart is placed 80 ms ahead, where its write lands: one write per call.
    const restarts = writes.filter((write) => write.startsWith('restart'));
    expect(writes.length).toBe(restarts.length);
    expect(writes.length).toBe(7);
    // Each call starts when its write lands, never before the instant it reserved.
    expect(starts.slice(1).map((start, i) => start - (starts[i] as number))).toEqual([
      1_280, 1_280, 1_280, 1_280, 1_280,
    ]);
  });

  it('places the restart no further ahead than MAX_RESTART_AHEAD_MS after a stalled write', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, tat } = slowDispatch(advance, 2_000);
    const pacer = sharedPacer(dispatch, STORE, INTERVAL, clock);

    await pacer.acquire(T0 + 60_000, 1); // learns the 2 s latency (the calls after a stalled write go anyway)
    const before = clock.now();
    const restartsFrom = vi.fn(dispatch.restartTat);
    (dispatch as { restartTat: unknown }).restartTat = restartsFrom;
    advance(100);
    await pacer.acquire(T0 + 60_000, 1);

    expect(restartsFrom.mock.calls[0]?.[1]).toBe(before + 100 + MAX_RESTART_AHEAD_MS);
    expect(tat()).toBeGreaterThan(before);
  });

  it('keeps its first instant at now while its writes are within the lateness', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes } = slowDispatch(advance, 3);
    const pacer = sharedPacer(dispatch, STORE, 100, clock); // 10/s: 50 ms lateness

    const starts = await run(pacer, clock, advance, {
      calls: 3,
      inHand: 1,
      deadline: T0 + 60_000,
      callMs: 200,
    });

    // Each restart is placed at its own now and its call starts when the 3 ms write lands. The lease is slower
    // than the interval, but instants 100 ms apart are past REACH_SPAN_MS: the standard lateness.
    expect(starts).toEqual([3, 206, 409]);
    expect(writes).toEqual(['restart 100', 'restart 100', 'restart 100']);
  });
});

describe('sharedPacer restart placement (mutation survivors)', () => {
  /** `slowDispatch` whose writes take `writeMs(n)` for the n-th write, recording where each restart was placed. */
  const placedRestarts = (clock: Clock, advance: (ms: number) => void, writeMs: (n: number) => number) => {
    const recorded = recordingDispatch();
    const placed: number[] = [];
    /** How far ahead of the clock each restart was placed when it was sent. */
    const ahead: number[] = [];
    let n = 0;
    const timed = (name: 'restartTat' | 'advanceTat') => {
      const write = (recorded.dispatch[name] as (...args: unknown[]) => Promise<unknown>).bind(
        recorded.dispatch,
      );
      return async (...args: unknown[]) => {
        if (name === 'restartTat') {
          placed.push(args[1] as number);
          ahead.push((args[1] as number) - clock.now());
        }
        const result = await write(...args);
        advance(writeMs(++n));
        return result;
      };
    };
    const dispatch = {
      ...recorded.dispatch,
      restartTat: timed('restartTat'),
      advanceTat: timed('advanceTat'),
    } as unknown as DispatchState;
    return { ...recorded, dispatch, placed, ahead };
  };

  it('places a restart by the faster of its last two writes', async () => {
    const { clock, advance } = steppedClock();
    // Writes of 60 ms, then 180 ms, then 60 ms again (past the 50 ms lateness floor).
    const { dispatch, ahead } = placedRestarts(clock, advance, (n) => (n === 2 ? 180 : 60));
    const pacer = sharedPacer(dispatch, STORE, 1, clock);

    await run(pacer, clock, advance, { calls: 1, inHand: 1, deadline: T0 + 60_000 });

    // At now (nothing learnt yet: it lands 60 ms late, past its instant); 60 ms ahead (one 60 ms write seen: it
    // takes 180 and lands 120 ms past its instant); 60 ms ahead again — the faster of 180 and 60 — and on time.
    expect(ahead).toEqual([0, 60, 60]);
  });

  it('places a restart at now while its writes stay within the lateness', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, placed } = placedRestarts(clock, advance, () => 3);
    const pacer = sharedPacer(dispatch, STORE, 100, clock); // 10/s: 50 ms lateness, 3 ms writes

    const starts = await run(pacer, clock, advance, {
      calls: 3,
      inHand: 1,
      deadline: T0 + 60_000,
      callMs: 200,
    });

    // Each restart is sent for the clock at the time: the call's own start less its write.
    expect(placed.map((at) => at - T0)).toEqual(starts.map((start) => start - 3));
  });

  it('gives back a restart placed past the slice deadline', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes, tat } = placedRestarts(clock, advance, () => 80);
    const pacer = sharedPacer(dispatch, STORE, 1, clock); // 1,000/s: 50 ms lateness, 80 ms writes

    expect(await pacer.acquire(T0 + 60_000, 1)).toBe(true); // learns the 80 ms writes
    const deadline = clock.now() + 20; // the next restart will be placed 80 ms ahead: past it
    advance(1);
    expect(await pacer.acquire(deadline, 1)).toBe(false);

    expect(writes[writes.length - 1]).toBe(`return ${spacingOf(1)}`);
    expect(pacer.blockedUntil).toBeGreaterThanOrEqual(deadline);
    // The schedule goes back to where the refused restart began.
    expect(tat()).toBe(pacer.blockedUntil);
  });
});

describe('sharedPacer: a look at the store’s rate before a call (RatePeek)', () => {
  /**
   * A peek whose read lowers this lease's spacing to `lowered` once it is set (another consumer's 429), and
   * answers that 429's quiet time the first time it is seen.
   */
  const peeking = (wanted: boolean) => {
    let spacing = 100;
    const reads: number[] = [];
    const state = { lowered: undefined as number | undefined, quietUntil: undefined as number | undefined };
    return {
      spacing: () => spacing,
      reads,
      state,
      peek: (clock: Clock) => ({
        wanted: () => wanted,
        read: async () => {
          reads.push(clock.now() - T0);
          if (state.lowered === undefined || spacing === state.lowered) return undefined;
          spacing = state.lowered;
          return state.quietUntil;
        },
      }),
    };
  };

  it('looks just before an instant its lease reserved a while ago, and not before one it just reserved', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch } = recordingDispatch(T0);
    const p = peeking(true);
    const pacer = sharedPacer(dispatch, STORE, p.spacing, clock, { maxWait: 2_000, peek: p.peek(clock) });

    const starts = await run(pacer, clock, advance, { calls: 3, inHand: 3, deadline: T0 + 60_000 });
    expect(starts).toEqual([0, 100, 200]);
    // The first instant was just reserved (fresh); the next two were reserved 100 and 200 ms before.
    expect(p.reads).toEqual([100 - PEEK_LEAD_MS, 200 - PEEK_LEAD_MS]);
  });

  it('does not look again within PEEK_FRESH_MS of its last look (a fast store: one look per two calls)', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch } = recordingDispatch(T0);
    let spacing = 30;
    const reads: number[] = [];
    const peek = {
      wanted: () => true,
      read: async () => {
        reads.push(clock.now() - T0);
        spacing = 30;
        return undefined;
      },
    };
    const pacer = sharedPacer(dispatch, STORE, () => spacing, clock, { maxWait: 2_000, peek: peek });
    // Instants 30.2 ms apart (spacingOf(30): stretched for the lateness floor), each call at its whole millisecond.
    const step = spacingOf(30);
    expect(await run(pacer, clock, advance, { calls: 5, inHand: 5, deadline: T0 + 60_000 })).toEqual(
      [0, 1, 2, 3, 4].map((j) => Math.ceil(j * step)),
    );
    // After a look before the third instant (60.4), the fourth (90.6) is under 50 ms on — seen recently enough.
    expect(reads).toEqual([Math.ceil(2 * step - PEEK_LEAD_MS), Math.ceil(4 * step - PEEK_LEAD_MS)]);
  });

  it('never looks while no backoff is in force', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch } = recordingDispatch(T0);
    const p = peeking(false);
    const pacer = sharedPacer(dispatch, STORE, p.spacing, clock, { maxWait: 2_000, peek: p.peek(clock) });
    expect(await run(pacer, clock, advance, { calls: 3, inHand: 3, deadline: T0 + 60_000 })).toEqual([
      0, 100, 200,
    ]);
    expect(p.reads).toEqual([]);
  });

  it('drops a block whose span ends within another consumer’s hold, and reserves past it at the new spacing', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes } = recordingDispatch(T0);
    const p = peeking(true);
    const pacer = sharedPacer(dispatch, STORE, p.spacing, clock, { maxWait: 5_000, peek: p.peek(clock) });

    expect(await pacer.acquire(T0 + 60_000, 4)).toBe(true); // a block of 4 at T0, +100, +200, +300
    advance(20);
    // Another consumer's 429: the rate halves (spacing 200) and the store is held 1 s, in one write.
    await dispatch.holdTat(STORE, T0 + 1_020);
    p.state.lowered = 200;
    p.state.quietUntil = T0 + 1_020;
    expect(await pacer.acquire(T0 + 60_000, 3)).toBe(true);
    // Not at T0 + 100 (the old block's instant): at the hold's end, on a block at the new spacing.
    expect(clock.now()).toBe(T0 + 1_020);
    expect(writes).toEqual(['restart 400', 'advance 600']);
    // It looked before the old instant, and again before the new one (reserved almost a second before it).
    expect(p.reads).toEqual([100 - PEEK_LEAD_MS, 1_020 - PEEK_LEAD_MS]);
  });

  it('keeps its block when the look finds the rate unchanged', async () => {
    const { clock, advance } = steppedClock();
    const { dispatch, writes } = recordingDispatch(T0);
    const p = peeking(true);
    const pacer = sharedPacer(dispatch, STORE, p.spacing, clock, { maxWait: 5_000, peek: p.peek(clock) });
    expect(await run(pacer, clock, advance, { calls: 4, inHand: 4, deadline: T0 + 60_000 })).toEqual([
      0, 100, 200, 300,
    ]);
    expect(writes).toEqual(['restart 400']);
  });
});

/** A lease on a 100 ms schedule whose first look after T0 + 50 brings `news` (a lowered rate, a quiet time). */
const setupPeek = (news: { spacing?: number; quietUntil?: number }) => {
  const { clock, advance } = steppedClock();
  const { dispatch, writes } = recordingDispatch(T0);
  let spacing = 100;
  let told = false;
  const peek = {
    wanted: () => true,
    read: async () => {
      if (told || clock.now() < T0 + 50) return undefined;
      told = true;
      spacing = news.spacing ?? spacing;
      return news.quietUntil;
    },
  };
  const pacer = sharedPacer(dispatch, STORE, () => spacing, clock, { maxWait: 5_000, peek: peek });
  return { pacer, clock, advance, writes };
};

describe('respaced', () => {
  const block = { first: T0, count: 10, interval: 100, step: 100, late: lateness(100), next: 1 };
  it('keeps what is left of the span at the new interval, from the quiet time on', async () => {
    const { pacer, clock, advance, writes } = setupPeek({ spacing: 200, quietUntil: T0 + 300 });
    const starts = await run(pacer, clock, advance, { calls: 5, inHand: 10, deadline: T0 + 60_000 });
    // A block of 10 at 100 ms (span to T0 + 1,000); the 429 seen before the second: 300, 500, 700 at 200 ms,
    // then a new block from the span's end.
    expect(starts).toEqual([0, 300, 500, 700, 1_000]);
    expect(writes).toEqual(['restart 1000', 'advance 1200']); // the six left in hand, at 200 ms
  });

  it.each([
    {
      name: 'from the instant when the quiet time is past',
      at: T0 + 100,
      quiet: T0 + 50,
      expected: [T0 + 100, 4],
    },
    { name: 'from the quiet time', at: T0 + 100, quiet: T0 + 500, expected: [T0 + 500, 2] },
    {
      name: 'the last instant one interval before the span’s end',
      at: T0 + 100,
      quiet: T0 + 801,
      expected: undefined,
    },
    { name: 'exactly one fits', at: T0 + 100, quiet: T0 + 800, expected: [T0 + 800, 1] },
  ])('respaces $name', ({ at, quiet, expected }) => {
    const got = respaced(block, at, 200, quiet);
    expect(got === undefined ? undefined : [got.first, got.count]).toEqual(expected);
    if (got)
      expect({ step: got.step, interval: got.interval, next: got.next }).toEqual({
        step: 200,
        interval: 200,
        next: 0,
      });
  });
});

describe('respaced: never denser than the reservation, never outside it (property)', () => {
  it('keeps every instant inside the span, one new interval apart, from the later of the instant and the quiet time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.option(fc.integer({ min: -1_000, max: 20_000 }), { nil: undefined }),
        (count, step, next, widen, quiet) => {
          fc.pre(next < count);
          const block = { first: T0, count, interval: step, step, late: lateness(step), next };
          const instant = T0 + next * step;
          const interval = step + widen;
          const quietUntil = quiet === undefined ? undefined : T0 + quiet;
          const got = respaced(block, instant, interval, quietUntil);
          const end = T0 + count * step;
          const from = Math.max(instant, quietUntil ?? instant);
          // The new interval's spacing (stretched for the lateness floor where it is under 100 ms): never denser.
          const spacing = spacingOf(interval);
          if (got === undefined) return from + spacing > end;
          const last = got.first + (got.count - 1) * got.step;
          return (
            got.first === from &&
            got.step === spacing &&
            spacing >= interval &&
            got.interval === interval &&
            got.next === 0 &&
            last + spacing <= end &&
            // As many as fit: one more would pass the span's end.
            last + 2 * spacing > end
          );
        },
      ),
    );
  });
});

describe('sharedPacer: a first call refused as stalled is not held', () => {
  it('writes that land past every instant they reserved, five times in a row: stalled, not held', async () => {
    // Each schedule write takes 500 ms; a restart lands at most 250 ms ahead (MAX_RESTART_AHEAD_MS), so each
    // block's one instant is 250 ms behind the clock when its write answers, past the 50 ms lateness.
    const { clock, advance } = steppedClock();
    const { dispatch } = recordingDispatch();
    const slow = Object.assign(Object.create(dispatch) as DispatchState, {
      restartTat: async (...args: Parameters<DispatchState['restartTat']>) => {
        advance(500);
        return dispatch.restartTat(...args);
      },
      advanceTat: async (...args: Parameters<DispatchState['advanceTat']>) => {
        advance(500);
        return dispatch.advanceTat(...args);
      },
    });
    const pacer = sharedPacer(slow, STORE, 100, clock, { maxWait: 5_000 });
    expect(await pacer.acquire(T0 + 60_000, 1)).toBe(false);
    expect({ stalled: pacer.stalled, held: pacer.held }).toEqual({ stalled: true, held: false });
  });
});

describe('sharedPacer: the deadline after the wait', () => {
  it('a wake-up past the slice deadline (within the lateness) does not call, and gives its instants back', async () => {
    // Instants every 200 ms (lateness 100); the second one's wake-up overshoots by 80 ms, past the deadline.
    const { clock, advance } = steppedClock((n) => (n === 1 ? 80 : 0));
    const { dispatch, writes, tat } = recordingDispatch(T0);
    const pacer = sharedPacer(dispatch, STORE, 200, clock, { maxWait: 5_000 });
    const deadline = T0 + 250;
    expect(await pacer.acquire(deadline, 2)).toBe(true); // T0, reserving T0 and T0 + 200
    advance(0);
    expect(await pacer.acquire(deadline, 1)).toBe(false);
    expect(clock.now()).toBe(T0 + 280);
    expect(pacer.blockedUntil).toBe(T0 + 280);
    expect(writes).toEqual(['restart 400', 'return 200']);
    expect(tat()).toBe(T0 + 200);
  });
});

describe('sharedPacer: either news respaces the block', () => {
  it('a lowered rate alone (a header rate, no 429): from the instant on, at the new interval', async () => {
    const { pacer, clock, advance, writes } = setupPeek({ spacing: 150 });
    // A block of 4 at 100 ms (span to 400): 100, then 250 at 150 ms; 400 is the span's end.
    expect(await run(pacer, clock, advance, { calls: 3, inHand: 4, deadline: T0 + 60_000 })).toEqual([
      0, 100, 250,
    ]);
    expect(writes).toEqual(['restart 400']);
  });

  it('a quiet time alone (the rate unchanged): from the quiet time on, at the same interval', async () => {
    const { pacer, clock, advance, writes } = setupPeek({ quietUntil: T0 + 250 });
    expect(await run(pacer, clock, advance, { calls: 3, inHand: 4, deadline: T0 + 60_000 })).toEqual([
      0, 250, 400,
    ]);
    // The third call is the next block's (the respaced one held a single instant: 250).
    expect(writes).toEqual(['restart 400', 'advance 200']);
  });
});

describe('sharedPacer: each block’s lateness (issue #11: the reach)', () => {
  /** One lease's acquires, each call lasting `callMs`: the starts (ms after T0). */
  const calls = async (
    pacer: ReturnType<typeof sharedPacer>,
    clock: Clock,
    advance: (ms: number) => void,
    opts: { calls: number; inHand: number; callMs: number },
  ) => run(pacer, clock, advance, { ...opts, deadline: T0 + 60_000 });

  it('a lease slower than a dense schedule takes the lateness its messages in hand need, in one write', async () => {
    // 1,000/s, calls of 30 ms: its first block (no pace known yet) keeps two of ten instants within the standard
    // 50 ms; the second, with the pace known and the schedule lagging, takes ⌈9 × 29 ms⌉ = 270 ms, and holds
    // the ten messages left in hand (their instants 1.05 ms apart, the spacing paying for 270 ms).
    const { clock, advance } = steppedClock();
    const { dispatch, writes, late } = recordingDispatch();
    const pacer = sharedPacer(dispatch, STORE, 1, clock);
    const starts = await calls(pacer, clock, advance, { calls: 12, inHand: 12, callMs: 30 });
    expect(starts).toEqual([0, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 330]);
    expect(writes).toEqual(['restart 10', `restart ${spanOf(10, reachSpacing(1, 270))}`]);
    expect(late()).toBe(270);
  });

  it.each([
    { callMs: 5, raised: false },
    { callMs: 30, raised: true },
  ])(
    'a lease that keeps up with a dense interval never raises it ($callMs ms calls at 10 ms: $raised)',
    async ({ callMs, raised }) => {
      const { clock, advance } = steppedClock();
      const { dispatch, late } = recordingDispatch();
      const pacer = sharedPacer(dispatch, STORE, 10, clock);
      await calls(pacer, clock, advance, { calls: 12, inHand: 12, callMs });
      expect((late() as number) > lateness(10)).toBe(raised);
    },
  );

  it('takes the schedule’s lateness as its acquire read it, with no gap and no refused write', async () => {
    // Another lease's block of the reach ends 5 ms ahead; this fast lease's first block follows it at once.
    const setup = (knownLate?: number) => {
      const { clock, advance } = steppedClock();
      const recorded = recordingDispatch(T0 + 5, 500);
      const pacer = sharedPacer(
        recorded.dispatch,
        STORE,
        100,
        clock,
        knownLate === undefined ? {} : { knownLate },
      );
      return { ...recorded, pacer, clock, advance };
    };
    const known = setup(500);
    expect(await calls(known.pacer, known.clock, known.advance, { calls: 1, inHand: 1, callMs: 0 })).toEqual([
      5,
    ]);
    expect(known.writes).toEqual(['restart-refused', `advance ${reachSpacing(100, 500)}`]);
    // Not read: the standard lateness is refused, and the block takes the schedule's (still no gap).
    const unknown = setup();
    expect(
      await calls(unknown.pacer, unknown.clock, unknown.advance, { calls: 1, inHand: 1, callMs: 0 }),
    ).toEqual([5]);
    expect(unknown.writes).toEqual([
      'restart-refused',
      'advance-refused',
      `advance ${reachSpacing(100, 500)}`,
    ]);
    expect(unknown.late()).toBe(500);
  });

  it('lowers it after two reservations that found the store binding, its block the difference after the schedule', async () => {
    // A fast lease on a schedule that leads the clock by a second at the reach: its first two blocks take the
    // reach (one reservation deep is a fan-out, not a binding store); the third takes the standard 50 ms and
    // starts 450 ms after the schedule's end.
    const { clock, advance } = steppedClock();
    const { dispatch, writes, late } = recordingDispatch(T0 + 1_000, 500);
    const pacer = sharedPacer(dispatch, STORE, 100, clock, { knownLate: 500 });
    const starts = await calls(pacer, clock, advance, { calls: 3, inHand: 1, callMs: 0 });
    const reach = reachSpacing(100, 500);
    expect(starts).toEqual([1_000, Math.ceil(1_000 + reach), Math.ceil(1_000 + 2 * reach + 450)]);
    expect(writes).toEqual([
      'restart-refused',
      `advance ${reach}`,
      `advance ${reach}`,
      'advance-refused',
      'place 100',
    ]);
    expect(late()).toBe(lateness(100));
  });

  it('a lowering that loses its races takes the schedule’s lateness, never more (review: it took the reach)', async () => {
    // As "lowers it after two reservations…", but before each placement another lease reserves at 500 ms.
    const { clock, advance } = steppedClock();
    const { dispatch, writes, late, state } = recordingDispatch(T0 + 1_000, 500);
    const racing = {
      ...dispatch,
      placeTat: async (...args: Parameters<DispatchState['placeTat']>) => {
        await state.advanceTat(STORE, 100, 1, { ms: 500 });
        return dispatch.placeTat(...args);
      },
    } as DispatchState;
    const pacer = sharedPacer(racing, STORE, 100, clock, { knownLate: 500 });
    await calls(pacer, clock, advance, { calls: 3, inHand: 1, callMs: 0 });
    expect(writes.slice(3)).toEqual([
      'advance-refused',
      'place-refused',
      'advance-refused',
      'place-refused',
      'advance-refused',
      `advance ${reachSpacing(100, 500)}`,
    ]);
    expect(late()).toBe(500);
  });

  it('places a lowering at whole microseconds, where a lateness of half a paced interval has half ones', async () => {
    // 153.301 ms instants: the standard lateness 76.6505 ms, the gap from 500 ms 423.3495 ms. Unrounded, the
    // schedule's `tat` stopped surviving DynamoDB's decimal → double round trip after the next ADD (review).
    const { clock, advance } = steppedClock();
    const { dispatch, writes, placed } = recordingDispatch(T0 + 1_000, 500);
    const pacer = sharedPacer(dispatch, STORE, 153.301, clock, { knownLate: 500 });
    await calls(pacer, clock, advance, { calls: 3, inHand: 1, callMs: 0 });
    expect(writes.at(-1)).toBe('place 153.301');
    // As DynamoDB gets it (the number's shortest decimal): no digit past the microsecond.
    expect(String(placed[0]).split('.')[1]?.length ?? 0).toBeLessThanOrEqual(3);
  });

  it('takes a schedule written before lateness was kept as 100 ms: following it at 100 ms raises nothing', async () => {
    // 5/s (paced 205.002 ms, standard lateness 100 ms) on an old item leading the clock: one write, not refused
    // as a raise (it was twice, found in review).
    const { clock, advance } = steppedClock();
    const { dispatch, writes, state } = recordingDispatch();
    state.items.set(STORE, { storeId: STORE, tat: T0 + 1_000 } as never);
    const pacer = sharedPacer(dispatch, STORE, 205.002, clock, { knownLate: 100 });
    expect(await calls(pacer, clock, advance, { calls: 1, inHand: 1, callMs: 0 })).toEqual([1_000]);
    expect(writes).toEqual(['restart-refused', 'advance 205.002']);
  });

  it('raises it only where the schedule does not lead the clock: a binding store keeps the lateness it has', async () => {
    // The lease's first block lags (a restart at now) and it learns its pace; before its next, other leases
    // reserve 300 ms ahead at the standard lateness. Its restart is refused, and its block takes the standard
    // lateness at once (a raise there would be refused too: no write spent on it).
    const { clock, advance } = steppedClock();
    const { dispatch, writes, late, state } = recordingDispatch();
    const pacer = sharedPacer(dispatch, STORE, 1, clock);
    await calls(pacer, clock, advance, { calls: 3, inHand: 3, callMs: 30 });
    expect(writes).toEqual(['restart 3', 'restart 1']);
    const item = state.items.get(STORE);
    state.items.set(STORE, { ...item!, tat: T0 + 400, tatLate: 50 });
    writes.length = 0;
    expect(await pacer.acquire(T0 + 60_000, 17)).toBe(true);
    expect(writes).toEqual(['restart-refused', 'advance 2']);
    expect(late()).toBe(50);
  });

  it('a raise the schedule refuses (it leads the clock) takes the schedule’s lateness instead', async () => {
    // A lagging lease restarted at the lateness its messages need (270 ms), then drops that block mid-way (its
    // store's rate was lowered: 1 → 1.5 ms) while another lease has lowered the schedule to 50 ms, 300 ms ahead.
    // Its own block still lies ahead, so it advances at the 270 ms it knows, conditional on the schedule not
    // leading the clock: refused, the block takes the schedule's 50 ms (no gap).
    const { clock, advance } = steppedClock();
    const { dispatch, writes, late, state } = recordingDispatch();
    let spacing = 1;
    const pacer = sharedPacer(dispatch, STORE, () => spacing, clock);
    await calls(pacer, clock, advance, { calls: 3, inHand: 3, callMs: 30 });
    expect(await pacer.acquire(T0 + 60_000, 10)).toBe(true);
    expect(late()).toBe(270);
    const item = state.items.get(STORE);
    state.items.set(STORE, { ...item!, tat: T0 + 400, tatLate: 50 });
    writes.length = 0;
    spacing = 1.5;
    expect(await pacer.acquire(T0 + 60_000, 9)).toBe(true);
    expect(writes).toEqual(['advance-refused', 'advance 13.5']);
    expect(late()).toBe(50);
  });
});
