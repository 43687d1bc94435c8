import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../lambdas/core/ports.js';
import {
  BLOCK_RULES,
  lateness,
  RATE_WINDOW_MS,
  sharedPacer,
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
 * `consumers` leases of one store pacing on its shared schedule for RUN_MS, each waking up to the lateness late
 * (timer and write jitter within what the pacer allows), calling for `callMs` and asking for `inHand` instants:
 * the most calls that started within any 5 s window.
 */
const busiestWindow = async (opts: {
  interval: number;
  consumers: number;
  seed: number;
  callMs: number;
  inHand: number;
  rules: BlockRules;
  /** How late the n-th sleep wakes (1-based); by default one in three up to the whole lateness allowed. */
  late?: (n: number) => number;
}): Promise<number> => {
  const draw = rng(opts.seed);
  const allowed = lateness(opts.interval);
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
    (name: 'restartTat' | 'advanceTat' | 'returnTat') =>
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
  });
  const starts: number[] = [];
  const deadline = T0 + RUN_MS;
  const lease = async (): Promise<void> => {
    const pacer = sharedPacer(state, STORE, opts.interval, clock, undefined, undefined, opts.rules);
    while (await pacer.acquire(deadline, opts.inHand)) {
      starts.push(clock.now());
      if (opts.callMs > 0) await clock.sleep(opts.callMs);
    }
  };
  const leases = Array.from({ length: opts.consumers }, () => lease());
  await run(deadline + 1_000);
  await Promise.all(leases);
  starts.sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while ((starts[j] as number) <= (starts[i] as number) - RATE_WINDOW_MS) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
};

/** The contract's bound: rate × 5 s, plus the one call a lateness of half an interval always could add. */
const bound = (interval: number): number => Math.floor(RATE_WINDOW_MS / interval) + 1;

describe('the shared schedule keeps the rate over any 5 s window with calls up to the lateness late (property)', () => {
  const scenario = fc.record({
    interval: fc.constantFrom(1, 2, 5, 10, 20, 50, 100),
    consumers: fc.integer({ min: 2, max: 4 }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    callMs: fc.constantFrom(0, 0, 3, 20),
    inHand: fc.integer({ min: 1, max: 10 }),
  });

  it('never starts more than rate × 5 s + 1 calls within any 5 s (the floor stretched into the spacing)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await busiestWindow({ ...s, rules: BLOCK_RULES })).toBeLessThanOrEqual(bound(s.interval));
      }),
      { numRuns: 40 },
    );
  });

  it('is broken by the floor without the stretch (instants one interval apart): the property has teeth', async () => {
    // 1,000/s, three consumers calling back to back keep the schedule bound. The first lease's first sleep wakes
    // 49 ms late, and it makes the nine calls of its block then, with the calls on time at the instants after.
    const scenario = { interval: 1, consumers: 3, seed: 7, callMs: 0, inHand: 10 };
    const late = (n: number): number => (n === 1 ? lateness(1) - 1 : 0);
    const unstretched: BlockRules = { step: (_count, interval) => interval };
    expect(await busiestWindow({ ...scenario, late, rules: unstretched })).toBeGreaterThan(bound(1));
    expect(await busiestWindow({ ...scenario, late, rules: BLOCK_RULES })).toBeLessThanOrEqual(bound(1));
  });
});
