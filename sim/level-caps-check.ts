import { balanceLevels, CAP_DRAIN_MS } from '../lambdas/core/level-balance.js';
import {
  LEVEL_CAP_RULES,
  reservedWorkers,
  type LevelCapRules,
  type LevelCaps,
  type LevelLoad,
} from '../lambdas/core/level-caps.js';
import { STORE_PRIORITIES, type StorePriority } from '../lambdas/core/plans.js';
import type { LevelSources } from '../lambdas/core/ports.js';
import { workerTimeoutSeconds } from '../lambdas/core/timing.js';
import { levelConcurrency } from '../lib/priority-concurrency.js';
import { Rng } from './rng.js';
import { RecordingTelemetry } from '../lambdas/adapters/recording-telemetry.js';

/**
 * Store priority on AWS (issue #13), simulated: three SQS event sources feeding one worker function whose
 * reserved concurrency is `reservedWorkers(floors, true)`, and the reconciler's `balanceLevels` (the real code)
 * run every minute against them. Each event source starts invocations while its cap in force leaves room and
 * attentions wait. A cap set comes into force after the call's own time (up to 30 s) and Lambda's update lag
 * (up to a minute); each control-plane call may fail (2 %), a cap update now and then after it took effect
 * (1 %); the queue counts the reconciler reads are up to a minute old. Slices last 1–25 s, one in ten the
 * worker's whole timeout, and on three seeds in ten most of them do. Demand switches between idle, a trickle
 * and saturation per level, and every seed has a *lone* phase (one level saturating, the others idle)
 * followed by a *return* (all saturating).
 *
 * Invariants, checked every simulated second:
 * - L1 never throttled: an event source never finds the function's reservation full while its own cap leaves
 *   room (a throttled attention would come back only after 600 s).
 * - L2 floors: every level's cap in force is at least its floor.
 * - L3 unused share flows: at the end of the lone phase, the lone level runs all the floors (the pool, or more
 *   where Lambda's minimum of 2 rounds a floor up).
 * - L4 no starvation: a level with attentions waiting runs at least its floor.
 *
 * Broken variants: `no-loans` (L3), `lend-floors` (a lender's cap lowered to what it uses: L2, L4),
 * `no-drain-hold` (a lowered cap not held while its workers run out: L1), `reserve-floors` (the function
 * reserving the floors alone while the reconciler lends: L1). A hold of the worker timeout alone (no room for
 * the calls and the update lag) is not rejected (3,000 seeds): the reservation's slack covers what this model
 * generates; CAP_DRAIN_MS keeps the margin by argument (a bound must outlive every worker its cap let start).
 */

export const LEVEL_CAP_VARIANTS = [
  'loans',
  'no-loans',
  'lend-floors',
  'no-drain-hold',
  'reserve-floors',
] as const;
export type LevelCapVariant = (typeof LEVEL_CAP_VARIANTS)[number];

const RULES: Record<LevelCapVariant, LevelCapRules> = {
  loans: LEVEL_CAP_RULES,
  'no-loans': { ...LEVEL_CAP_RULES, lendable: () => 0 },
  'lend-floors': {
    ...LEVEL_CAP_RULES,
    cap: (floor, loan, load) => (load.waiting > 0 ? floor + loan : Math.max(2, Math.ceil(load.inFlight))),
  },
  'no-drain-hold': LEVEL_CAP_RULES,
  'reserve-floors': LEVEL_CAP_RULES,
};

/** The broken hold: none at all. */
const DRAIN_MS: Partial<Record<LevelCapVariant, number>> = { 'no-drain-hold': 0 };

type Demand = 'idle' | 'trickle' | 'saturate';

interface Invocation {
  level: StorePriority;
  endsAt: number;
}

export interface LevelCapsScenario {
  seed: number;
  pool: number;
  shares: Record<StorePriority, number>;
  /** Phases before the lone one: each level's demand, for how long (s). */
  phases: { demand: Record<StorePriority, Demand>; seconds: number }[];
  lone: StorePriority;
}

const SHARE_SETS: Record<StorePriority, number>[] = [
  { high: 50, normal: 30, low: 20 },
  { high: 60, normal: 30, low: 10 },
  { high: 34, normal: 33, low: 33 },
  { high: 70, normal: 20, low: 10 },
];
const DEMANDS: Demand[] = ['idle', 'trickle', 'saturate'];
/**
 * The lone phase lasts long enough for a run to see it, the caps lowered before it to drain (CAP_DRAIN_MS), and
 * a later run to make the loan — with room for a few runs that a control-plane failure ends early.
 */
const LONE_SECONDS = Math.ceil(CAP_DRAIN_MS / 1000) + 8 * 60;
const RETURN_SECONDS = 6 * 60;

export const levelCapsScenario = (seed: number): LevelCapsScenario => {
  const rng = new Rng(seed);
  const phases = Array.from({ length: rng.int(2, 6) }, () => ({
    demand: Object.fromEntries(STORE_PRIORITIES.map((level) => [level, rng.pick(DEMANDS)])) as Record<
      StorePriority,
      Demand
    >,
    seconds: rng.int(30, 400),
  }));
  return {
    seed,
    pool: rng.int(6, 80),
    shares: rng.pick(SHARE_SETS),
    phases,
    lone: rng.pick(STORE_PRIORITIES),
  };
};

export interface LevelCapsResult {
  seed: number;
  failures: string[];
  /** The lone level's workers at the end of the lone phase, and the floors' sum (the pool, or more for Lambda's 2). */
  lone: { running: number; floors: number };
  /** Most workers running at once, and the reservation. */
  peak: { running: number; reserved: number };
}

export const runLevelCapsScenario = async (
  scenario: LevelCapsScenario,
  variant: LevelCapVariant = 'loans',
): Promise<LevelCapsResult> => {
  const rng = new Rng(scenario.seed ^ 0x1e7e1);
  const floors: LevelCaps = levelConcurrency(scenario.pool, scenario.shares, 0);
  // The function's reservation: the floors and the largest loan — or, broken, the floors alone (a stack that
  // reserves the pool while the reconciler lends).
  const reserved = reservedWorkers(floors, variant !== 'reserve-floors');
  const floorSum = STORE_PRIORITIES.reduce((total, level) => total + floors[level], 0);
  /** On some seeds most slices last the worker's whole timeout: the longest a lowered cap's workers run on. */
  const longSlices = rng.chance(0.3);
  const failures: string[] = [];
  const fail = (message: string): void => {
    if (failures.length < 5) failures.push(message);
  };
  let now = 0;
  const waiting: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  const running: Invocation[] = [];
  const configured: Record<StorePriority, number> = { ...floors };
  const inForce: Record<StorePriority, number> = { ...floors };
  const pending: { level: StorePriority; cap: number; at: number }[] = [];
  /** Queue counts as SQS reports them: a snapshot up to a minute old (design-notes: they lag about a minute). */
  const history: {
    at: number;
    waiting: Record<StorePriority, number>;
    inFlight: Record<StorePriority, number>;
  }[] = [];
  const runningOf = (level: StorePriority): number => running.filter((i) => i.level === level).length;
  const flaky = (): void => {
    if (rng.chance(0.02)) throw new Error('simulated control-plane failure');
  };
  const sources: LevelSources = {
    load: async (level): Promise<LevelLoad> => {
      flaky();
      const lag = rng.int(0, 60) * 1000;
      const seen = [...history].reverse().find((h) => h.at <= now - lag) ?? history[0];
      return { waiting: seen?.waiting[level] ?? 0, inFlight: seen?.inFlight[level] ?? 0 };
    },
    cap: async (level) => {
      flaky();
      return configured[level];
    },
    setCap: async (level, cap) => {
      flaky();
      configured[level] = cap;
      // In force after the call's own time (its retries: up to 30 s) and Lambda's update lag (up to a minute).
      // Lambda applies a mapping's updates in order: a later one never comes into force before an earlier one.
      const after = Math.max(0, ...pending.filter((p) => p.level === level).map((p) => p.at));
      pending.push({ level, cap, at: Math.max(after, now + (rng.int(0, 30) + rng.int(0, 60)) * 1000) });
      // Now and then the call fails after it took effect.
      if (rng.chance(0.01)) throw new Error('simulated failure after the update');
    },
  };
  const stored = new Map<string, string>();
  const deps = {
    sources,
    state: {
      readCursor: async (id: string) => stored.get(id),
      writeCursor: async (id: string, cursor: string | undefined) => {
        if (cursor === undefined) stored.delete(id);
        else stored.set(id, cursor);
      },
    },
    floors,
    clock: { now: () => now, sleep: async () => undefined },
    telemetry: new RecordingTelemetry(),
    rules: RULES[variant],
    ...(DRAIN_MS[variant] === undefined ? {} : { drainMs: DRAIN_MS[variant] }),
  };

  const phases = [
    ...scenario.phases,
    {
      demand: Object.fromEntries(
        STORE_PRIORITIES.map((level) => [level, level === scenario.lone ? 'saturate' : 'idle']),
      ) as Record<StorePriority, Demand>,
      seconds: LONE_SECONDS,
    },
    {
      demand: { high: 'saturate', normal: 'saturate', low: 'saturate' } as Record<StorePriority, Demand>,
      seconds: RETURN_SECONDS,
    },
  ];
  const loneEnds = phases.slice(0, -1).reduce((t, p) => t + p.seconds, 0);
  const total = loneEnds + RETURN_SECONDS;
  const runOffset = rng.int(0, 59);
  const longest = workerTimeoutSeconds();
  let lone = { running: 0, floors: floorSum };
  let peak = 0;
  let phase = 0;
  let phaseEnds = phases[0]?.seconds ?? 0;
  const waitedSince: Record<StorePriority, number | undefined> = {
    high: undefined,
    normal: undefined,
    low: undefined,
  };

  for (let second = 0; second < total; second++) {
    now = second * 1000;
    while (second >= phaseEnds && phase < phases.length - 1) {
      phase++;
      phaseEnds += phases[phase]?.seconds ?? 0;
    }
    const demand = phases[phase]?.demand as Record<StorePriority, Demand>;
    // Work ends, caps set earlier come into force, attentions arrive.
    for (let i = running.length - 1; i >= 0; i--)
      if ((running[i] as Invocation).endsAt <= now) running.splice(i, 1);
    // In the order they were made (per level, in order of coming into force).
    for (const p of pending.filter((q) => q.at <= now)) inForce[p.level] = p.cap;
    pending.splice(0, pending.length, ...pending.filter((q) => q.at > now));
    for (const level of STORE_PRIORITIES) {
      const d = demand[level];
      if (d === 'saturate') waiting[level] = Math.max(waiting[level], 2 * reserved);
      else if (d === 'trickle')
        waiting[level] += rng.chance(0.5) ? rng.int(0, Math.max(1, Math.ceil(floors[level] / 8))) : 0;
      else waiting[level] = 0;
    }
    // The event sources start invocations (in a random order of levels).
    const order = [...STORE_PRIORITIES].sort(() => rng.next() - 0.5);
    for (const level of order) {
      while (waiting[level] > 0 && runningOf(level) < inForce[level]) {
        if (running.length >= reserved) {
          fail(
            `L1: at ${second} s the ${level} event source was throttled (${running.length} of ${reserved} reserved running; caps ${JSON.stringify(inForce)})`,
          );
          break;
        }
        waiting[level]--;
        const long = rng.chance(longSlices ? 0.6 : 0.1);
        const seconds = long ? rng.int(Math.max(20, longest - 10), longest) : rng.int(1, 25);
        running.push({ level, endsAt: now + seconds * 1000 });
      }
    }
    peak = Math.max(peak, running.length);
    for (const level of STORE_PRIORITIES) {
      if (inForce[level] < floors[level])
        fail(
          `L2: at ${second} s the ${level} cap in force is ${inForce[level]}, under its floor ${floors[level]}`,
        );
      waitedSince[level] = waiting[level] > 0 ? (waitedSince[level] ?? second) : undefined;
      const since = waitedSince[level];
      if (since !== undefined && second - since >= 1 && runningOf(level) < floors[level])
        fail(
          `L4: at ${second} s the ${level} level has attentions waiting and runs ${runningOf(level)}, under its floor ${floors[level]}`,
        );
    }
    history.push({
      at: now,
      waiting: { ...waiting },
      inFlight: Object.fromEntries(STORE_PRIORITIES.map((level) => [level, runningOf(level)])) as Record<
        StorePriority,
        number
      >,
    });
    if (history.length > 61) history.shift();
    if (second === loneEnds - 1) lone = { running: runningOf(scenario.lone), floors: floorSum };
    // The reconciler's run (one a minute); a failed call ends the run, as on AWS (the handler catches it).
    if (second % 60 === runOffset) await balanceLevels(deps).catch(() => undefined);
  }
  if (lone.running < floorSum)
    fail(
      `L3: the lone ${scenario.lone} level ran ${lone.running} workers at the end of its phase, under the floors' sum ${floorSum}`,
    );
  return { seed: scenario.seed, failures, lone, peak: { running: peak, reserved } };
};
