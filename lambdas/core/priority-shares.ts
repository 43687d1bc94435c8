import { STORE_PRIORITIES, type StorePriority } from './plans.js';

/**
 * Store priority across stores (contract, "Scheduling policy"): the share of worker time each level is
 * guaranteed while the workers are saturated, in percent. Unused share flows to the levels that have work.
 */
export type PriorityShares = Readonly<Record<StorePriority, number>>;

export const DEFAULT_PRIORITY_SHARES: PriorityShares = { high: 50, normal: 30, low: 20 };

/**
 * `high=50,normal=30,low=20` or `50,30,20` (high, normal, low): whole percents, each ≥ 1, summing to 100.
 * Throws naming `field` and what is wrong.
 */
export const parsePriorityShares = (text: string, field: string): PriorityShares => {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length !== STORE_PRIORITIES.length)
    throw new Error(`${field} must list ${STORE_PRIORITIES.length} shares (high,normal,low); got '${text}'`);
  const shares: Record<string, number> = {};
  parts.forEach((part, i) => {
    const [key, value] = part.includes('=') ? part.split('=') : [STORE_PRIORITIES[i], part];
    const level = key?.trim() as StorePriority;
    if (!STORE_PRIORITIES.includes(level) || level in shares)
      throw new Error(`${field}: '${part}' names no level (high, normal, low) or names one twice`);
    const percent = Number(value);
    if (!Number.isInteger(percent) || percent < 1 || percent > 98)
      throw new Error(`${field}: the ${level} share must be a whole percent from 1 to 98; got '${value}'`);
    shares[level] = percent;
  });
  const total = Object.values(shares).reduce((a, b) => a + b, 0);
  if (total !== 100) throw new Error(`${field}: the shares must add up to 100; they add up to ${total}`);
  return shares as PriorityShares;
};

/**
 * Of a pool's workers, the share (percent, rounded down) kept for `high` while the lower levels saturate
 * it: a high store's attention then finds a free worker at once instead of waiting for a running slice to
 * end (nothing preempts one; a normal store's slice may last 20 s). Pools under 20 workers keep none.
 */
export const DEFAULT_HIGH_HEADROOM_PERCENT = 5;

/** Workers kept for `high` in a pool of `workers`. */
export const headroomWorkers = (workers: number, percent: number = DEFAULT_HIGH_HEADROOM_PERCENT): number =>
  Math.floor((workers * percent) / 100);

/**
 * The levels a free worker may take, of those with work: `normal` and `low` only while their slices hold
 * fewer than all but `headroom` of the pool's workers; `high` always. So the lower levels together never
 * hold the last `headroom` workers, and a high store's attention finds one free at once; high may use
 * every worker. While the pool is not saturated nothing changes.
 */
export const eligibleLevels = (
  withWork: Iterable<StorePriority>,
  pool: { workers: number; lowerBusy: number; headroom: number },
): StorePriority[] => {
  const levels = [...withWork];
  return pool.lowerBusy < pool.workers - pool.headroom ? levels : levels.filter((level) => level === 'high');
};

/** The cost charged before a level has any measured slice: about a short slice (the end corrects it). */
const INITIAL_ESTIMATE_MS = 1_000;
/** Weight of the newest slice in a level's running estimate of its slice time. */
const ESTIMATE_WEIGHT = 0.2;

/**
 * Weighted fair choice of the next level for a free worker (stride scheduling on worker time): each level
 * has a virtual time that advances by the worker time its slices used divided by its share; a free worker
 * takes the level with work whose virtual time is lowest. Only levels with work are candidates, so no
 * worker ever waits while some level has work (work-conserving), and a level without work leaves its
 * share to the others. While every level has work, each gets its share of worker time within one slice
 * per level; a level that had no work for a while rejoins at the current virtual time with at most one
 * slice of credit, so it cannot take the pool over to "catch up" (and so never starves the others).
 *
 * A slice is charged its level's estimated time when it starts (so concurrent workers see it at once) and
 * corrected to its real time when it ends. Pure: no clock, no I/O; local mode's worker pool and the
 * simulations share it.
 */
export class LevelPicker {
  private readonly pass: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  private readonly estimateMs: Record<StorePriority, number> = {
    high: INITIAL_ESTIMATE_MS,
    normal: INITIAL_ESTIMATE_MS,
    low: INITIAL_ESTIMATE_MS,
  };
  private virtualTime = 0;

  constructor(readonly shares: PriorityShares = DEFAULT_PRIORITY_SHARES) {}

  /** Levels in the order a free worker should try them: lowest virtual time first, ties by level. */
  order(candidates: Iterable<StorePriority> = STORE_PRIORITIES): StorePriority[] {
    const levels = STORE_PRIORITIES.filter((level) => [...candidates].includes(level));
    for (const level of levels) {
      // Rejoining after a spell without work: at most one slice of credit.
      this.pass[level] = Math.max(this.pass[level], this.virtualTime - this.stride(level));
    }
    return levels.sort((a, b) => this.pass[a] - this.pass[b]);
  }

  /** The level a free worker takes among those with work, or undefined when none has any. */
  pick(withWork: Iterable<StorePriority>): StorePriority | undefined {
    return this.order(withWork)[0];
  }

  /** A worker took a slice of `level`: charge its estimate now. Returns what `end` needs. */
  begin(level: StorePriority): { level: StorePriority; chargedMs: number } {
    this.virtualTime = Math.max(this.virtualTime, this.pass[level]);
    const chargedMs = this.estimateMs[level];
    this.pass[level] += chargedMs / this.shares[level];
    return { level, chargedMs };
  }

  /** The slice ended after `tookMs` of worker time: correct the charge, learn the level's slice time. */
  end(started: { level: StorePriority; chargedMs: number }, tookMs: number): void {
    const { level, chargedMs } = started;
    const took = Math.max(0, tookMs);
    this.pass[level] += (took - chargedMs) / this.shares[level];
    this.estimateMs[level] = Math.max(
      1,
      (1 - ESTIMATE_WEIGHT) * this.estimateMs[level] + ESTIMATE_WEIGHT * took,
    );
  }

  private stride(level: StorePriority): number {
    return this.estimateMs[level] / this.shares[level];
  }
}
