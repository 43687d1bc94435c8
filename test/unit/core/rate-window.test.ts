import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../lambdas/core/ports.js';
import {
  ARRIVAL_JITTER_MS,
  BLOCK_RULES,
  intervalMs,
  lateness,
  LATENESS_CEILING_MS,
  LATENESS_REACH_MS,
  localPacer,
  pacedInterval,
  RATE_WINDOW_MS,
  reachSpacing,
  sharedPacer,
  spacingOf,
  windowCalls,
  type BlockRules,
} from '../../../lambdas/core/rate.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { T0 } from '../support/fixtures.js';

const STORE = 'store-1';
const RUN_MS = 12_000;

/** Virtual time shared by several leases: sleepers wake in time order, each `late(ms)` after what they asked. */
const virtualClock = (late: () => number) => {
  let now = T0;
  let seq = 0;
  const timers: { at: number; seq: number; wake: () => void }[] = [];
  const clock: Clock = {
    now: () => now,
    sleep: (ms) =>
      new Promise((wake) => timers.push({ at: now + Math.max(0, ms) + late(), seq: seq++, wake })),
  };
  const run = async (until: number): Promise<void> => {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = timers.shift();
      if (next === undefined || next.at > until) return;
      now = next.at;
      next.wake();
    }
  };
  return { clock, run };
};

/** A small deterministic generator for the wake-ups' lateness and the calls' lengths. */
const rng = (seed: number) => {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
};

/**
 * `consumers` leases of one store pacing at `paced` (the interval handed to the pacer) for RUN_MS — a shared
 * schedule for two or more, else one local pacer per lease, each lease a `leaseMs` slice carrying its pace to the
 * next — each waking up to the lateness late (timer and write jitter within what the pacer allows), calling for
 * `callMs` and asking for `inHand` instants, looking at its store at the instant now and then (a read of up to
 * 150 ms); each call arriving 0–`ARRIVAL_JITTER_MS` after it started: the most calls that arrived within any
 * closed 5 s window.
 */
const busiestWindow = async (opts: {
  paced: number;
  consumers: number;
  seed: number;
  /**
   * Each call's length; per consumer where a list (consumers slower than the interval take the reach); drawn for
   * each call where a range (a marketplace whose answers vary).
   */
  callMs: number | number[] | { from: number; to: number };
  /** When each consumer (of a shared schedule) starts, in ms into the run (all at once by default). */
  startMs?: number[];
  inHand: number;
  rules?: BlockRules;
  leaseMs?: number;
  /** How late the n-th sleep wakes (1-based); by default one in three up to the whole lateness allowed. */
  late?: (n: number) => number;
  /** How long after its start a call that started `at` ms into the run arrives; by default often 0 or the whole jitter. */
  jitter?: (at: number) => number;
}): Promise<number> => {
  const draw = rng(opts.seed);
  const allowed = lateness(opts.paced);
  let sleeps = 0;
  const { clock, run } = virtualClock(() => {
    sleeps++;
    if (opts.late !== undefined) return opts.late(sleeps);
    // Mostly on time; one wake-up in four late within the lateness, one in twenty past it (forfeits).
    const roll = draw();
    if (roll < 0.05) return allowed + Math.floor(draw() * allowed);
    return roll < 0.3 ? Math.floor(draw() * allowed) : 0;
  });
  const memory = new MemoryDispatchState();
  memory.items.set(STORE, { storeId: STORE } as never);
  // Each schedule write takes 0–5 ms (half before it applies, half after), unless the scenario says none.
  const slowly =
    (name: 'restartTat' | 'advanceTat' | 'returnTat' | 'placeTat') =>
    async (...args: unknown[]): Promise<unknown> => {
      const ms = opts.late === undefined ? Math.floor(draw() * 6) : 0;
      if (ms > 0) await clock.sleep(ms / 2);
      const result = await (memory[name] as (...a: unknown[]) => Promise<unknown>).apply(memory, args);
      if (ms > 0) await clock.sleep(ms / 2);
      return result;
    };
  const state = Object.assign(Object.create(memory) as MemoryDispatchState, {
    restartTat: slowly('restartTat'),
    advanceTat: slowly('advanceTat'),
    returnTat: slowly('returnTat'),
    placeTat: slowly('placeTat'),
  });
  const arrivals: number[] = [];
  const arrive = (): void => {
    if (opts.jitter !== undefined) {
      arrivals.push(clock.now() + opts.jitter(clock.now() - T0));
      return;
    }
    const roll = draw();
    const jitter = roll < 0.3 ? ARRIVAL_JITTER_MS : roll < 0.6 ? 0 : draw() * ARRIVAL_JITTER_MS;
    arrivals.push(clock.now() + jitter);
  };
  const end = T0 + RUN_MS;
  // The slice's look at the instant (a re-read of its store): one acquire in four reads for 0–150 ms, past the
  // lateness now and then, unless the scenario says none.
  const look = async (): Promise<boolean> => {
    if (opts.late !== undefined || draw() >= 0.25) return true;
    await clock.sleep(Math.floor(draw() * 150));
    return true;
  };
  const callMsOf = (consumer: number): number => {
    const { callMs } = opts;
    if (typeof callMs === 'number') return callMs;
    if (Array.isArray(callMs)) return callMs[consumer % callMs.length] as number;
    return callMs.from + Math.floor(draw() * (callMs.to - callMs.from + 1));
  };
  const shared = async (consumer: number): Promise<void> => {
    const startMs = opts.startMs?.[consumer] ?? 0;
    if (startMs > 0) await clock.sleep(startMs);
    // One lease after another, each `leaseMs` long (its slice deadline: a refused instant's block goes back), each
    // new one starting from the schedule's lateness as its acquire read it.
    while (clock.now() < end) {
      const deadline = Math.min(end, clock.now() + (opts.leaseMs ?? RUN_MS));
      const knownLate = memory.items.get(STORE)?.tatLate;
      const pacer = sharedPacer(state, STORE, opts.paced, clock, {
        rules: opts.rules ?? BLOCK_RULES,
        consumers: opts.consumers,
        ...(knownLate === undefined ? {} : { knownLate }),
      });
      while (await pacer.acquire(deadline, opts.inHand, look)) {
        arrive();
        const callMs = callMsOf(consumer);
        if (callMs > 0) await clock.sleep(callMs);
      }
      await clock.sleep(Math.max(0, deadline - clock.now()));
    }
  };
  const local = async (): Promise<void> => {
    let carry = T0;
    while (clock.now() < end) {
      const pacer = localPacer(opts.paced, carry, clock);
      const deadline = Math.min(end, clock.now() + (opts.leaseMs ?? RUN_MS));
      while (await pacer.acquire(deadline, opts.inHand, look)) {
        arrive();
        if (callMsOf(0) > 0) await clock.sleep(callMsOf(0));
      }
      carry = pacer.carry;
      await clock.sleep(Math.max(0, deadline - clock.now()));
    }
  };
  const leases =
    opts.consumers === 1 ? [local()] : Array.from({ length: opts.consumers }, (_, i) => shared(i));
  await run(end + 1_000);
  await Promise.all(leases);
  arrivals.sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while ((arrivals[i] as number) - (arrivals[j] as number) > RATE_WINDOW_MS) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
};

const RATES = [1000, 500, 333, 100, 50, 10, 7, 5, 4, 3, 2, 1];

describe('windowCalls: the calls a 5 s window may hold at a policy rate', () => {
  it('is rate × 5 s for every rate in steps of 0.2/s up to 1,000/s, whatever the division rounds to', () => {
    const off: number[] = [];
    for (let fifths = 1; fifths <= 5_000; fifths++)
      if (windowCalls(intervalMs(fifths / 5)) !== fifths) off.push(fifths / 5);
    expect(off).toEqual([]);
  });

  it.each([
    { rate: 2.9999, calls: 14 },
    { rate: 2.99999999, calls: 14 },
    { rate: 3.0001, calls: 15 },
    { rate: 0.1, calls: 1 },
  ])('is the whole number at or below rate × 5 s ($rate/s: $calls)', ({ rate, calls }) => {
    expect(windowCalls(intervalMs(rate))).toBe(calls);
  });
});

describe('a store keeps its rate in every closed 5 s window of arrivals, calls up to the lateness late (property)', () => {
  const scenario = fc.record({
    rate: fc.constantFrom(...RATES),
    consumers: fc.integer({ min: 1, max: 4 }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    callMs: fc.constantFrom(0, 0, 3, 20),
    inHand: fc.integer({ min: 1, max: 10 }),
    leaseMs: fc.constantFrom(700, 2_300, RUN_MS),
  });

  it('never has more than rate × 5 s calls arrive within any 5 s window (the paced interval)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const interval = intervalMs(s.rate);
        const paced = pacedInterval(interval, s.consumers > 1);
        expect(await busiestWindow({ ...s, paced })).toBeLessThanOrEqual(windowCalls(interval));
      }),
      { numRuns: 60 },
    );
  });

  it('is broken by pacing at the rate’s own interval: the property has teeth', async () => {
    // 2/s on one consumer, calls 500 ms apart: the first arrives 50 ms after it started, the others at once, so
    // eleven arrive within 4,950 ms. Paced 505.101 ms apart, the eleventh arrives 5,001 ms after the first.
    const single = { consumers: 1, seed: 7, callMs: 0, inHand: 1, late: () => 0 };
    const firstLate = (at: number): number => (at === 0 ? ARRIVAL_JITTER_MS : 0);
    expect(await busiestWindow({ ...single, paced: 500, jitter: firstLate })).toBe(11);
    const paced = pacedInterval(500, false);
    expect(await busiestWindow({ ...single, paced, jitter: firstLate })).toBe(10);
    // The same on a shared schedule of three: the first call also wakes the whole lateness late.
    const shared = { consumers: 3, seed: 7, callMs: 0, inHand: 10 };
    const lateFirst = (n: number): number => (n === 1 ? LATENESS_CEILING_MS : 0);
    expect(
      await busiestWindow({ ...shared, paced: 500, late: lateFirst, jitter: firstLate }),
    ).toBeGreaterThan(10);
    const sharedPaced = pacedInterval(500, true);
    expect(await busiestWindow({ ...shared, paced: sharedPaced, late: lateFirst, jitter: firstLate })).toBe(
      10,
    );
  });

  it('is broken by a shared schedule paced as one consumer (no room for the lateness)', async () => {
    // 1,000/s, three consumers calling back to back keep the schedule bound. The first lease's first sleep wakes
    // 49 ms late, and it makes the nine calls of its block then; every call of the first 60 ms arrives the whole
    // jitter after it started, the calls after them at once.
    const scenario = { consumers: 3, seed: 7, callMs: 0, inHand: 10 };
    const late = (n: number): number => (n === 1 ? lateness(1) - 1 : 0);
    const jitter = (at: number): number => (at < 60 ? ARRIVAL_JITTER_MS : 0);
    const local = pacedInterval(1, false);
    expect(await busiestWindow({ ...scenario, late, jitter, paced: local })).toBeGreaterThan(windowCalls(1));
    const shared = pacedInterval(1, true);
    expect(await busiestWindow({ ...scenario, late, jitter, paced: shared })).toBeLessThanOrEqual(
      windowCalls(1),
    );
  });
});

describe('a store its leases can bind runs at its rate (session 26: blocks sized for the lease’s pace)', () => {
  // Calls on time and arriving at once, one lease each for the whole run: what is measured is what the blocks
  // forfeit. A block sized for the lease's last cycle alone, at the lateness's very edge, lost its last instant
  // whenever the next call ran a millisecond longer: 59 % of the rate for the first row, 71–81 % for the ranges.
  // Sized a millisecond short of the edge but for the last cycle alone, the ranges reach 73–83 %; for the slower
  // of the last two (PACE_CYCLES), 89–92 % (the slowest of four reached 98 % here, and cost the adaptive-rate
  // model three points of throughput: ARCHITECTURE "Sized for the pace").
  it.each([
    { rate: 100, consumers: 10, callMs: 60, calls: '60', least: 0.95 },
    { rate: 100, consumers: 10, callMs: { from: 30, to: 90 }, calls: '30–90', least: 0.88 },
    { rate: 50, consumers: 4, callMs: { from: 20, to: 60 }, calls: '20–60', least: 0.88 },
    { rate: 20, consumers: 3, callMs: { from: 50, to: 150 }, calls: '50–150', least: 0.88 },
  ])(
    '$rate/s with $consumers leases of $calls ms calls: ≥ $least of its rate in the busiest 5 s',
    async (row) => {
      const interval = intervalMs(row.rate);
      const most = await busiestWindow({
        ...row,
        paced: pacedInterval(interval, true),
        seed: 7,
        inHand: 10,
        late: () => 0,
        jitter: () => 0,
      });
      expect(most).toBeLessThanOrEqual(windowCalls(interval));
      expect(most).toBeGreaterThanOrEqual(row.least * row.rate * 5);
    },
  );
});

describe('a store whose blocks take different lateness keeps its rate (issue #11: the reach, property)', () => {
  // Leases of different speeds on one schedule, joining at different times: a lease slower than the interval
  // takes the reach while the schedule lags (blocks of the messages in hand), a fast one that waits for its
  // blocks lowers it again after the gap, others take the schedule's lateness as they find it.
  const scenario = fc.record({
    rate: fc.constantFrom(1000, 500, 200, 100, 50, 20),
    callMs: fc.array(fc.constantFrom(0, 3, 10, 30, 60, 150, 400), { minLength: 2, maxLength: 4 }),
    startMs: fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 4, maxLength: 4 }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    inHand: fc.integer({ min: 1, max: 10 }),
    leaseMs: fc.constantFrom(700, 2_300, RUN_MS),
  });

  it('never has more than rate × 5 s calls arrive within any 5 s window', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const interval = intervalMs(s.rate);
        const paced = pacedInterval(interval, true);
        const consumers = s.callMs.length;
        expect(await busiestWindow({ ...s, consumers, paced })).toBeLessThanOrEqual(windowCalls(interval));
      }),
      { numRuns: 60 },
    );
  });

  // 50/s: a lease of 150 ms calls alone takes the reach (blocks of three instants, up to 300 ms late); two fast
  // leases join at 1 s, wait for their blocks and lower the schedule's lateness. Calls on time, arriving at once.
  const joined = {
    rate: 50,
    consumers: 3,
    seed: 1,
    callMs: [150, 0, 0],
    startMs: [0, 1_000, 1_000],
    inHand: 10,
    late: () => 0,
    jitter: () => 0,
    paced: pacedInterval(intervalMs(50), true),
  };

  it('keeps the bound where a slow lease takes the reach and fast ones join', async () => {
    expect(await busiestWindow(joined)).toBeLessThanOrEqual(250);
  });

  it('spaces a block for its own lateness: n instants exceed the window, the jitter and the lateness', () => {
    const off: string[] = [];
    for (const rate of [1000, 500, 333, 200, 100, 50, 20, 10, 5, 2, 1]) {
      const n = windowCalls(intervalMs(rate));
      const paced = pacedInterval(intervalMs(rate), true);
      for (const late of [lateness(paced), 100, 180, 270, LATENESS_REACH_MS]) {
        const step = reachSpacing(paced, late);
        if (!(n * step > RATE_WINDOW_MS + ARRIVAL_JITTER_MS + late)) off.push(`${rate}/s at ${late} ms`);
      }
      // The standard spacing alone does not pay for the reach: the stretch is needed.
      if (rate >= 2 && n * spacingOf(paced) > RATE_WINDOW_MS + ARRIVAL_JITTER_MS + LATENESS_REACH_MS)
        off.push(`${rate}/s: the standard spacing already pays for the reach`);
    }
    expect(off).toEqual([]);
  });
});

/**
 * The safety argument itself, against the worst arrival times rather than a run's: blocks of mixed lateness,
 * each spaced by `step` for its own lateness and placed by `gap` after the one before (as `sharedPacer` places
 * them: an advance right after, a lowering the gap after, a restart after idle time), where every call may
 * arrive anywhere from its instant to its lateness and the jitter after it. The busiest closed 5 s window any
 * choice of arrivals can fill: an instant can land in [a, a + W] when t ≤ a + W and t + L + J ≥ a.
 */
const worstWindow = (
  rate: number,
  blocks: { late: number; count: number; idle: number }[],
  rules: BlockRules = BLOCK_RULES,
): number => {
  const paced = pacedInterval(intervalMs(rate), true);
  const starts: number[] = [];
  const ends: number[] = [];
  let tat = 0;
  let last: number | undefined;
  for (const block of blocks) {
    const late = Math.max(lateness(paced), block.late);
    const step = rules.step(block.count, paced, late);
    const first = tat + (last === undefined ? 0 : rules.gap(last, late)) + block.idle;
    for (let j = 0; j < block.count; j++) {
      starts.push(first + j * step);
      ends.push(first + j * step + late + ARRIVAL_JITTER_MS);
    }
    tat = first + block.count * step;
    last = late;
  }
  starts.sort((x, y) => x - y);
  ends.sort((x, y) => x - y);
  /** How many of `sorted` are at most `v` (`strict`: under it). */
  const count = (sorted: number[], v: number, strict = false): number => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const x = sorted[mid] as number;
      if (strict ? x < v : x <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // The busiest window starts at some instant or at some instant's latest arrival. Those that can land in it:
  // instants at or before its end, less those whose latest arrival is before its start (a subset of them).
  let most = 0;
  for (const a of [...ends, ...starts])
    most = Math.max(most, count(starts, a + RATE_WINDOW_MS) - count(ends, a, true));
  return most;
};

describe('blocks of mixed lateness against the worst arrival times (the safety argument, property)', () => {
  const lates = [0, 100, 180, 270, 500, 1_000];
  const block = fc.record({
    late: fc.constantFrom(...lates),
    count: fc.integer({ min: 1, max: 10 }),
    idle: fc.constantFrom(0, 0, 0, 0, 37, 400),
  });
  const scenario = fc.record({
    rate: fc.constantFrom(50, 20, 10, 5, 2),
    blocks: fc.array(block, { minLength: 1, maxLength: 60 }),
  });

  it('no window holds more than rate × 5 s calls, however the calls arrive within their lateness', () => {
    fc.assert(
      fc.property(scenario, ({ rate, blocks }) => worstWindow(rate, blocks) <= windowCalls(intervalMs(rate))),
      { numRuns: 300 },
    );
  });

  it('is broken by a lowering without its gap', () => {
    const broken = { ...BLOCK_RULES, gap: () => 0 };
    const result = fc.check(
      fc.property(
        scenario,
        ({ rate, blocks }) => worstWindow(rate, blocks, broken) <= windowCalls(intervalMs(rate)),
      ),
      { numRuns: 300, seed: 25 },
    );
    expect(result.failed).toBe(true);
  });

  it('is broken by a block spaced for the standard lateness only', () => {
    const broken = { ...BLOCK_RULES, step: (_count: number, interval: number) => spacingOf(interval) };
    const result = fc.check(
      fc.property(
        scenario,
        ({ rate, blocks }) => worstWindow(rate, blocks, broken) <= windowCalls(intervalMs(rate)),
      ),
      { numRuns: 300, seed: 25 },
    );
    expect(result.failed).toBe(true);
  });
});
