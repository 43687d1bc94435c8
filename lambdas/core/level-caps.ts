import { STORE_PRIORITIES, type StorePriority } from './plans.js';

/**
 * Store priority on AWS (issue #13): how each level's SQS event source is capped, so that unused share flows.
 *
 * Each level has a **floor**: its share of the pool (at least Lambda's minimum of 2), the MaximumConcurrency it
 * gets at deploy. A floor is never taken away: a level can always run its floor of workers at once, at once,
 * whatever the others do (nothing to wait for, no starvation). What flows is the part of a floor its level
 * leaves unused: every reconciler run, a level with attentions waiting (`wanting`) is **lent** the unused floor
 * of the levels without any, split in proportion to the borrowers' floors; its cap becomes floor + loan. A loan
 * lasts one run; the next run plans anew.
 *
 * No event source is ever throttled, whatever the counts say and however stale they are: a loan is made only
 * from a level that is not itself borrowing, so the caps add up to at most the floors plus every floor but the
 * smallest, and the worker function reserves that much (`reservedWorkers`). A throttled attention would come
 * back only after its queue's 600 s visibility and count toward its maxReceiveCount.
 *
 * What a loan costs: the pool's size is the steady state, not a hard bound. When a lending level's own work
 * comes back, it takes its floor at once while the borrowers' slices run out (each at most one slice; the
 * next run withdraws the loan), so for that long up to `reservedWorkers` workers run.
 */

export type LevelCaps = Readonly<Record<StorePriority, number>>;

/** Lambda's bounds on an SQS event source mapping's MaximumConcurrency. */
export const MAPPING_MIN_CONCURRENCY = 2;
export const MAPPING_MAX_CONCURRENCY = 1000;

/** One level's attention queue as SQS counts it (approximate, and up to a minute old). */
export interface LevelLoad {
  /** Attentions waiting (ApproximateNumberOfMessages): the level wants more workers than it runs. */
  waiting: number;
  /** Attentions received and not yet deleted (ApproximateNumberOfMessagesNotVisible): at most its workers' slices. */
  inFlight: number;
}

/**
 * The rules a plan follows; the simulation of the caps swaps in broken ones (`sim/level-caps-check.ts`).
 */
export interface LevelCapRules {
  /** Whether a level wants more workers than its floor gives it. */
  wanting(load: LevelLoad): boolean;
  /** How much of its floor a level without waiting attentions lends. */
  lendable(floor: number, load: LevelLoad): number;
  /** A level's cap: its floor and its loan (a level's own floor is never lent away). */
  cap(floor: number, loan: number, load: LevelLoad): number;
}

export const LEVEL_CAP_RULES: LevelCapRules = {
  wanting: (load) => load.waiting > 0,
  // Each attention in flight may hold a worker of its own (invocations carry 1–10; a trickle, one each): lending
  // what they may hold keeps the pool's own size the usual bound.
  lendable: (floor, load) => Math.max(0, floor - Math.ceil(load.inFlight)),
  cap: (floor, loan) => floor + loan,
};

/** Loans off (`-c workerPoolLoans=false`): nothing is lent, so a run only brings loaned caps back to the floors. */
export const NO_LOAN_RULES: LevelCapRules = { ...LEVEL_CAP_RULES, lendable: () => 0 };

const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

/** `total` split in proportion to `weights` (largest remainder: the parts add up to `total`). */
export const splitByWeight = <K extends string>(
  total: number,
  weights: Readonly<Record<K, number>>,
): Record<K, number> => {
  const keys = Object.keys(weights) as K[];
  const whole = sum(keys.map((k) => weights[k]));
  const parts = {} as Record<K, number>;
  if (whole <= 0 || total <= 0) {
    for (const k of keys) parts[k] = 0;
    return parts;
  }
  const exact = keys.map((k) => (total * weights[k]) / whole);
  keys.forEach((k, i) => (parts[k] = Math.floor(exact[i] as number)));
  let left = total - sum(keys.map((k) => parts[k]));
  const byRemainder = keys
    .map((k, i) => ({ k, rest: (exact[i] as number) - parts[k] }))
    .sort((a, b) => b.rest - a.rest);
  for (const { k } of byRemainder) {
    if (left <= 0) break;
    parts[k]++;
    left--;
  }
  return parts;
};

/** The most that can be lent at once: every floor but the smallest (a borrower lends nothing). */
export const maxLoan = (floors: LevelCaps): number => {
  const values = STORE_PRIORITIES.map((level) => floors[level]);
  return sum(values) - Math.min(...values);
};

/**
 * The worker function's reserved concurrency: the floors, and with loans on, the largest loan too — so the caps
 * never add up to more and no event source is throttled.
 */
export const reservedWorkers = (floors: LevelCaps, loans: boolean): number =>
  sum(STORE_PRIORITIES.map((level) => floors[level])) + (loans ? maxLoan(floors) : 0);

/** This run's caps: each level's floor, and for a level with attentions waiting, its loan. */
export const planLevelCaps = (
  floors: LevelCaps,
  loads: Readonly<Record<StorePriority, LevelLoad>>,
  rules: LevelCapRules = LEVEL_CAP_RULES,
): LevelCaps => {
  const borrowers = STORE_PRIORITIES.filter((level) => rules.wanting(loads[level]));
  const lent = sum(
    STORE_PRIORITIES.filter((level) => !borrowers.includes(level)).map((level) =>
      rules.lendable(floors[level], loads[level]),
    ),
  );
  // With no borrower there is no weight: nothing is lent.
  const loans = splitByWeight(
    lent,
    Object.fromEntries(borrowers.map((level) => [level, floors[level]])) as Record<StorePriority, number>,
  );
  return Object.fromEntries(
    STORE_PRIORITIES.map((level) => [
      level,
      Math.min(MAPPING_MAX_CONCURRENCY, rules.cap(floors[level], loans[level] ?? 0, loads[level])),
    ]),
  ) as Record<StorePriority, number>;
};

/** `high=10,normal=6,low=4`: the floors as the stack hands them to the reconciler (and back). */
export const formatLevelCaps = (caps: LevelCaps): string =>
  STORE_PRIORITIES.map((level) => `${level}=${caps[level]}`).join(',');

/** `high=…,normal=…,low=…`: one value per level, each named once. */
export const parseLevelValues = (text: string, field: string): Record<StorePriority, string> => {
  const values: Partial<Record<StorePriority, string>> = {};
  for (const part of text.split(',')) {
    const [key, value, ...rest] = part.split('=').map((s) => s.trim());
    const level = key as StorePriority;
    if (!STORE_PRIORITIES.includes(level) || level in values || !value || rest.length > 0)
      throw new Error(`${field}: '${part}' is not level=value (high, normal, low, each once)`);
    values[level] = value;
  }
  const missing = STORE_PRIORITIES.filter((level) => !(level in values));
  if (missing.length > 0) throw new Error(`${field}: nothing for ${missing.join(', ')}`);
  return values as Record<StorePriority, string>;
};

export const parseLevelCaps = (text: string, field: string): LevelCaps => {
  const values = parseLevelValues(text, field);
  const caps = {} as Record<StorePriority, number>;
  for (const level of STORE_PRIORITIES) {
    const n = Number(values[level]);
    if (!Number.isInteger(n) || n < MAPPING_MIN_CONCURRENCY || n > MAPPING_MAX_CONCURRENCY)
      throw new Error(
        `${field}: the ${level} floor must be a whole number in [${MAPPING_MIN_CONCURRENCY}, ${MAPPING_MAX_CONCURRENCY}]; got '${values[level]}'`,
      );
    caps[level] = n;
  }
  return caps;
};
