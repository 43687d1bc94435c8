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
 * attentions wait; a cap set takes effect after a lag (up to 20 s); each control-plane call may fail; the
 * queue counts the reconciler reads are up to a minute old. Demand switches between idle, a trickle and
 * saturation per level, and every seed has a *lone* phase (one level saturating, the others idle) followed by
 * a *return* (all saturating).
 *
 * Invariants, checked every simulated second:
 * - L1 never throttled: an event source never finds the function's reservation full while its own cap leaves
 *   room (a throttled attention would come back only after 600 s).
 * - L2 floors: every level's cap in force is at least its floor.
 * - L3 unused share flows: at the end of the lone phase, the lone level runs the whole pool.
 * - L4 no starvation: a level with attentions waiting runs at least its floor (once its event source had a
 *   second to start them).
 *
 * Broken variants: `no-loans` (L3), `lend-floors` (a lender's cap lowered to what it uses: L2, L4),
 * `no-drain-hold` (a lowered cap not held while its workers run out: L1).
 */

export const LEVEL_CAP_VARIANTS = ['loans', 'no-loans', 'lend-floors', 'no-drain-hold'] as const;
export type LevelCapVariant = (typeof LEVEL_CAP_VARIANTS)[number];

const RULES: Record<LevelCapVariant, LevelCapRules> = {
  loans: LEVEL_CAP_RULES,
  'no-loans': { ...LEVEL_CAP_RULES, lendable: () => 0 },
  'lend-floors': {
    ...LEVEL_CAP_RULES,
    cap: (floor, loan, load) => (load.waiting > 0 ? floor + loan : Math.max(2, Math.ceil(load.inFlight))),
  },
  'no-drain-hold': LEVEL_CAP_RULES,
};

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
  /** The lone level's workers at the end of the lone phase, and the pool. */
  lone: { running: number; pool: number };
  /** Most workers running at once, and the reservation. */
  peak: { running: number; reserved: number };
}

export const runLevelCapsScenario = async (
  scenario: LevelCapsScenario,
  variant: LevelCapVariant = 'loans',
): Promise<LevelCapsResult> => {
  const rng = new Rng(scenario.seed ^ 0x1e7e1);
  const floors: LevelCaps = levelConcurrency(scenario.pool, scenario.shares, 0);
  const reserved = reservedWorkers(floors, true);
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
      pending.push({ level, cap, at: now + rng.int(0, 20) * 1000 });
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
    ...(variant === 'no-drain-hold' ? { drainMs: 0 } : {}),
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
  let lone = { running: 0, pool: scenario.pool };
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
    for (let i = pending.length - 1; i >= 0; i--) {
      const p = pending[i] as (typeof pending)[number];
      if (p.at <= now) {
        inForce[p.level] = p.cap;
        pending.splice(i, 1);
      }
    }
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
        const seconds = rng.chance(0.1) ? rng.int(20, longest) : rng.int(1, 25);
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
    if (second === loneEnds - 1) lone = { running: runningOf(scenario.lone), pool: scenario.pool };
    // The reconciler's run (one a minute); a failed call ends the run, as on AWS (the handler catches it).
    if (second % 60 === runOffset) await balanceLevels(deps).catch(() => undefined);
  }
  if (lone.running < scenario.pool)
    fail(
      `L3: the lone ${scenario.lone} level ran ${lone.running} workers at the end of its phase, under the pool of ${scenario.pool}`,
    );
  return { seed: scenario.seed, failures, lone, peak: { running: peak, reserved } };
};
