import { CONFIRM_EVENT_SOURCE } from '../lambdas/config/topology.js';
import type { DispatchItem } from '../lambdas/core/dispatch-model.js';
import { deliveryKey } from '../lambdas/core/names.js';
import { isConsumable, policyOf } from '../lambdas/core/store-model.js';
import { IngestActors } from './actor-ingest.js';
import { ReconcilerSchedule } from './actor-reconciler.js';
import { WorkerPool } from './actor-workers.js';
import { T0 } from './constants.js';
import { heldMessages, notIdle } from './world-view.js';
import { SimContext } from './context.js';
import { Invariants, type Violation } from './invariants.js';
import { DispatchModel } from './model-dispatch.js';
import { HardErrors } from './model-errors.js';
import { MarketplaceModel } from './model-marketplace.js';
import { Operator } from './model-operator.js';
import { UpgradeModel } from './model-upgrade.js';
import { registryFor } from './model-registry.js';
import { SqsModel } from './model-sqs.js';
import type { Variant } from './protocol-variant.js';
import { scenarioFor, type Scenario } from './scenario.js';
import type { Actor } from './scheduler.js';
import type { SimPorts } from './sim-ports.js';
import type { SimMessage } from './sim-sqs.js';
import { SimTelemetry } from './sim-telemetry.js';
import type { LeaseTrack, SimStats, StoreState, TaskTrack, WorldView } from './world-view.js';

export type { Variant } from './protocol-variant.js';
export type { Scenario } from './scenario.js';
export type { SimStats } from './world-view.js';

const HORIZON_AFTER_FAULTS_MS = 60 * 60_000;
/**
 * Invariant 8 (idle costs nothing): once every task is settled, every store is idle — no slot, no active mark —
 * within the longest wait a store may still owe: an error backoff (15 min at most) or a wake guard (a hiding
 * call's, ≤ 15 min of SQS delay; a reclaim's, the zombie's Lambda timeout + 15 min + skew ≈ 17 min past the
 * lease), then a reconciler period, the attention grace and a lease. Counted from the later of the drain and the
 * last reclaim: a lease taken after the drain (a surplus attention's) whose worker stalls owes its guard from
 * then (seed 574866: a lease at 178 s, reclaimed at 238 s, the store idle at 1,208 s, 20 min after a drain at 8 s).
 * Reclaims need an expired lease, which only the faults (crashes, stalls) make, so the bound still ends.
 */
const IDLE_BOUND_MS = 20 * 60_000;

export interface SimResult {
  seed: number;
  variant: string | undefined;
  ok: boolean;
  violation?: Violation;
  stats: SimStats;
  trace: string[];
}

/**
 * One simulated deployment: the REAL core use cases (submitTask/submitBatch, handleAttention, reconcile)
 * run by the actors (actor-*.ts) against the models (model-*.ts: SQS, DynamoDB, the marketplace, the
 * Stores table), whose every port call is a scheduling point of the seeded scheduler. This file only
 * wires them and runs the loop: step, fire the environment, check the invariants.
 */
export class World implements WorldView {
  private readonly ctx: SimContext;
  private readonly sqs: SqsModel;
  private readonly db: DispatchModel;
  private readonly market: MarketplaceModel;
  private readonly ingest: IngestActors;
  private readonly workersPool: WorkerPool;
  /** The confirm queue's event source and its workers (1–3 invocations at once: its slices poll side by side). */
  private readonly confirmPool: WorkerPool;
  private readonly reconciler: ReconcilerSchedule;
  private readonly errors: HardErrors;
  private readonly operator: Operator;
  private readonly upgrade: UpgradeModel;
  private readonly invariants: Invariants;

  constructor(
    readonly scenario: Scenario,
    readonly variant: Variant | undefined,
    trace = false,
    private readonly idleTail = true,
  ) {
    const ctx = new SimContext(scenario, variant, trace);
    this.ctx = ctx;
    this.market = new MarketplaceModel(ctx);
    const env = ctx.sched.newActor('env', 'env', 0);
    this.db = new DispatchModel(
      ctx,
      (storeId) => this.sqs.stores.get(storeId),
      (actor, key) => this.market.confirmed(actor, key),
    );
    this.sqs = new SqsModel(ctx, (actorId) => this.db.leases.get(actorId));
    // Hard SQS/DynamoDB errors on every port but the marketplace's (sim/model-errors.ts).
    const errors = new HardErrors(ctx, (actor, storeId, eventId) =>
      this.market.settleLost(actor, deliveryKey(storeId, eventId)),
    );
    this.errors = errors;
    ctx.errors = errors;
    const ports: SimPorts = {
      common: (actor) => this.commonDeps(actor),
      stores: (actor) =>
        errors.wrap(
          actor,
          'stores',
          this.operator.registry(actor, registryFor(ctx, this.sqs.stores, actor, this.operator)),
        ),
      tasks: (actor) => this.sqs.tasksFor(actor),
      deliveries: (actor) => errors.wrap(actor, 'deliveries', this.db.deliveriesFor(actor)),
      marketplace: (actor) => this.market.portFor(actor),
      queueAdmin: (actor) => errors.wrap(actor, 'sqs', this.sqs.queueAdminFor(actor)),
    };
    this.operator = new Operator(ctx, ports, this.sqs.stores);
    this.workersPool = new WorkerPool(ctx, ports, env, this.sqs.attentionQueue, this.db.leases, {
      workers: scenario.workers,
      batchSize: scenario.batchSize,
      windowMs: 30,
    });
    this.confirmPool = new WorkerPool(ctx, ports, env, this.sqs.confirmQueue, this.db.leases, {
      workers: scenario.confirmWorkers,
      batchSize: CONFIRM_EVENT_SOURCE.batchSize,
      windowMs: CONFIRM_EVENT_SOURCE.batchingWindowSeconds * 1000,
      ...(scenario.confirmStall === undefined
        ? {}
        : {
            stall: {
              from: T0 + scenario.confirmStall.fromMs,
              until: T0 + scenario.confirmStall.fromMs + scenario.confirmStall.forMs,
            },
          }),
    });
    this.ingest = new IngestActors(ctx, ports, this.sqs.stores, this.sqs.tasks, scenario.requests, T0);
    this.upgrade = new UpgradeModel(ctx, this.db.dispatch);
    this.reconciler = new ReconcilerSchedule(ctx, ports, this.upgrade, (actorId) => errors.hitRun(actorId));
    for (const spec of scenario.stores) {
      this.sqs.addStore(spec);
      this.db.addStore(spec.storeId);
    }
    this.operator.started();
    this.invariants = new Invariants(this);
    ctx.checks = this.invariants;
  }

  private commonDeps(actor: Actor) {
    const clock = this.ctx.sched.clockFor(actor);
    return {
      dispatch: this.errors.wrap(actor, 'dispatch', this.db.dispatchFor(actor)),
      attention: this.errors.wrap(actor, 'attention', this.sqs.attentionFor(actor)),
      clock: this.variant?.clock ? this.variant.clock(clock, actor.kind) : clock,
      ids: { next: () => this.ctx.nextId() },
      telemetry: new SimTelemetry(this.ctx.sched, actor),
    };
  }

  /* ---------------------------------------------------------------- the view the invariants read */

  get now(): number {
    return this.ctx.now;
  }
  get workers(): number {
    return this.scenario.workers;
  }
  get stats(): SimStats {
    return this.ctx.stats;
  }
  get campaigns() {
    return this.scenario.campaigns;
  }
  /** Reconciler runs that crashed or met a hard error: each may delay a repair by one period. */
  get reconcilerCrashes(): number {
    return this.reconciler.crashes + this.errors.reconcilerRunsHit;
  }
  get upgradePending(): boolean {
    return this.upgrade.pending;
  }
  log(line: string): void {
    this.ctx.sched.log(line);
  }
  stores(): Iterable<StoreState> {
    return this.sqs.stores.values();
  }
  store(storeId: string): StoreState | undefined {
    return this.sqs.stores.get(storeId);
  }
  tasks(): Iterable<TaskTrack> {
    return this.sqs.tasks.values();
  }
  leases(): ReadonlyMap<number, LeaseTrack> {
    return this.db.leases;
  }
  ownCap(storeId: string): number {
    const state = this.sqs.stores.get(storeId);
    return state ? policyOf(state.record).maxConcurrentConsumers : 1;
  }
  capRead(actorId: number, storeId: string): number | undefined {
    return this.operator.readOf(actorId, storeId)?.cap;
  }
  perSliceRead(actorId: number, storeId: string): number | undefined {
    return this.operator.readOf(actorId, storeId)?.perSlice;
  }
  paused(storeId: string): boolean {
    const state = this.sqs.stores.get(storeId);
    return state !== undefined && !isConsumable(state.record.status);
  }
  pausedSince(storeId: string): number | undefined {
    return this.operator.pausedSince(storeId);
  }
  capsSince(storeId: string, from: number): number[] {
    return this.operator.capsSince(storeId, from);
  }
  readActive(actorId: number, storeId: string): boolean | undefined {
    return this.operator.readOf(actorId, storeId)?.active;
  }
  slicesStarted(storeId: string): number {
    return this.db.slicesStarted(storeId);
  }
  attentionMessages(): Iterable<SimMessage> {
    return [...this.sqs.attentionQueue.messages.values(), ...this.sqs.confirmQueue.messages.values()];
  }
  attentionOf(message: SimMessage): { storeId: string; slotId: string; confirm: boolean } | undefined {
    return this.sqs.attentionOf(message);
  }
  dispatchItem(storeId: string): DispatchItem | undefined {
    return this.db.item(storeId);
  }
  effects(task: string): number {
    return this.market.server.effectsByTask.get(task) ?? 0;
  }
  settled(track: { storeId: string; eventId: string; deadLettered: number }): boolean {
    return (
      track.deadLettered > 0 ||
      this.market.server.effected(track.storeId, track.eventId) ||
      this.db.deliveries.records.get(deliveryKey(track.storeId, track.eventId))?.status === 'stale'
    );
  }

  /* ---------------------------------------------------------------- the loop */

  private fireEnvironment(): void {
    const { ctx } = this;
    this.ingest.fire();
    this.reconciler.fire();
    this.operator.fire();
    this.sqs.moves.fire();
    this.upgrade.fire();
    if (ctx.faultsOn && ctx.now >= T0 + this.scenario.faultsEndMs) {
      ctx.faultsOn = false;
      ctx.sched.crashesEnabled = false;
      ctx.sched.log('faults end: from now on the run must drain');
    }
    this.workersPool.arm();
    this.confirmPool.arm();
  }

  private drained(): boolean {
    if (!this.ingest.done() || this.sqs.moves.nextAt() !== undefined) return false;
    for (const state of this.sqs.stores.values()) if (heldMessages(state) > 0) return false;
    for (const track of this.sqs.tasks.values()) if (!this.settled(track)) return false;
    return true;
  }

  /** Every store idle: no slot (so no lease, no attention that can act) and no active mark. */
  private idle(): boolean {
    for (const storeId of this.sqs.stores.keys()) if (notIdle(this.db.item(storeId))) return false;
    return true;
  }

  async run(): Promise<SimResult> {
    const { ctx } = this;
    const { sched } = ctx;
    const horizon = T0 + this.scenario.faultsEndMs + HORIZON_AFTER_FAULTS_MS;
    this.fireEnvironment();
    /** When every task was settled: from then on, every store must go idle within IDLE_BOUND_MS (invariant 8). */
    let drainedAt: number | undefined;
    // A broken variant is meant to fail before the run drains; only the protocol as built, and variants of
    // invariant 8 itself, pay for the wait after it (up to 20 simulated minutes of wake guards and backoffs).
    const checkIdle =
      this.idleTail && (this.variant === undefined || this.variant.breaks === 0 || this.variant.breaks === 8);
    while (!this.invariants.violation) {
      if (drainedAt === undefined && this.drained()) drainedAt = ctx.now;
      if (drainedAt !== undefined && (!checkIdle || this.idle())) break;
      if (drainedAt !== undefined && ctx.now > Math.max(drainedAt, ctx.lastReclaimAt ?? 0) + IDLE_BOUND_MS) {
        this.invariants.notIdle(IDLE_BOUND_MS);
        break;
      }
      if (drainedAt === undefined && ctx.now > horizon) {
        this.invariants.notDrained();
        break;
      }
      if (sched.hasRunnable()) {
        await sched.step();
      } else {
        const candidates = [
          sched.earliestReadyAt(),
          this.ingest.nextAt(),
          this.reconciler.nextTickAt,
          this.operator.nextAt(),
          this.sqs.moves.nextAt(),
          this.upgrade.nextAt(),
          this.workersPool.nextVisibleAt(),
          this.confirmPool.nextVisibleAt(),
          ctx.faultsOn ? T0 + this.scenario.faultsEndMs : undefined,
        ].filter((t): t is number => t !== undefined);
        sched.now = Math.max(ctx.now, Math.min(...candidates));
      }
      this.fireEnvironment();
      this.invariants.check();
    }
    const stats = ctx.stats;
    stats.steps = sched.steps;
    stats.virtualMs = ctx.now - T0;
    stats.crashes = sched.crashes;
    stats.workerTimeouts = sched.timeouts;
    stats.rawDuplicateSuccesses = this.market.server.rawDuplicates();
    for (const record of this.db.deliveries.records.values()) if (record.status === 'stale') stats.stale++;
    for (const track of this.sqs.tasks.values()) {
      if (this.market.server.effected(track.storeId, track.eventId)) stats.delivered++;
      else if (track.deadLettered > 0) stats.deadLettered++;
    }
    const violation = this.invariants.violation;
    return {
      seed: this.scenario.seed,
      variant: this.variant?.name,
      ok: violation === undefined,
      ...(violation ? { violation } : {}),
      stats,
      trace: sched.traceLines,
    };
  }
}

/** `idleTail` false: stop when the tasks are settled, without invariant 8's end-of-run check. */
export const runSeed = async (
  seed: number,
  variant?: Variant,
  trace = false,
  idleTail = true,
): Promise<SimResult> => new World(scenarioFor(seed), variant, trace, idleTail).run();
