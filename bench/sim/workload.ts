import {
  PLAN_DEFAULTS,
  PLAN_NAMES,
  resolvePolicy,
  type PlanName,
  type Policy,
} from '../../lambdas/core/plans.js';
import { rng } from './engine.js';

/**
 * A workload: every task's arrival time and store, fixed before any design runs, so every design sees the
 * same tasks at the same instants. Messages are not objects: store s's k-th task arrived at
 * taskTime[offset[s] + k] (its arrivals are in time order), and a design only moves per-store counters.
 */
export interface Workload {
  readonly name: string;
  readonly stores: number;
  /** Index into PLAN_NAMES. */
  readonly plan: Uint8Array;
  readonly policies: readonly Policy[];
  /** 1 for the stores whose latency is reported as "small-store latency". */
  readonly small: Uint8Array;
  readonly offset: Int32Array;
  readonly count: Int32Array;
  readonly taskTime: Float64Array;
  /** Global arrival order. */
  readonly arrTime: Float64Array;
  readonly arrStore: Int32Array;
  readonly totalTasks: number;
  /** Ingest requests (SendMessageBatch of ≤ 10 for bursts, one SendMessage per lone task). */
  readonly ingestRequests: number;
  /** The store whose drain is timed (the campaign store, or the big backlog store), or -1. */
  readonly focusStore: number;
  readonly focusStart: number;
  readonly arrivalsEnd: number;
}

export const PLAN_INDEX: Readonly<Record<PlanName, number>> = { basic: 0, pro: 1, enterprise: 2 };
/** The project's plan policies, straight from lambdas/core/plans.ts. */
export const POLICIES: readonly Policy[] = PLAN_NAMES.map((p) => resolvePolicy(p, undefined));

export interface Draft {
  stores: number;
  plan: Uint8Array;
  small: Uint8Array;
  times: number[];
  owners: number[];
  ingestRequests: number;
}

/** Builds a workload from its tasks' arrival times and owners (a calibration run builds its own). */
export const finish = (name: string, d: Draft, focusStore: number, focusStart: number): Workload => {
  const n = d.times.length;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const times = Float64Array.from(d.times);
  order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
  const arrTime = new Float64Array(n);
  const arrStore = new Int32Array(n);
  const count = new Int32Array(d.stores);
  for (let i = 0; i < n; i++) {
    const j = order[i] as number;
    arrTime[i] = times[j] as number;
    const s = d.owners[j] as number;
    arrStore[i] = s;
    count[s] = (count[s] as number) + 1;
  }
  const offset = new Int32Array(d.stores);
  for (let s = 1; s < d.stores; s++) offset[s] = (offset[s - 1] as number) + (count[s - 1] as number);
  const fill = new Int32Array(d.stores);
  const taskTime = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = arrStore[i] as number;
    taskTime[(offset[s] as number) + (fill[s] as number)] = arrTime[i] as number;
    fill[s] = (fill[s] as number) + 1;
  }
  return {
    name,
    stores: d.stores,
    plan: d.plan,
    policies: POLICIES,
    small: d.small,
    offset,
    count,
    taskTime,
    arrTime,
    arrStore,
    totalTasks: n,
    ingestRequests: d.ingestRequests,
    focusStore,
    focusStart,
    arrivalsEnd: n > 0 ? (arrTime[n - 1] as number) : 0,
  };
};

export interface ScaleParams {
  stores: number;
  tasks: number;
  zipfS: number;
  loadSeconds: number;
  campaignTasks: number;
  campaignAtSeconds: number;
  campaignSeconds: number;
  /** Stores with at most this many tasks get lone arrivals and count as small stores. */
  smallMax: number;
  burstMin: number;
  burstMax: number;
  seed: number;
}

export const FULL_SCALE: ScaleParams = {
  stores: 50_000,
  tasks: 1_000_000,
  zipfS: 1.0,
  loadSeconds: 1800,
  campaignTasks: 200_000,
  campaignAtSeconds: 300,
  campaignSeconds: 20,
  smallMax: 10,
  burstMin: 50,
  burstMax: 500,
  seed: 42,
};

/**
 * Zipf-skewed store sizes (rank r gets ∝ 1/r^s of the tasks); plans by rank: the top 1% enterprise, the
 * next 9% pro, the rest basic. Small stores (≤ smallMax tasks) send lone tasks at uniform random times;
 * bigger stores send bursts of burstMin..burstMax tasks (catalogue syncs) spread over one second. The
 * campaign lands on one enterprise store (rank 0.5%) as campaignTasks within campaignSeconds.
 */
export const scaleWorkload = (p: ScaleParams): Workload => {
  const rand = rng(p.seed);
  const plan = new Uint8Array(p.stores);
  const small = new Uint8Array(p.stores);
  let h = 0;
  for (let r = 1; r <= p.stores; r++) h += 1 / r ** p.zipfS;
  const sizes = new Int32Array(p.stores);
  let assigned = 0;
  const frac: number[] = [];
  for (let r = 0; r < p.stores; r++) {
    const exact = (p.tasks * (1 / (r + 1) ** p.zipfS)) / h;
    sizes[r] = Math.floor(exact);
    assigned += sizes[r] as number;
    frac.push(exact - Math.floor(exact));
  }
  const byFrac = frac.map((f, i) => [f, i] as const).sort((a, b) => b[0] - a[0]);
  for (let k = 0; assigned < p.tasks && k < byFrac.length; k++, assigned++) {
    const r = (byFrac[k] as readonly [number, number])[1];
    sizes[r] = (sizes[r] as number) + 1;
  }

  const times: number[] = [];
  const owners: number[] = [];
  let ingestRequests = 0;
  const loadMs = p.loadSeconds * 1000;
  for (let s = 0; s < p.stores; s++) {
    plan[s] =
      s < p.stores * 0.01 ? PLAN_INDEX.enterprise : s < p.stores * 0.1 ? PLAN_INDEX.pro : PLAN_INDEX.basic;
    const n = sizes[s] as number;
    if (n <= p.smallMax) {
      if (plan[s] === PLAN_INDEX.basic) small[s] = 1;
      for (let k = 0; k < n; k++) {
        times.push(rand() * loadMs);
        owners.push(s);
      }
      ingestRequests += n;
      continue;
    }
    let left = n;
    while (left > 0) {
      const b = Math.min(left, p.burstMin + Math.floor(rand() * (p.burstMax - p.burstMin + 1)));
      const start = rand() * loadMs;
      for (let k = 0; k < b; k++) {
        times.push(start + rand() * 1000);
        owners.push(s);
      }
      ingestRequests += Math.ceil(b / 10);
      left -= b;
    }
  }
  const campaignStore = Math.min(p.stores - 1, Math.floor(p.stores * 0.005));
  const cStart = p.campaignAtSeconds * 1000;
  for (let k = 0; k < p.campaignTasks; k++) {
    times.push(cStart + rand() * p.campaignSeconds * 1000);
    owners.push(campaignStore);
  }
  ingestRequests += Math.ceil(p.campaignTasks / 10);
  return finish(
    `${p.stores} stores, ${p.tasks} Zipf(s=${p.zipfS}) tasks over ${p.loadSeconds} s + ${p.campaignTasks} campaign tasks`,
    { stores: p.stores, plan, small, times, owners, ingestRequests },
    p.campaignTasks > 0 ? campaignStore : -1,
    cStart,
  );
};

export interface BacklogParams {
  smallStores: number;
  /** Lone tasks per second over all small stores (Poisson). */
  smallRatePerSecond: number;
  backlog: number;
  bigPlan: PlanName;
  /** Small-store traffic lasts at least this long, and at least as long as the backlog's ideal drain. */
  minSeconds: number;
  seed: number;
}

/**
 * The noisy-neighbour probe: store 0 receives `backlog` tasks at t = 0 (within one second); small basic
 * stores receive lone Poisson arrivals for as long as the big store should need to drain at its rate.
 */
export const backlogWorkload = (p: BacklogParams): Workload => {
  const rand = rng(p.seed);
  const stores = p.smallStores + 1;
  const plan = new Uint8Array(stores);
  const small = new Uint8Array(stores);
  plan[0] = PLAN_INDEX[p.bigPlan];
  for (let s = 1; s < stores; s++) small[s] = 1;
  const times: number[] = [];
  const owners: number[] = [];
  for (let k = 0; k < p.backlog; k++) {
    times.push(rand() * 1000);
    owners.push(0);
  }
  const rate = PLAN_DEFAULTS[p.bigPlan].ratePerSecond;
  const seconds = Math.max(p.minSeconds, (p.backlog / rate) * 1.05);
  let t = 0;
  let lone = 0;
  for (;;) {
    t += (-Math.log(1 - rand()) / p.smallRatePerSecond) * 1000;
    if (t > seconds * 1000) break;
    times.push(t);
    owners.push(1 + Math.floor(rand() * p.smallStores));
    lone++;
  }
  return finish(
    `backlog ${p.backlog} on one ${p.bigPlan} store + ${p.smallStores} small stores at ${p.smallRatePerSecond}/s`,
    { stores, plan, small, times, owners, ingestRequests: Math.ceil(p.backlog / 10) + lone },
    p.backlog > 0 ? 0 : -1,
    0,
  );
};

export interface FairnessParams {
  groups: { plan: PlanName; stores: number; tasks: number }[];
  /** Every task arrives uniformly within this many seconds of t = 0. */
  arriveWithinSeconds: number;
  seed: number;
}

/**
 * The fairness probe: many stores of each plan receive a deep backlog at the same time, more than the
 * workers can serve at once. Each plan's shares are read when its first store drains (all still backlogged).
 */
export const fairnessWorkload = (p: FairnessParams): Workload => {
  const rand = rng(p.seed);
  const stores = p.groups.reduce((n, g) => n + g.stores, 0);
  const plan = new Uint8Array(stores);
  const small = new Uint8Array(stores);
  const times: number[] = [];
  const owners: number[] = [];
  let s = 0;
  let ingestRequests = 0;
  for (const g of p.groups) {
    for (let k = 0; k < g.stores; k++, s++) {
      plan[s] = PLAN_INDEX[g.plan];
      for (let i = 0; i < g.tasks; i++) {
        times.push(rand() * p.arriveWithinSeconds * 1000);
        owners.push(s);
      }
      ingestRequests += Math.ceil(g.tasks / 10);
    }
  }
  return finish(
    `fairness probe: ${p.groups.map((g) => `${g.stores} ${g.plan} stores × ${g.tasks} tasks`).join(', ')} within ${p.arriveWithinSeconds} s`,
    { stores, plan, small, times, owners, ingestRequests },
    -1,
    0,
  );
};
