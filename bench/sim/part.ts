import {
  attentionBatchOne,
  attentionNoConfirm,
  attentionConfirmParked,
  attentionNoEmptyPoll,
  designs,
  type Design,
} from './designs.js';
import { jain, latencyDuringDrain, summarise, type DesignResult } from './metrics.js';
import { PLAN_NAMES } from '../../lambdas/core/plans.js';
import {
  backlogWorkload,
  fairnessWorkload,
  FULL_SCALE,
  scaleWorkload,
  type BacklogParams,
  type FairnessParams,
  type ScaleParams,
  type Workload,
} from './workload.js';
import { World } from './world.js';

export interface SimConfig {
  scale: ScaleParams;
  /** Worker pools for the scale runs (grouped queues: this many groups, one consumer each); the first is the headline. */
  workers: number[];
  schedulerPeriodSeconds: number;
  backlog: Omit<BacklogParams, 'backlog'>;
  backlogSizes: number[];
  backlogWorkers: number;
  fairness: FairnessParams;
  /** Also run the hypothetical no-end-of-slice-poll attention variant in the scale runs. */
  sensitivity: boolean;
  /** Worker pools tried, in ascending order, for the smallest W giving the attention design's small-store p99 ≤ wSearchTargetMs. */
  wSearch: number[];
  wSearchTargetMs: number;
}

export const FULL_CONFIG: SimConfig = {
  scale: FULL_SCALE,
  workers: [100, 400],
  schedulerPeriodSeconds: 60,
  backlog: { smallStores: 2000, smallRatePerSecond: 5, bigPlan: 'enterprise', minSeconds: 300, seed: 7 },
  backlogSizes: [0, 1_000, 10_000, 50_000],
  backlogWorkers: 20,
  fairness: {
    groups: [
      { plan: 'basic', stores: 200, tasks: 200 },
      { plan: 'pro', stores: 40, tasks: 1_000 },
      { plan: 'enterprise', stores: 8, tasks: 3_000 },
    ],
    arriveWithinSeconds: 10,
    seed: 11,
  },
  sensitivity: true,
  wSearch: [25, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1200, 1600],
  wSearchTargetMs: 200,
};

export const QUICK_CONFIG: SimConfig = {
  scale: {
    ...FULL_SCALE,
    stores: 2_000,
    tasks: 40_000,
    loadSeconds: 300,
    campaignTasks: 8_000,
    campaignAtSeconds: 60,
    campaignSeconds: 5,
  },
  workers: [20, 80],
  schedulerPeriodSeconds: 60,
  backlog: { smallStores: 300, smallRatePerSecond: 2, bigPlan: 'enterprise', minSeconds: 120, seed: 7 },
  backlogSizes: [0, 1_000, 10_000],
  backlogWorkers: 20,
  fairness: {
    groups: [
      { plan: 'basic', stores: 60, tasks: 100 },
      { plan: 'pro', stores: 12, tasks: 400 },
      { plan: 'enterprise', stores: 4, tasks: 1_000 },
    ],
    arriveWithinSeconds: 5,
    seed: 11,
  },
  sensitivity: true,
  wSearch: [20, 40, 80, 160],
  wSearchTargetMs: 200,
};

export interface BacklogPoint {
  backlog: number;
  byDesign: Record<
    string,
    { p50: number; p99: number; n: number; drainMs: number; delivered: number; total: number }
  >;
}

export interface FairnessPoint {
  /** Jain's index over the plan's stores' deliveries when the plan's first store drained. */
  index: number;
  atMs: number;
  /** Mean share of the entitled rate up to then. */
  meanShare: number;
  stores: number;
}

export interface SimOutcome {
  fairness: {
    workload: string;
    byDesign: Record<string, Record<string, FairnessPoint>>;
    /** The attention design's attention-overhead share of SQS + DynamoDB requests in the probe (every store deeply backlogged). */
    attentionShare: number;
  };
  /** The backlog target re-run with other pools / the sensitivity variant: small-store p99 idle vs during a 10,000 backlog. */
  backlogTargetChecks: { label: string; workers: number; idleP99: number; tenKP99: number }[];
  /** The attention design's small-store p99 at each W tried (ascending, until one met wSearchTargetMs). */
  wSearch: { workers: number; smallP99Ms: number; smallP50Ms: number; utilHeld: number }[];
  config: SimConfig;
  scale: { workers: number; results: DesignResult[] }[];
  backlog: BacklogPoint[];
  designs: { id: string; label: string }[];
  wallMs: number;
  workload: string;
}

export type Progress = (message: string) => void;

const runDesign = (
  design: Design,
  workload: Workload,
  workers: number,
  onProgress: Progress | undefined,
  tag: string,
): { world: World; result: DesignResult } => {
  const started = Date.now();
  const world = new World(workload, 1234);
  const run = design.attach(world, workers);
  let lastReport = 0;
  world.run((fraction) => {
    const now = Date.now();
    if (onProgress !== undefined && now - lastReport > 2000) {
      lastReport = now;
      onProgress(
        `${tag} ${design.id}: ${(fraction * 100).toFixed(0)}% delivered, sim t=${(world.now / 1000).toFixed(0)} s`,
      );
    }
  });
  run.finish(world.lastDelivery);
  const result = summarise(world, {
    id: design.id,
    label: design.label,
    workers: run.workers,
    idle: design.idleMonth(workload.stores, workers),
    idleGbSeconds: design.idleGbSeconds?.() ?? 0,
    wallMs: Date.now() - started,
  });
  return { world, result };
};

export const runSimulation = (config: SimConfig, onProgress?: Progress): SimOutcome => {
  const started = Date.now();
  const list = designs(config.schedulerPeriodSeconds);
  onProgress?.(
    `[sim] generating workload: ${config.scale.stores} stores, ${config.scale.tasks} tasks + ${config.scale.campaignTasks} campaign`,
  );
  const workload = scaleWorkload(config.scale);
  const scale: SimOutcome['scale'] = [];
  const scaleList = config.sensitivity
    ? [...list, attentionNoEmptyPoll, attentionBatchOne, attentionNoConfirm, attentionConfirmParked]
    : list;
  const steps = config.workers.length * scaleList.length;
  config.workers.forEach((workers, wi) => {
    const results: DesignResult[] = [];
    scaleList.forEach((design, i) => {
      const tag = `[sim] scale ${wi * scaleList.length + i + 1}/${steps} W=${workers}`;
      onProgress?.(`${tag} ${design.id}: running`);
      const { result } = runDesign(design, workload, workers, onProgress, tag);
      results.push(result);
      onProgress?.(
        `${tag} ${design.id}: done in ${(result.wallMs / 1000).toFixed(1)} s (${result.events} events, ${result.delivered}/${result.total} delivered)`,
      );
    });
    scale.push({ workers, results });
  });
  const backlog: BacklogPoint[] = [];
  config.backlogSizes.forEach((size, i) => {
    const w = backlogWorkload({ ...config.backlog, backlog: size });
    const point: BacklogPoint = { backlog: size, byDesign: {} };
    for (const design of list) {
      const tag = `[sim] backlog ${i + 1}/${config.backlogSizes.length} (${size})`;
      const { world, result } = runDesign(design, w, config.backlogWorkers, undefined, tag);
      const d = latencyDuringDrain(world);
      point.byDesign[design.id] = {
        ...d,
        drainMs: result.focusDrainMs,
        delivered: result.delivered,
        total: result.total,
      };
    }
    onProgress?.(`[sim] backlog ${i + 1}/${config.backlogSizes.length}: backlog ${size} done`);
    backlog.push(point);
  });
  const fw = fairnessWorkload(config.fairness);
  const fairness: SimOutcome['fairness'] = { workload: fw.name, byDesign: {}, attentionShare: NaN };
  for (const design of list) {
    const world = new World(fw, 99);
    world.trackFirstDrain = true;
    const run = design.attach(world, config.backlogWorkers);
    world.run();
    run.finish(world.lastDelivery);
    const byPlan: Record<string, FairnessPoint> = {};
    PLAN_NAMES.forEach((plan, p) => {
      const snap = world.firstDrain[p];
      if (snap === undefined) return;
      const xs: number[] = [];
      for (let s = 0; s < fw.stores; s++) if (fw.plan[s] === p) xs.push(snap.delivered[s] as number);
      const rate = 1000 / (world.interval[xs.length > 0 ? fw.plan.indexOf(p) : 0] as number);
      const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      byPlan[plan] = {
        index: jain(xs),
        atMs: snap.t,
        meanShare: mean / ((snap.t / 1000) * rate),
        stores: xs.length,
      };
    });
    fairness.byDesign[design.id] = byPlan;
    if (design.id === 'attention') {
      const c = world.req.category;
      fairness.attentionShare = c.attention / (c.data + c.attention + c.enqSeq + c.rate + c.polling);
    }
    onProgress?.(`[sim] fairness probe ${design.id}: done`);
  }
  const backlogTargetChecks: SimOutcome['backlogTargetChecks'] = [];
  const checks: [Design, number][] = [
    [list[0] as Design, config.backlogWorkers * 2],
    [attentionNoEmptyPoll, config.backlogWorkers],
  ];
  for (const [design, workers] of checks) {
    const p99 = (size: number): number => {
      const { world } = runDesign(
        design,
        backlogWorkload({ ...config.backlog, backlog: size }),
        workers,
        undefined,
        '',
      );
      return latencyDuringDrain(world).p99;
    };
    backlogTargetChecks.push({ label: design.label, workers, idleP99: p99(0), tenKP99: p99(10_000) });
  }
  onProgress?.('[sim] backlog target checks: done');
  const wSearch: SimOutcome['wSearch'] = [];
  for (const workers of config.wSearch) {
    const known = scale.find((b) => b.workers === workers)?.results.find((r) => r.id === 'attention');
    const r = known ?? runDesign(list[0] as Design, workload, workers, undefined, '').result;
    wSearch.push({ workers, smallP99Ms: r.smallP99Ms, smallP50Ms: r.smallP50Ms, utilHeld: r.utilHeld });
    onProgress?.(`[sim] W search: W = ${workers}, small-store p99 ${Math.round(r.smallP99Ms)} ms`);
    if (r.smallP99Ms <= config.wSearchTargetMs) break;
  }
  return {
    config,
    scale,
    backlog,
    fairness,
    backlogTargetChecks,
    wSearch,
    designs: scaleList.map((d) => ({ id: d.id, label: d.label })),
    wallMs: Date.now() - started,
    workload: workload.name,
  };
};
