import { PLAN_NAMES, type PlanName } from '../../lambdas/core/plans.js';
import { attentionDesign, ATTENTION } from './designs.js';
import { rng } from './engine.js';
import { dataPlaneRequests } from './metrics.js';
import { finish, PLAN_INDEX, type Workload } from './workload.js';
import { World } from './world.js';

/**
 * The scale model's calibration (issue #11): one small mixed workload that the real core (lambdas/core,
 * in-memory ports, simulated time: test/unit/bench/real-core-world.ts) and the attention design of this
 * model both run, so that requests, slices and worker time per task can be compared.
 *
 * Ingest requests carry ≤ 10 tasks (one SendMessage or one SendMessageBatch each), as the scale workload's
 * bursts do, so one model ingest request is one real HTTP request.
 */
export interface CalibrationSpec {
  workers: number;
  /** Attentions per worker invocation, run concurrently (default ATTENTION.batchSize). */
  batchSize?: number;
  stores: { storeId: string; plan: PlanName }[];
  /** Ingest requests in time order: `tasks` eventIds of one store at `at` ms (1 = a lone SendMessage). */
  requests: { at: number; store: number; tasks: number }[];
}

export interface CalibrationFigures {
  tasks: number;
  /** SQS + DynamoDB requests (ingest, dispatch, delivery records; no Lambda invocations) per task. */
  requestsPerTask: number;
  /** Leases taken (slices run) per task. */
  slicesPerTask: number;
  /** Worker time held per task (invocation start to the handler's end, the Lambda-billed time + invoke). */
  workerSecondsPerTask: number;
}

/**
 * Small basic stores sending lone tasks, two pro stores and one enterprise store sending bursts (the
 * enterprise one deep enough to fan out), over about 30 s, on a few workers.
 */
export const calibrationSpec = (seed = 5): CalibrationSpec => {
  const rand = rng(seed);
  const stores: CalibrationSpec['stores'] = [];
  const requests: CalibrationSpec['requests'] = [];
  for (let i = 0; i < 16; i++) {
    stores.push({ storeId: `small-${i}`, plan: 'basic' });
    const n = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < n; k++)
      requests.push({ at: Math.round(rand() * 30_000), store: stores.length - 1, tasks: 1 });
  }
  const burst = (storeId: string, plan: PlanName, tasks: number, at: number): void => {
    stores.push({ storeId, plan });
    for (let sent = 0; sent < tasks; sent += 10)
      requests.push({ at: at + sent, store: stores.length - 1, tasks: Math.min(10, tasks - sent) });
  };
  burst('pro-0', 'pro', 60, 2_000);
  burst('pro-1', 'pro', 40, 17_000);
  burst('big-0', 'enterprise', 400, 6_000);
  requests.sort((a, b) => a.at - b.at || a.store - b.store);
  return { workers: 4, stores, requests };
};

/** The spec as the model's workload: every task of a request arrives at the request's instant. */
export const calibrationWorkload = (spec: CalibrationSpec): Workload => {
  const plan = Uint8Array.from(spec.stores.map((s) => PLAN_INDEX[s.plan]));
  const small = Uint8Array.from(spec.stores.map((s) => (s.plan === PLAN_NAMES[0] ? 1 : 0)));
  const times: number[] = [];
  const owners: number[] = [];
  for (const r of spec.requests) {
    for (let k = 0; k < r.tasks; k++) {
      times.push(r.at);
      owners.push(r.store);
    }
  }
  return finish(
    'calibration',
    { stores: spec.stores.length, plan, small, times, owners, ingestRequests: spec.requests.length },
    -1,
    0,
  );
};

/** The model's figures for the spec: its attention design without the reconciler and idle pollers. */
export const modelFigures = (spec: CalibrationSpec, seed = 1234): CalibrationFigures => {
  const workload = calibrationWorkload(spec);
  const world = new World(workload, seed);
  const run = attentionDesign(
    ATTENTION.emptyPollMs,
    'attention',
    'calibration',
    false,
    spec.batchSize ?? ATTENTION.batchSize,
    ATTENTION.confirm,
  ).attach(world, spec.workers);
  world.run();
  run.finish(world.lastDelivery);
  if (world.delivered !== workload.totalTasks)
    throw new Error(`the model delivered ${world.delivered} of ${workload.totalTasks} tasks`);
  const tasks = workload.totalTasks;
  return {
    tasks,
    requestsPerTask: dataPlaneRequests(world.req) / tasks,
    slicesPerTask: world.activations / tasks,
    workerSecondsPerTask: world.workerBusyMs / 1000 / tasks,
  };
};
