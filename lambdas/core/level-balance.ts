import { z } from 'zod';
import {
  LEVEL_CAP_RULES,
  NO_LOAN_RULES,
  planLevelCaps,
  reservedWorkers,
  type LevelCapRules,
  type LevelCaps,
  type LevelLoad,
} from './level-caps.js';
import { LEVEL_CAPS_STATE_ID, MetricNames } from './names.js';
import { STORE_PRIORITIES, type StorePriority } from './plans.js';
import type { Clock, DispatchState, LevelSources, Telemetry } from './ports.js';
import { workerTimeoutSeconds } from './timing.js';

/**
 * How long from a run's start a cap it lowers still bounds its level's workers: the lowering call goes out
 * after the run's reads and may take its SDK retries (30 s allowed), Lambda applies a mapping's update within
 * seconds (a minute allowed), and invocations the old cap let start run out within the worker's timeout.
 */
export const CAP_DRAIN_MS = workerTimeoutSeconds() * 1000 + 60_000 + 30_000;

const LevelCapsSchema = z.object({ high: z.number(), normal: z.number(), low: z.number() });
/**
 * The state between runs: the caps lowered in the last CAP_DRAIN_MS (each a bound on its level's workers until
 * `until`), the caps the last run left, and after a state that could not be read, a time before which nothing
 * is raised (the caps it held are unknown: waiting out CAP_DRAIN_MS outlives them all).
 */
const StateSchema = z.object({
  held: z.array(z.object({ level: z.enum(STORE_PRIORITIES), cap: z.number(), until: z.number() })),
  caps: LevelCapsSchema.optional(),
  frozenUntil: z.number().optional(),
});
type State = z.infer<typeof StateSchema>;

export interface LevelBalanceDeps {
  sources: LevelSources;
  /** Where the caps lowered in the last CAP_DRAIN_MS are kept between runs (one item). */
  state: Pick<DispatchState, 'readCursor' | 'writeCursor'>;
  floors: LevelCaps;
  clock: Clock;
  telemetry: Telemetry;
  /**
   * Whether loans are on (the default). Off, the function reserves the floors alone: a run only lowers caps a
   * run before the switch raised, back to the floors.
   */
  loans?: boolean;
  rules?: LevelCapRules;
  /** How long a lowered cap is held (CAP_DRAIN_MS; the simulation's broken `no-drain-hold` sets 0). */
  drainMs?: number;
}

export interface LevelBalanceReport {
  loads: Record<StorePriority, LevelLoad>;
  /** What the loads called for. */
  planned: LevelCaps;
  /** What the event sources have now: the plan, or less where a lowered cap's workers may still run. */
  caps: LevelCaps;
}

const readState = async (deps: LevelBalanceDeps, now: number): Promise<{ state: State; text?: string }> => {
  const text = await deps.state.readCursor(LEVEL_CAPS_STATE_ID);
  if (text === undefined) return { state: { held: [] } };
  try {
    return { state: StateSchema.parse(JSON.parse(text)), text };
  } catch (error) {
    deps.telemetry.warn('level caps state unreadable: no raise until it has drained', {
      error: String(error),
    });
    return { state: { held: [], frozenUntil: now + CAP_DRAIN_MS } };
  }
};

const byLevel = async <T>(read: (level: StorePriority) => Promise<T>): Promise<Record<StorePriority, T>> => {
  const values = await Promise.all(STORE_PRIORITIES.map(read));
  return Object.fromEntries(STORE_PRIORITIES.map((level, i) => [level, values[i]])) as Record<
    StorePriority,
    T
  >;
};

/**
 * One reconciler run's step for store priority on AWS (level-caps.ts): sets each level's event source to its
 * floor plus this run's loan.
 *
 * The caps add up to at most the reservation, and so must the workers actually running: a level whose cap is
 * lowered keeps the workers it started under the old one until they end. So a lowered cap is written down first
 * (until CAP_DRAIN_MS from now), then lowered; a raise is made only within what the reservation leaves once each
 * level counts its highest cap of the last CAP_DRAIN_MS — the part of a loan that does not fit yet comes a run
 * later. `high` is raised first. A cap found lower than the last run left it (a deploy changed the floors) is
 * held at the old one the same way.
 */
export const balanceLevels = async (deps: LevelBalanceDeps): Promise<LevelBalanceReport> => {
  const now = deps.clock.now();
  const [{ state, text }, loads, current] = await Promise.all([
    readState(deps, now),
    byLevel((level) => deps.sources.load(level)),
    byLevel((level) => deps.sources.cap(level)),
  ]);
  const loans = deps.loans ?? true;
  const planned = planLevelCaps(deps.floors, loads, deps.rules ?? (loans ? LEVEL_CAP_RULES : NO_LOAN_RULES));
  const held = state.held.filter((h) => h.until > now);
  const hold = (level: StorePriority, cap: number): void => {
    held.push({ level, cap, until: now + (deps.drainMs ?? CAP_DRAIN_MS) });
  };
  for (const level of STORE_PRIORITIES) {
    const left = state.caps?.[level];
    if (left !== undefined && current[level] < left) hold(level, left);
  }
  const lowered = STORE_PRIORITIES.filter((level) => planned[level] < current[level]);
  for (const level of lowered) hold(level, current[level]);
  const caps: Record<StorePriority, number> = { ...current };
  for (const level of lowered) caps[level] = planned[level];
  const frozen = state.frozenUntil !== undefined && state.frozenUntil > now;
  let saved = text;
  const save = async (): Promise<void> => {
    const next = JSON.stringify({ held, caps, ...(frozen ? { frozenUntil: state.frozenUntil } : {}) });
    if (next === saved) return;
    await deps.state.writeCursor(LEVEL_CAPS_STATE_ID, next);
    saved = next;
  };
  // Written before the calls: a call that fails after it took effect still leaves its old cap counted.
  await save();
  await Promise.all(lowered.map((level) => deps.sources.setCap(level, planned[level])));
  if (!frozen) {
    const reserved = reservedWorkers(deps.floors, loans);
    const bound = (level: StorePriority): number =>
      Math.max(caps[level], ...held.filter((h) => h.level === level && h.until > now).map((h) => h.cap));
    for (const level of STORE_PRIORITIES) {
      const room = reserved - STORE_PRIORITIES.reduce((total, l) => total + bound(l), 0);
      const to = Math.min(planned[level], caps[level] + room);
      if (to <= caps[level]) continue;
      await deps.sources.setCap(level, to);
      caps[level] = to;
    }
  }
  await save();
  for (const level of STORE_PRIORITIES)
    deps.telemetry.count(MetricNames.levelLoan, Math.max(0, caps[level] - deps.floors[level]), { level });
  if (STORE_PRIORITIES.some((level) => caps[level] !== current[level]))
    deps.telemetry.info('level caps', { caps, planned, loads, floors: deps.floors });
  return { loads, planned, caps };
};
