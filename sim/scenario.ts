import { resolvePolicy, PLAN_NAMES, type Overrides, type Policy } from '../lambdas/core/plans.js';
import { CORE_FIXES } from './constants.js';
import type { MarketLimitSpec } from './model-market-limit.js';
import { campaignsFor, type SimCampaigns } from './model-campaigns.js';
import { Rng } from './rng.js';

/** What the world injects, chosen per seed. */
export interface Faults {
  attentionLoss: number;
  attentionDuplicate: number;
  /** A receive that comes back empty although messages are visible (beyond SQS's long-poll promise). */
  falseEmpty: number;
  /** A short poll (WaitTimeSeconds 0) that misses what the queue holds: SQS samples its servers. */
  shortPollMiss: number;
  partialReceive: number;
  crashProbability: number;
  maxCrashes: number;
  /** An SQS/DynamoDB call that takes up to STALL_MAX_MS (throttled SDK retries), within the lease margin. */
  stall: number;
  /** A worker's SQS/DynamoDB call that stalls beyond the lease margin (up to ZOMBIE_STALL_MAX_MS). */
  zombieStall: number;
  /** A store-queue message SQS delivers twice (at-least-once: the same MessageId, received again). */
  duplicateTask: number;
  /** A task whose receive count starts near maxReceiveCount (as if it had crashed many workers). */
  nearReceiveLimit: number;
  marketplace: { transient: number; throttle: number; permanent: number; timeout: number };
}

export interface StoreSpec {
  storeId: string;
  plan: (typeof PLAN_NAMES)[number];
  overrides: Overrides;
  policy: Policy;
  tasks: number;
  /** Tasks carry `entityId` (one of three) and `version` (their order of creation): version order is checked. */
  versioned: boolean;
  /** The marketplace's own limit for this store (adaptive rate), with or without rate-limit headers. */
  marketLimit?: MarketLimitSpec;
  /**
   * Tasks the marketplace answers 503 on every call while faults run (the store's `maxAttempts` lowered to 2 or 3):
   * they are dead-lettered for exhausted retries, and after the operator's redrive again, each time only after a
   * fresh budget of calls (invariant 15, sim/redrive-budget-check.ts).
   */
  failing?: ReadonlySet<string>;
}

export interface IngestRequest {
  at: number;
  storeId: string;
  eventIds: string[];
  batch: boolean;
  attempt: number;
}

export interface Scenario {
  seed: number;
  workers: number;
  /**
   * Attentions per worker invocation (the event source's batch size), their slices run concurrently by the
   * real worker handler's batch processor: 1 on half the seeds, 2, 4 or 10 on the others.
   */
  batchSize: number;
  /**
   * The confirm queue (issue #11) is deployed: a slice whose short polls come back empty hands its slot to it, and
   * a pool of its own takes its attentions in batches after a batching window.
   */
  confirm: boolean;
  /** The confirm queue's event source: invocations at once (1–3; the stack deploys CONFIRM_EVENT_SOURCE's 5). */
  confirmWorkers: number;
  /**
   * The confirm queue's event source lags: it takes nothing for `forMs` from `fromMs` (virtual ms from start), on
   * about one confirm seed in three. Slots handed off meanwhile wait on it; the reconciler's resend re-announces
   * them on their level queue, where the slice makes its own empty decision.
   */
  confirmStall?: { fromMs: number; forMs: number };
  stores: StoreSpec[];
  requests: IngestRequest[];
  faults: Faults;
  /** After this (virtual ms from start) no more faults are injected: the run must then drain. */
  faultsEndMs: number;
  /** Campaign windows that raise and lower stores' caps during the run (sim/model-campaigns.ts). */
  campaigns: SimCampaigns;
  /**
   * When the deployment is upgraded from the code before f267a90 (virtual ms from start; sim/model-upgrade.ts),
   * on about one seed in ten; undefined: no upgrade in this run.
   */
  upgradeAtMs?: number;
}

export const TENANT = 'tenant-1';

/** Scenario sizes are small on purpose: many seeds explore more interleavings than a few big ones. */
export const scenarioFor = (seed: number): Scenario => {
  const rng = new Rng(seed ^ 0x5eed);
  const storeCount = rng.int(1, 4);
  const stores: StoreSpec[] = [];
  for (let i = 0; i < storeCount; i++) {
    const plan = rng.pick(PLAN_NAMES);
    const overrides: Overrides = {
      maxConcurrentConsumers: rng.int(1, 3),
      maxMessagesPerSlice: rng.int(2, 15),
      maxSliceSeconds: rng.int(1, 6),
      ratePerSecond: rng.pick([2, 5, 10, 20, 50]),
    };
    stores.push({
      storeId: `s${i}`,
      plan,
      overrides,
      policy: resolvePolicy(plan, overrides),
      tasks: rng.int(1, rng.chance(0.3) ? 60 : 20),
      versioned: false,
    });
  }
  const requests: IngestRequest[] = [];
  // Bursty (all within 40 s) or a trickle (one task at a time, about as fast as a slice drains them):
  // the trickle keeps stores going idle and active again, where the lost wake-up hides.
  const trickle = rng.chance(0.4);
  for (const store of stores) {
    let sent = 0;
    let at = rng.int(0, 5_000);
    while (sent < store.tasks) {
      const batch = !trickle && rng.chance(0.3);
      const size = batch ? Math.min(store.tasks - sent, rng.int(1, 25)) : 1;
      const eventIds = Array.from({ length: size }, (_, k) => `e${sent + k}`);
      sent += size;
      at = trickle ? at + rng.int(20, 3_000) : rng.int(0, 40_000);
      requests.push({ at, storeId: store.storeId, eventIds, batch, attempt: 0 });
      // An integrator retry of the same eventIds (posting again is safe: the effect happens once).
      if (rng.chance(0.05))
        requests.push({ at: at + rng.int(0, 20_000), storeId: store.storeId, eventIds, batch, attempt: 1 });
    }
  }
  requests.sort((a, b) => a.at - b.at);
  const level = rng.int(0, 3); // 0: calm … 3: stormy
  const faults: Faults = {
    attentionLoss: [0, 0.03, 0.1, 0.25][level] as number,
    attentionDuplicate: [0, 0.03, 0.1, 0.2][level] as number,
    falseEmpty: [0, 0.005, 0.02, 0.05][level] as number,
    shortPollMiss: [0, 0.02, 0.05, 0.1][level] as number,
    partialReceive: 0.2,
    crashProbability: [0, 0.003, 0.01, 0.02][level] as number,
    maxCrashes: [0, 3, 6, 10][level] as number,
    stall: [0, 0.01, 0.04, 0.1][level] as number,
    zombieStall: [0, 0.005, 0.01, 0.02][level] as number,
    duplicateTask: [0, 0.02, 0.05, 0.1][level] as number,
    nearReceiveLimit: [0, 0.01, 0.02, 0.03][level] as number,
    marketplace: {
      transient: [0, 0.03, 0.08, 0.15][level] as number,
      throttle: [0, 0.01, 0.03, 0.05][level] as number,
      permanent: [0, 0.01, 0.02, 0.03][level] as number,
      timeout: [0, 0.01, 0.02, 0.04][level] as number,
    },
  };
  const workers = rng.int(1, 3);
  // Drawn last, so the draws above (and so each seed's stores and requests) stay as they were.
  for (const store of stores)
    store.versioned = rng.chance(0.5) && (CORE_FIXES.versionMarkBeforeCall || level === 0);
  // The marketplace's own limit below the policy rate, said with headers or with bare 429s (drawn after all else).
  for (const store of stores)
    if (rng.chance(0.4))
      store.marketLimit = {
        perSecond: Math.max(0.5, store.policy.ratePerSecond * rng.pick([0.2, 0.5])),
        headers: rng.chance(0.5),
      };
  // Now and then a marketplace slower than one call per slice (drawn last): the regime where a multi-consumer
  // store's refused reservations once pushed its schedule on forever (seeds 10392 and 64157 at e887726).
  for (const store of stores)
    if (store.marketLimit && rng.chance(0.5)) store.marketLimit.perSecond = rng.pick([0.2, 0.25]);
  const campaigns = campaignsFor(
    seed,
    stores.map((s) => ({ storeId: s.storeId, cap: s.policy.maxConcurrentConsumers })),
  );
  // Drawn after everything else, so each seed's stores, requests and faults stay as they were.
  const batchSize = rng.chance(0.5) ? 1 : rng.pick([2, 4, 10]);
  // On a stream of its own, so every other draw of the seed stays as it was: while stores are busy.
  const upgrade = new Rng(seed ^ 0x0b4cf11);
  const upgradeAtMs = upgrade.chance(0.1) ? upgrade.int(2_000, 60_000) : undefined;
  // Stores whose 429s throttle the task answered alone (`throttleScope: 'task'`, plans.ts), on a stream of their own.
  const scopes = new Rng(seed ^ 0x7a5c0e);
  for (const store of stores)
    if (scopes.chance(0.3)) {
      store.overrides = { ...store.overrides, throttleScope: 'task' };
      store.policy = resolvePolicy(store.plan, store.overrides);
    }
  // Some marketplace limits are a fixed window's quota said with `RateLimit-Remaining`/`-Reset` (sometimes with a
  // limit read as per second that is really per window), on a stream of their own.
  const windows = new Rng(seed ^ 0x9e5e7);
  for (const store of stores)
    if (store.marketLimit && windows.chance(0.35))
      store.marketLimit.window = { seconds: windows.pick([1, 2, 5]), misread: windows.chance(0.5) };
  // On a stream of its own: a store whose marketplace keeps failing some tasks, with a small retry budget, so
  // tasks are dead-lettered for exhausted retries, redriven by the operator, and dead-lettered again.
  const failing = new Rng(seed ^ 0xfa11ed);
  if (failing.chance(0.3)) {
    const store = failing.pick(stores);
    const share = failing.pick([0.3, 0.6]);
    store.failing = new Set(
      Array.from({ length: store.tasks }, (_, k) => `e${k}`).filter(() => failing.chance(share)),
    );
    store.overrides = { ...store.overrides, maxAttempts: failing.int(2, 3) };
    store.policy = resolvePolicy(store.plan, store.overrides);
  }
  // On a stream of its own: most seeds run with the confirm queue (as deployed), the rest as before it.
  const confirmDraws = new Rng(seed ^ 0xc0f1e);
  const confirm = confirmDraws.chance(0.75);
  const confirmWorkers = confirmDraws.int(1, 3);
  const confirmStall =
    confirm && confirmDraws.chance(0.3)
      ? { fromMs: confirmDraws.int(0, 150_000), forMs: confirmDraws.int(20_000, 600_000) }
      : undefined;
  return {
    seed,
    workers,
    batchSize,
    confirm,
    confirmWorkers,
    ...(confirmStall === undefined ? {} : { confirmStall }),
    stores,
    requests,
    faults,
    faultsEndMs: 180_000,
    campaigns,
    ...(upgradeAtMs === undefined ? {} : { upgradeAtMs }),
  };
};
