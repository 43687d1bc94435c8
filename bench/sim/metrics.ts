import { FUNCTIONS } from '../../lambdas/config/topology.js';
import { PLAN_NAMES } from '../../lambdas/core/plans.js';
import type { Bucket, Category, Requests, World } from './world.js';
import { MODEL } from './world.js';

/** us-east-1 list prices from ../shared/design-notes.md (USD per request). */
export const PRICES: Readonly<Record<Bucket, number>> = {
  sqs: 0.4e-6,
  sqsFifo: 0.5e-6,
  ddbWrite: 0.625e-6,
  ddbRead: 0.125e-6,
  lambda: 0.2e-6,
  scheduler: 1.0e-6,
};
/**
 * Lambda compute, x86, per GB-second (us-east-1 list price). Every design's workers are priced as Lambda
 * functions for the time they are held (issue #11: compute counted whole, on the same basis), at the
 * project's worker memory (lambdas/config/topology.ts).
 */
export const LAMBDA_GB_SECOND = 0.0000166667;
export const WORKER_MEMORY_GB = FUNCTIONS.worker.memoryMb / 1024;
/** Fargate, Linux/x86, us-east-1 list prices: the always-on alternative for a pool of W consumers. */
export const FARGATE = { vcpuHour: 0.04048, gbHour: 0.004445, vcpu: 0.25, memoryGb: 0.5 } as const;
export const fargateMonthDollars = (tasks: number): number =>
  tasks * (FARGATE.vcpu * FARGATE.vcpuHour + FARGATE.memoryGb * FARGATE.gbHour) * 24 * 30;
export const MONTH_SECONDS = 30 * 86_400;

export const dollars = (req: Requests): number =>
  (Object.keys(PRICES) as Bucket[]).reduce((sum, b) => sum + req.bucket[b] * PRICES[b], 0);

export const totalRequests = (req: Requests): number =>
  (Object.keys(req.bucket) as Bucket[]).reduce((sum, b) => sum + req.bucket[b], 0);

/** SQS + DynamoDB requests only (what the overhead shares are taken over). */
export const dataPlaneRequests = (req: Requests): number =>
  (Object.keys(req.category) as Category[]).reduce((sum, c) => sum + req.category[c], 0);

export const percentile = (sorted: Float64Array, q: number): number => {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
};

/** Jain's index (Σx)² / (n Σx²): 1 when all equal, 1/n when one takes everything. */
export const jain = (xs: readonly number[]): number => {
  if (xs.length === 0) return NaN;
  let s = 0;
  let s2 = 0;
  for (const x of xs) {
    s += x;
    s2 += x * x;
  }
  return s2 === 0 ? 1 : (s * s) / (xs.length * s2);
};

export interface Fairness {
  overall: number;
  byPlan: Record<string, { index: number; stores: number }>;
  /** Per plan: the store-weighted mean of each window's Jain index over stores backlogged throughout the window. */
  windowed: Record<string, { index: number; storeWindows: number; windows: number }>;
}

/**
 * Each store's share while backlogged: tasks delivered ÷ seconds with at least one task undelivered,
 * normalised by its plan's ratePerSecond (so 1.0 = it got its whole entitled rate). Stores backlogged for
 * less than MODEL.fairnessMinBacklogMs in total are left out (a one-task store's "rate" is just its latency).
 */
export const fairness = (world: World): Fairness => {
  const w = world.w;
  const byPlanX: number[][] = PLAN_NAMES.map(() => []);
  const all: number[] = [];
  for (let s = 0; s < w.stores; s++) {
    const ms = world.backlogMs[s] as number;
    if (ms < MODEL.fairnessMinBacklogMs) continue;
    const x = (world.deliveredN[s] as number) / (ms / 1000) / (1000 / (world.interval[s] as number));
    (byPlanX[w.plan[s] as number] as number[]).push(x);
    all.push(x);
  }
  const byPlan: Fairness['byPlan'] = {};
  PLAN_NAMES.forEach((p, i) => {
    const xs = byPlanX[i] as number[];
    byPlan[p] = { index: jain(xs), stores: xs.length };
  });
  const windowed: Fairness['windowed'] = {};
  PLAN_NAMES.forEach((p, i) => {
    const acc = world.windowJain[i] as { sum: number; stores: number; windows: number };
    windowed[p] = {
      index: acc.stores > 0 ? acc.sum / acc.stores : NaN,
      storeWindows: acc.stores,
      windows: acc.windows,
    };
  });
  return { overall: jain(all), byPlan, windowed };
};

export interface DesignResult {
  id: string;
  label: string;
  workers: number;
  delivered: number;
  total: number;
  smallCount: number;
  smallP50Ms: number;
  smallP99Ms: number;
  fairness: Fairness;
  /** Worker time held (slice/job/batch in progress, including waits for a store's rate) ÷ capacity. */
  utilHeld: number;
  /** Worker time inside marketplace calls ÷ capacity. */
  utilCalls: number;
  spanMs: number;
  focusDrainMs: number;
  run: Requests;
  runDollars: number;
  lambdaGbSeconds: number;
  idle: Requests;
  /** Compute in an idle month (the attention design's reconciler runs), GB-s. */
  idleGbSeconds: number;
  /** Requests and compute of an idle month. */
  idleMonthDollars: number;
  /** One such run a day, idle the rest of the month: requests and compute. */
  loadMonthDollars: number;
  /** Of loadMonthDollars: the compute (Lambda GB-s) part. */
  computeMonthDollars: number;
  events: number;
  wallMs: number;
  /** Times a store had more calls in flight than its maxConcurrentConsumers. */
  overConcurrency: number;
  /** Mean worker time a single-task activation held beyond its call and rate wait (NaN: not measured). */
  singleTaskExtraMs: number;
}

export const summarise = (
  world: World,
  meta: {
    id: string;
    label: string;
    workers: number;
    idle: Requests;
    idleGbSeconds: number;
    wallMs: number;
  },
): DesignResult => {
  const lat = Float64Array.from(world.smallLat.view()).sort();
  const spanMs = world.lastDelivery;
  const capacity = meta.workers * Math.max(1, spanMs, world.lastActivity);
  const runDollars = dollars(world.req);
  const lambdaGbSeconds = (world.workerBusyMs / 1000) * WORKER_MEMORY_GB;
  const idleMonthDollars = dollars(meta.idle) + meta.idleGbSeconds * LAMBDA_GB_SECOND;
  const runsPerMonth = 30;
  const idleShare = Math.max(0, 1 - (runsPerMonth * spanMs) / 1000 / MONTH_SECONDS);
  const computeMonthDollars =
    runsPerMonth * lambdaGbSeconds * LAMBDA_GB_SECOND + idleShare * meta.idleGbSeconds * LAMBDA_GB_SECOND;
  return {
    id: meta.id,
    label: meta.label,
    workers: meta.workers,
    delivered: world.delivered,
    total: world.w.totalTasks,
    smallCount: lat.length,
    smallP50Ms: percentile(lat, 0.5),
    smallP99Ms: percentile(lat, 0.99),
    fairness: fairness(world),
    utilHeld: world.workerBusyMs / capacity,
    utilCalls: world.workerCallMs / capacity,
    spanMs,
    focusDrainMs: world.w.focusStore >= 0 ? world.focusLast - world.w.focusStart : NaN,
    run: world.req,
    runDollars,
    lambdaGbSeconds,
    idle: meta.idle,
    idleGbSeconds: meta.idleGbSeconds,
    idleMonthDollars,
    computeMonthDollars,
    loadMonthDollars:
      runsPerMonth * (runDollars + lambdaGbSeconds * LAMBDA_GB_SECOND) + idleMonthDollars * idleShare,
    events: world.eng.events,
    overConcurrency: world.overConcurrency,
    wallMs: meta.wallMs,
    singleTaskExtraMs:
      world.singleTaskActivations > 0
        ? world.singleTaskExtraMs / world.singleTaskActivations +
          (world.confirmSlices > 0 ? world.confirmShareMs / world.confirmSlices : 0)
        : NaN,
  };
};

/** Small-store latencies of tasks that arrived while the focus store still had undelivered tasks. */
export const latencyDuringDrain = (world: World): { p50: number; p99: number; n: number } => {
  const lat = world.smallLat.view();
  const arr = world.smallArr.view();
  const end = world.w.focusStore >= 0 ? world.focusLast : Infinity;
  const picked: number[] = [];
  for (let i = 0; i < lat.length; i++) if ((arr[i] as number) <= end) picked.push(lat[i] as number);
  const sorted = Float64Array.from(picked).sort();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length };
};
