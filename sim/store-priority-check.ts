import { STORE_PRIORITIES, type StorePriority } from '../lambdas/core/plans.js';
import { DEFAULT_PRIORITY_SHARES, type PriorityShares } from '../lambdas/core/priority-shares.js';
import {
  PriorityPool,
  type PoolArrival,
  type PoolChoice,
  type PoolConfig,
  type PoolStore,
} from './priority-pool.js';
import { Rng } from './rng.js';

/**
 * The deterministic simulation of store priority (sim/priority-pool.ts), one scenario per seed, with the
 * invariants it must keep:
 *
 *   P1 concurrency: never more slices at once than workers, nor than a store's maxConsumers;
 *   P2 work-conserving: while a worker is free, no attention waits (so with no saturation priority
 *      changes nothing: every signal is taken at once);
 *   P3 no level starves: while saturated, a level with waiting attentions starts a slice within a bound
 *      derived from its share (`starvationBoundMs`);
 *   P5 headroom: the lower levels never hold more than all but the pool's high headroom of workers, so a
 *      high attention finds a free worker at once while the others saturate the pool;
 *   P4 floors: over the time the pool was saturated and every level wanted at least its floor (attentions
 *      waiting, or its floor's worth of slices running), each level's share of worker time is at least
 *      FLOOR_TOLERANCE × its documented share (by the level each store had when it signalled).
 *
 * Broken variants (the `choice` of the pool) it must reject: `strict` (always the highest level with work:
 * low starves), `single-queue` (the level is dropped from the signal: one FIFO for all, shares follow
 * demand), `blind` (a worker draws a level by share and waits when it is empty: not work-conserving),
 * `headroom-ignored` (the lower levels may take the workers kept for high: P5).
 */
export const FLOOR_TOLERANCE = 0.75;
/** Floors are judged only over at least this many longest slices of contended time. */
const MIN_CONTENDED_SLICES = 30;

export interface PriorityScenario {
  seed: number;
  mode: 'flood' | 'heavy';
  config: Omit<PoolConfig, 'choice'>;
  stores: PoolStore[];
  arrivals: PoolArrival[];
  /** The longest one slice can hold a worker (invoke + slice + empty poll). */
  longestSliceMs: number;
}

export interface PriorityRunResult {
  seed: number;
  failures: string[];
  /** Worker-time share per level over the contended time (all levels waiting), in percent. */
  contendedShares: Record<StorePriority, number> | undefined;
  contendedMs: number;
  slices: number;
}

const SHARE_SETS: PriorityShares[] = [
  DEFAULT_PRIORITY_SHARES,
  { high: 60, normal: 30, low: 10 },
  { high: 40, normal: 40, low: 20 },
  { high: 70, normal: 20, low: 10 },
];

export const priorityScenario = (seed: number): PriorityScenario => {
  const rng = new Rng(seed ^ 0x9e1);
  const workers = rng.int(2, 6);
  const shares = rng.pick(SHARE_SETS);
  const mode = rng.chance(0.5) ? 'heavy' : 'flood';
  const stores: PoolStore[] = [];
  const arrivals: PoolArrival[] = [];
  const callMs = new Map<string, number>();
  const add = (priority: StorePriority, maxConsumers: number, tasksAt: [number, number][]): void => {
    const storeId = `${priority[0]}${stores.length}`;
    stores.push({
      storeId,
      priority,
      maxConsumers,
      maxMessagesPerSlice: rng.int(3, 20),
      maxSliceMs: rng.int(1, 5) * 1000,
    });
    callMs.set(storeId, rng.int(20, 300));
    for (const [at, tasks] of tasksAt) arrivals.push({ at, storeId, tasks });
  };
  if (mode === 'heavy') {
    // Every level keeps the pool busy: high alone has more slots than there are workers.
    // Every level keeps the pool busy: each has more slots than there are workers.
    for (let i = 0; i < workers; i++) add('high', 2, [[rng.int(0, 5_000), rng.int(1_000, 3_000)]]);
    for (let i = 0; i < workers; i++) add('normal', 2, [[rng.int(0, 5_000), rng.int(1_000, 3_000)]]);
    for (let i = rng.int(workers, 3 * workers); i > 0; i--)
      add('low', 1, [[rng.int(0, 5_000), rng.int(300, 1_000)]]);
  } else {
    // A flood of single-task low stores while a few high stores trickle.
    for (let i = rng.int(1, 3); i > 0; i--) {
      const trickle: [number, number][] = [];
      for (let at = rng.int(0, 3_000); at < 300_000; at += rng.int(2_000, 10_000))
        trickle.push([at, rng.int(1, 3)]);
      add('high', 1, trickle);
    }
    for (let i = rng.int(0, 4); i > 0; i--) add('normal', 3, [[rng.int(0, 30_000), rng.int(20, 200)]]);
    for (let i = rng.int(100, 400); i > 0; i--) add('low', 1, [[rng.int(0, 60_000), 1]]);
  }
  const reprioritize = rng.chance(0.3)
    ? [
        {
          at: rng.int(10_000, 60_000),
          storeId: rng.pick(stores).storeId,
          priority: rng.pick(STORE_PRIORITIES),
        },
      ]
    : [];
  const invokeMs = 40;
  const emptyPollMs = 1_000;
  const longestSliceMs = invokeMs + Math.max(...stores.map((s) => s.maxSliceMs)) + emptyPollMs;
  // Half the pools of three workers or more keep one for high (drawn last: the draws above stay as they were).
  const highHeadroom = workers >= 3 && rng.chance(0.5) ? 1 : 0;
  const random = new Rng(seed ^ 0xb1d);
  return {
    seed,
    mode,
    config: {
      workers,
      shares,
      highHeadroom,
      invokeMs,
      emptyPollMs,
      callMs: (storeId) => callMs.get(storeId) ?? 100,
      reprioritize,
      random: () => random.next(),
    },
    stores,
    arrivals: arrivals.sort((a, b) => a.at - b.at),
    longestSliceMs,
  };
};

/**
 * How long, while saturated, a level with waiting work may go without starting a slice. The picker charges
 * each slice's worker time divided by its level's share: a waiting level is behind the others by at most
 * one of its own slices, which the others catch up on in about (100 − share) / share of its slices' worker
 * time, spread over the pool; then it waits for the next free worker. Doubled for estimate error.
 */
export const starvationBoundMs = (share: number, workers: number, longestSliceMs: number): number =>
  2 * longestSliceMs * ((2 + (100 - share) / share) / workers + 1);

export const runPriorityScenario = (scenario: PriorityScenario, choice: PoolChoice): PriorityRunResult => {
  const { config, stores, longestSliceMs } = scenario;
  const failures: string[] = [];
  const fail = (message: string) => {
    if (failures.length < 5) failures.push(message);
  };
  const contended: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  let contendedMs = 0;
  let last = 0;
  let lastServing: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  const wants: Record<StorePriority, boolean> = { high: false, normal: false, low: false };
  let lastBusy = 0;
  const waitingSince: Record<StorePriority, number | undefined> = {
    high: undefined,
    normal: undefined,
    low: undefined,
  };
  let slices = 0;
  const headroom = config.highHeadroom ?? 0;
  /** Slices taken from the normal and low queues now. */
  let lower = 0;
  const pool = new PriorityPool({ ...config, choice }, stores, scenario.arrivals, {
    leases: (storeId, live, max) => {
      if (live > max) fail(`P1: ${storeId} has ${live} leases (max ${max})`);
    },
    started: (_storeId, level, _storeLevel, now) => {
      waitingSince[level] = undefined;
      slices++;
      if (level !== 'high') lower++;
      if (lower > config.workers - headroom)
        fail(
          `P5: at ${(now / 1000).toFixed(1)} s the lower levels hold ${lower} of ${config.workers} workers (headroom ${headroom} kept for high)`,
        );
    },
    slice: (record) => {
      if (record.level !== 'high') lower--;
    },
    settled: (now, busy, waiting, asked, serving) => {
      // Time since the last settle ran with the previous state: contended if the pool was saturated and
      // every level wanted at least its floor (attentions waiting, or its floor's worth of slices running).
      const dt = now - last;
      if (dt > 0 && lastBusy >= config.workers - headroom && STORE_PRIORITIES.every((l) => wants[l])) {
        contendedMs += dt;
        for (const level of STORE_PRIORITIES) contended[level] += lastServing[level] * dt;
      }
      last = now;
      lastServing = { ...serving };
      lastBusy = busy;
      for (const level of STORE_PRIORITIES)
        wants[level] = asked[level] > 0 || serving[level] >= (config.shares[level] * config.workers) / 100;
      if (busy > config.workers) fail(`P1: ${busy} slices at once with ${config.workers} workers`);
      const waitingTotal = waiting.high + waiting.normal + waiting.low;
      // Work-conserving, but for the headroom: more free workers than it, or any while high waits.
      const free = config.workers - busy;
      if ((free > headroom && waitingTotal > 0) || (free > 0 && waiting.high > 0))
        fail(
          `P2: at ${(now / 1000).toFixed(1)} s ${free} worker(s) free (headroom ${headroom}) while ${waitingTotal} attentions wait (not work-conserving)`,
        );
      for (const level of STORE_PRIORITIES) {
        if (waiting[level] === 0) {
          waitingSince[level] = undefined;
          continue;
        }
        waitingSince[level] ??= now;
        const waited = now - (waitingSince[level] as number);
        // A lower level is served by all but the headroom's workers.
        const open = level === 'high' ? config.workers : config.workers - headroom;
        const bound = starvationBoundMs(config.shares[level], open, longestSliceMs);
        if (waited > bound)
          fail(
            `P3: the ${level} level waited ${(waited / 1000).toFixed(1)} s for a slice (bound ${(bound / 1000).toFixed(1)} s) at ${(now / 1000).toFixed(1)} s`,
          );
      }
    },
  });
  pool.run(3_600_000);
  let contendedShares: Record<StorePriority, number> | undefined;
  if (contendedMs >= MIN_CONTENDED_SLICES * longestSliceMs) {
    const total = contended.high + contended.normal + contended.low;
    contendedShares = {
      high: (100 * contended.high) / total,
      normal: (100 * contended.normal) / total,
      low: (100 * contended.low) / total,
    };
    for (const level of STORE_PRIORITIES) {
      const floor = FLOOR_TOLERANCE * config.shares[level];
      if (contendedShares[level] < floor)
        fail(
          `P4: the ${level} level got ${contendedShares[level].toFixed(1)}% of worker time while every level waited (floor ${config.shares[level]}%, × ${FLOOR_TOLERANCE} = ${floor.toFixed(1)}%)`,
        );
    }
  }
  return { seed: scenario.seed, failures, contendedShares, contendedMs, slices };
};
