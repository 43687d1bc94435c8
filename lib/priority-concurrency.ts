import {
  MAPPING_MAX_CONCURRENCY,
  MAPPING_MIN_CONCURRENCY,
  splitByWeight,
} from '../lambdas/core/level-caps.js';
import { STORE_PRIORITIES, type StorePriority } from '../lambdas/core/plans.js';
import { parsePriorityShares, type PriorityShares } from '../lambdas/core/priority-shares.js';
import { WORKER_EVENT_SOURCE } from '../lambdas/config/topology.js';
import { InvalidPropError } from './validation.js';

export { MAPPING_MAX_CONCURRENCY, MAPPING_MIN_CONCURRENCY };

/**
 * Each level's floor on AWS, its event source MaximumConcurrency as deployed: the pool split by the shares
 * (largest remainder, so the parts add up to the pool), at least Lambda's minimum of 2, plus `burst`.
 *
 * What this guarantees: a level can always run its floor of slices at once, whatever the others do (at least
 * share × pool). Lambda event sources share no capacity by themselves; with loans on, each reconciler run
 * lends the floors a level leaves unused to the levels with attentions waiting (lambdas/core/level-caps.ts),
 * and the worker function reserves enough that no mapping is ever throttled (a throttled attention would come
 * back only after the queue's 600 s visibility and count toward its maxReceiveCount). `burst` is a static
 * alternative: how much more than its share each level may always take, paid for with 3 × burst more reserved
 * concurrency.
 */
export const levelConcurrency = (
  pool: number,
  shares: PriorityShares,
  burst: number,
): Readonly<Record<StorePriority, number>> => {
  if (!Number.isInteger(burst) || burst < 0 || burst > WORKER_EVENT_SOURCE.maxPoolSize)
    throw new InvalidPropError(
      `workerPoolBurst must be an integer between 0 and ${WORKER_EVENT_SOURCE.maxPoolSize}; got ${burst}`,
    );
  // Weights in level order (high first), so a tie in the remainders goes the same way whatever order the
  // shares were given in.
  const parts = splitByWeight(
    pool,
    Object.fromEntries(STORE_PRIORITIES.map((level) => [level, shares[level]])) as Record<
      StorePriority,
      number
    >,
  );
  return Object.fromEntries(
    STORE_PRIORITIES.map((level) => [
      level,
      Math.min(MAPPING_MAX_CONCURRENCY, Math.max(MAPPING_MIN_CONCURRENCY, parts[level]) + burst),
    ]),
  ) as Record<StorePriority, number>;
};

/** Checks shares given as a prop (whole percents ≥ 1 summing to 100), failing synth with the reason. */
export const requirePriorityShares = (name: string, shares: PriorityShares): PriorityShares => {
  try {
    return parsePriorityShares(STORE_PRIORITIES.map((level) => `${level}=${shares[level]}`).join(','), name);
  } catch (error) {
    throw new InvalidPropError((error as Error).message);
  }
};

/** `-c workerPoolShares=50,30,20` (or `high=50,normal=30,low=20`), failing synth with the reason. */
export const prioritySharesFromText = (name: string, text: string): PriorityShares => {
  try {
    return parsePriorityShares(text, name);
  } catch (error) {
    throw new InvalidPropError((error as Error).message);
  }
};
