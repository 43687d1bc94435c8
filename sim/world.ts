import { handleAttention, type WorkerDeps } from '../lambdas/core/attention.js';
import type { DispatchItem } from '../lambdas/core/dispatch-model.js';
import type { HttpRequest, HttpResponse } from '../lambdas/core/http.js';
import { submitBatch, submitTask, type IngestDeps } from '../lambdas/core/ingest.js';
import { AttentionMessageSchema, type AttentionMessage } from '../lambdas/core/messages.js';
import { deliveryKey } from '../lambdas/core/names.js';
import {
  resolvePolicy,
  PLAN_NAMES,
  MAX_RECEIVE_COUNT,
  type Overrides,
  type Policy,
} from '../lambdas/core/plans.js';
import type {
  AttentionPublisher,
  Clock,
  DeliveryLog,
  DeliveryOutcome,
  DispatchState,
  Marketplace,
  QueueAdmin,
  ReceivedMessage,
  StoreRegistry,
  TaskQueues,
  ScopedTelemetry,
} from '../lambdas/core/ports.js';
import { reconcile, type ReconcilerDeps } from '../lambdas/core/reconcile.js';
import type { StoreRecord } from '../lambdas/core/store-model.js';
import { attentionVisibilitySeconds, CLOCK_SKEW_MS, workerTimeoutSeconds } from '../lambdas/core/timing.js';
import { ATTENTION_QUEUE } from '../lambdas/config/topology.js';
import { MemoryDeliveryLog } from '../test/support/memory-delivery-log.js';
import { MemoryDispatchState } from '../test/support/memory-dispatch-state.js';
import {
  ATTENTION_GRACE_MS,
  EMPTY_POLL_SECONDS,
  MARKETPLACE_TIMEOUT_MS,
  RECONCILER_JITTER_MS,
  RECONCILER_PERIOD_MS,
  STALL_MAX_MS,
  T0,
} from './constants.js';
import { Invariants, type Violation } from './invariants.js';
import { Rng } from './rng.js';
import { Scheduler, defer, type Actor, type ActorKind } from './scheduler.js';
import { SimMarketplace } from './sim-marketplace.js';
import { SimQueue, type SimMessage } from './sim-sqs.js';

/** What the world injects, chosen per seed. */
export interface Faults {
  attentionLoss: number;
  attentionDuplicate: number;
  /** A receive that comes back empty although messages are visible (beyond SQS's long-poll promise). */
  falseEmpty: number;
  partialReceive: number;
  crashProbability: number;
  maxCrashes: number;
  /** An SQS/DynamoDB call that takes up to STALL_MAX_MS (throttled SDK retries), within the lease margin. */
  stall: number;
  marketplace: { transient: number; throttle: number; permanent: number; timeout: number };
}

export interface StoreSpec {
  storeId: string;
  plan: (typeof PLAN_NAMES)[number];
  overrides: Overrides;
  policy: Policy;
  tasks: number;
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
  stores: StoreSpec[];
  requests: IngestRequest[];
  faults: Faults;
  /** After this (virtual ms from start) no more faults are injected: the run must then drain. */
  faultsEndMs: number;
}

/** The protocol pieces a variant may replace or wrap; the simulation itself never changes. */
export interface Variant {
  name: string;
  /** The invariant this broken variant is meant to violate. */
  breaks: number;
  description: string;
  /** Wraps the dispatch state inside one operation (atomic), as seen by one kind of actor. */
  dispatch?: (inner: DispatchState, kind: ActorKind) => DispatchState;
  /** Wraps an actor's task queues port (each call still one scheduled operation). */
  tasks?: (inner: TaskQueues, kind: ActorKind) => TaskQueues;
  marketplace?: (inner: Marketplace) => Marketplace;
  deliveries?: (inner: DeliveryLog) => DeliveryLog;
  stores?: (inner: StoreRegistry, kind: ActorKind) => StoreRegistry;
  clock?: (inner: Clock, kind: ActorKind) => Clock;
  /** Replaces the ingest use case (`batch`: the batch route). */
  submit?: (deps: IngestDeps, request: HttpRequest, batch: boolean) => Promise<HttpResponse>;
  handleAttention?: (deps: WorkerDeps, message: AttentionMessage) => Promise<unknown>;
  reconcile?: (deps: ReconcilerDeps) => Promise<unknown>;
}

const ATTENTION_VISIBILITY_MS = attentionVisibilitySeconds(workerTimeoutSeconds()) * 1000;
const HORIZON_AFTER_FAULTS_MS = 60 * 60_000;
const TENANT = 'tenant-1';

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
    partialReceive: 0.2,
    crashProbability: [0, 0.003, 0.01, 0.02][level] as number,
    maxCrashes: [0, 3, 6, 10][level] as number,
    stall: [0, 0.01, 0.04, 0.1][level] as number,
    marketplace: {
      transient: [0, 0.03, 0.08, 0.15][level] as number,
      throttle: [0, 0.01, 0.03, 0.05][level] as number,
      permanent: [0, 0.01, 0.02, 0.03][level] as number,
      timeout: [0, 0.01, 0.02, 0.04][level] as number,
    },
  };
  return { seed, workers: rng.int(1, 3), stores, requests, faults, faultsEndMs: 180_000 };
};

interface TaskTrack {
  storeId: string;
  eventId: string;
  /** Copies in the store queue (visible, in flight or delayed). */
  copies: number;
  deadLettered: number;
  accepted: boolean;
}

export interface LeaseTrack {
  storeId: string;
  slotId: string;
  fence: number;
  /** True time the lease was taken. */
  startedAt: number;
  received: number;
  calls: number;
}

interface StoreState {
  spec: StoreSpec;
  record: StoreRecord;
  queue: SimQueue;
  dlq: SimQueue;
  /** Live ingest actors that made a task durable and have not yet bumped enqSeq after it. */
  untracked: Set<number>;
  /** Ingest actors that crashed between their send and their bump: the sweep may find their task (excused). */
  orphans: Set<number>;
  /** A false-empty receive was injected: only the sweep may find this backlog (excused). */
  falseEmpty: boolean;
}

export interface SimStats {
  steps: number;
  virtualMs: number;
  tasks: number;
  delivered: number;
  deadLettered: number;
  crashes: number;
  attentionsPublished: number;
  attentionsLost: number;
  rawDuplicateSuccesses: number;
  sweepRescues: number;
  maxAttentionsPerSlot: number;
  maxStrandedMs: number;
  maxStrandedRatio: number;
  maxWaitSlicesRatio: number;
}

export interface SimResult {
  seed: number;
  variant: string | undefined;
  ok: boolean;
  violation?: Violation;
  stats: SimStats;
  trace: string[];
}

class SimTelemetry implements ScopedTelemetry {
  constructor(
    private readonly sched: Scheduler,
    private readonly actor: Actor,
  ) {}
  count(): void {}
  timing(): void {}
  private log(level: string, message: string, fields?: Record<string, unknown>): void {
    if (this.sched.tracing)
      this.sched.log(
        `${this.actor.name}   [${level}] ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`,
      );
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.log('error', message, fields);
  }
  /** The trace names the actor already; a scope's fields would only lengthen it. */
  scoped(): SimTelemetry {
    return this;
  }
  end(): void {}
}

/**
 * One simulated deployment: the REAL core use cases (submitTask/submitBatch, handleAttention, reconcile)
 * wired to in-memory ports whose every call is a scheduling point: the DynamoDB dispatch state and delivery
 * log (test/support's in-memory stand-ins, kept to the DynamoDB adapter's conditions by the contract
 * tests), simulated SQS queues, a marketplace, per-actor skewed clocks; plus the environment: integrator
 * requests, the SQS event source with a pool of W workers, and the reconciler schedule.
 */
export class World {
  readonly sched: Scheduler;
  readonly rng: Rng;
  readonly dispatch = new MemoryDispatchState();
  readonly market: SimMarketplace;
  readonly stores = new Map<string, StoreState>();
  readonly attentionQueue: SimQueue;
  readonly tasks = new Map<string, TaskTrack>();
  readonly leases = new Map<number, LeaseTrack>();
  readonly slicesStarted = new Map<string, number>();
  readonly deliveries = new MemoryDeliveryLog();
  readonly invariants: Invariants;
  readonly stats: SimStats;
  private readonly byQueueUrl = new Map<string, StoreState>();
  private readonly attentionMeta = new WeakMap<SimMessage, { storeId: string; slotId: string }>();
  private readonly env: Actor;
  private readonly pending: IngestRequest[];
  private freeWorkers: number;
  private pollArmed = false;
  private reconcilerRunning = false;
  reconcilerCrashes = 0;
  private nextTickAt: number;
  private liveIngests = 0;
  private idSeq = 0;
  private faultsOn = true;

  constructor(
    readonly scenario: Scenario,
    readonly variant: Variant | undefined,
    trace = false,
  ) {
    this.rng = new Rng(scenario.seed);
    this.sched = new Scheduler(this.rng, T0, {
      crashProbability: scenario.faults.crashProbability,
      maxCrashes: scenario.faults.maxCrashes,
      trace,
    });
    this.market = new SimMarketplace();
    this.env = this.sched.newActor('env', 'env', 0);
    this.attentionQueue = new SimQueue('sim://attention', this.rng, ATTENTION_QUEUE.maxReceiveCount, (m) => {
      this.stats.attentionsLost++;
      this.sched.log(`attention ${m.body} moved to the attention DLQ (poison)`);
    });
    this.freeWorkers = scenario.workers;
    this.pending = scenario.requests.map((r) => ({ ...r, at: T0 + r.at }));
    this.nextTickAt = T0 + this.rng.int(0, RECONCILER_PERIOD_MS);
    this.stats = {
      steps: 0,
      virtualMs: 0,
      tasks: 0,
      delivered: 0,
      deadLettered: 0,
      crashes: 0,
      attentionsPublished: 0,
      attentionsLost: 0,
      rawDuplicateSuccesses: 0,
      sweepRescues: 0,
      maxAttentionsPerSlot: 0,
      maxStrandedMs: 0,
      maxStrandedRatio: 0,
      maxWaitSlicesRatio: 0,
    };
    for (const spec of scenario.stores) {
      const queue = new SimQueue(`sim://s/${spec.storeId}`, this.rng, MAX_RECEIVE_COUNT, (m) =>
        this.redriven(state, m),
      );
      const state: StoreState = {
        spec,
        record: {
          storeId: spec.storeId,
          tenantId: TENANT,
          marketplace: 'acme',
          plan: spec.plan,
          status: 'active',
          overrides: spec.overrides,
          queueUrl: queue.url,
          deadLetterQueueUrl: `sim://d/${spec.storeId}`,
          createdAt: T0,
          updatedAt: T0,
        },
        queue,
        dlq: new SimQueue(`sim://d/${spec.storeId}`, this.rng, undefined),
        untracked: new Set(),
        orphans: new Set(),
        falseEmpty: false,
      };
      this.stores.set(spec.storeId, state);
      this.byQueueUrl.set(queue.url, state);
      this.byQueueUrl.set(state.dlq.url, state);
      this.slicesStarted.set(spec.storeId, 0);
      void this.dispatch.ensure(spec.storeId);
    }
    this.invariants = new Invariants(this);
  }

  get now(): number {
    return this.sched.now;
  }

  storeState(storeId: string): StoreState | undefined {
    return this.stores.get(storeId);
  }

  attentionOf(message: SimMessage): { storeId: string; slotId: string } | undefined {
    return this.attentionMeta.get(message);
  }

  dispatchItem(storeId: string): DispatchItem | undefined {
    return this.dispatch.items.get(storeId);
  }

  /* ---------------------------------------------------------------- latencies and faults */

  private skew(): number {
    return this.rng.int(-CLOCK_SKEW_MS / 2, CLOCK_SKEW_MS / 2);
  }

  private awsLatency(): number {
    const base = this.rng.int(1, 20);
    return this.faultsOn && this.rng.chance(this.scenario.faults.stall)
      ? base + this.rng.int(100, STALL_MAX_MS)
      : base;
  }

  /* ---------------------------------------------------------------- task accounting (invariant 1) */

  private taskOf(body: string): TaskTrack | undefined {
    try {
      const parsed = JSON.parse(body) as { storeId?: string; eventId?: string };
      if (typeof parsed.storeId !== 'string' || typeof parsed.eventId !== 'string') return undefined;
      const key = deliveryKey(parsed.storeId, parsed.eventId);
      let track = this.tasks.get(key);
      if (!track) {
        track = {
          storeId: parsed.storeId,
          eventId: parsed.eventId,
          copies: 0,
          deadLettered: 0,
          accepted: false,
        };
        this.tasks.set(key, track);
        this.stats.tasks++;
      }
      return track;
    } catch {
      return undefined;
    }
  }

  private taskSent(state: StoreState, body: string, actor: Actor): void {
    state.queue.send(body, this.now);
    const track = this.taskOf(body);
    if (track) track.copies++;
    state.untracked.add(actor.id);
  }

  private taskRemoved(message: SimMessage): void {
    const track = this.taskOf(message.body);
    if (!track) return;
    track.copies--;
    this.invariants.taskLeftQueue(track);
  }

  private redriven(state: StoreState, message: SimMessage): void {
    state.dlq.send(message.body, this.now);
    const track = this.taskOf(message.body);
    if (track) {
      track.deadLettered++;
      track.copies--;
    }
  }

  /* ---------------------------------------------------------------- ports */

  private label(name: string, args: unknown[]): string {
    return this.sched.tracing ? `${name}(${args.map((a) => JSON.stringify(a)).join(', ')})` : name;
  }

  /** Every method of `target` becomes one scheduled operation of `actor`, its effect applied atomically when picked. */
  private scheduled<T extends object>(actor: Actor, prefix: string, target: T, hooks = false): T {
    return new Proxy(target, {
      get: (inner, property) => {
        const method = (inner as unknown as Record<PropertyKey, unknown>)[property];
        if (typeof method !== 'function') return method;
        const name = String(property);
        return (...args: unknown[]) =>
          this.sched.call(actor, this.label(`${prefix}.${name}`, args), this.awsLatency(), () => {
            if (hooks) this.beforeDispatch(actor, name, args);
            const result = (method as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
            return result.then((value) => {
              if (hooks) this.afterDispatch(actor, name, args, value);
              if (this.sched.tracing) this.sched.log(`${actor.name}   ↳ ${JSON.stringify(value)}`);
              return value;
            });
          });
      },
    });
  }

  private dispatchFor(actor: Actor): DispatchState {
    const inner = this.variant?.dispatch ? this.variant.dispatch(this.dispatch, actor.kind) : this.dispatch;
    return this.scheduled(actor, 'dispatch', inner, true);
  }

  private beforeDispatch(actor: Actor, name: string, args: unknown[]): void {
    if (name === 'markActive' && actor.kind === 'reconciler') {
      const state = this.stores.get(args[0] as string);
      if (state) this.invariants.sweepRescue(state);
    }
  }

  private afterDispatch(actor: Actor, name: string, args: unknown[], value: unknown): void {
    const storeId = args[0] as string;
    if (name === 'recordEnqueued' && actor.kind === 'ingest') {
      this.stores.get(storeId)?.untracked.delete(actor.id);
    }
    if (name === 'acquire' && (value as { ok: boolean }).ok) {
      const item = (value as { item: DispatchItem }).item;
      const slotId = args[1] as string;
      const slot = item.slots[slotId];
      this.leases.set(actor.id, {
        storeId,
        slotId,
        fence: slot?.s === 'l' ? slot.f : -1,
        startedAt: this.now,
        received: 0,
        calls: 0,
      });
      this.slicesStarted.set(storeId, (this.slicesStarted.get(storeId) ?? 0) + 1);
      // A new lease receives whatever an earlier false-empty receive or a crashed ingest left untracked.
      const state = this.stores.get(storeId);
      if (state) {
        state.falseEmpty = false;
        state.orphans.clear();
      }
    }
  }

  private tasksFor(actor: Actor): TaskQueues {
    const port: TaskQueues = {
      send: (url, body) =>
        this.sched.call(actor, 'sqs.send', this.awsLatency(), () => {
          this.taskSent(this.queueState(url), body, actor);
        }),
      sendBatch: (url, entries) =>
        this.sched.call(actor, `sqs.sendBatch(${entries.length})`, this.awsLatency(), () => {
          const state = this.queueState(url);
          for (const entry of entries) this.taskSent(state, entry.body, actor);
          return { failed: [] };
        }),
      receive: (url, opts) =>
        this.sched.call(actor, `sqs.receive(${opts.maxMessages})`, this.awsLatency(), () => {
          const state = this.queueState(url);
          if (this.faultsOn && this.rng.chance(this.scenario.faults.falseEmpty)) {
            if (state.queue.hasVisible(this.now)) {
              state.falseEmpty = true;
              this.sched.log(`${actor.name}   ↳ false-empty receive injected`);
            }
            return [];
          }
          const take = () => this.receive(actor, state, opts.maxMessages, opts.visibilitySeconds);
          const first = take();
          if (first.length > 0 || opts.waitSeconds <= 0) return first;
          return defer(opts.waitSeconds * 1000, take);
        }),
      deleteBatch: (url, handles) =>
        this.sched.call(actor, `sqs.deleteBatch(${handles.length})`, this.awsLatency(), () => {
          const state = this.queueState(url);
          let stale = 0;
          for (const handle of handles) {
            const message = state.queue.byReceipt(handle);
            if (!message) {
              stale++;
              continue;
            }
            state.queue.remove(message, this.now);
            this.taskRemoved(message);
          }
          if (stale > 0) throw new Error(`DeleteMessageBatch: ${stale} receipt handle(s) no longer valid`);
        }),
      changeVisibility: (url, entries) =>
        this.sched.call(actor, `sqs.changeVisibility(${entries.length})`, this.awsLatency(), () => {
          const state = this.queueState(url);
          // The adapter ignores per-entry failures (a stale handle): so does SQS's batch answer.
          for (const entry of entries) {
            const message = state.queue.byReceipt(entry.receiptHandle);
            if (message) message.visibleAt = this.now + entry.seconds * 1000;
          }
        }),
      resend: async (url, messages, delaySeconds) => {
        // As the adapter: copies first, originals after (a crash in between leaves a duplicate, never a loss).
        await this.sched.call(
          actor,
          `sqs.sendBatch(${messages.length}, delay ${delaySeconds})`,
          this.awsLatency(),
          () => {
            const state = this.queueState(url);
            for (const m of messages) {
              state.queue.send(m.body, this.now, delaySeconds * 1000);
              const track = this.taskOf(m.body);
              if (track) track.copies++;
            }
          },
        );
        await port.deleteBatch(
          url,
          messages.map((m) => m.receiptHandle),
        );
      },
      deadLetter: (url, body) =>
        this.sched.call(actor, 'sqs.deadLetter', this.awsLatency(), () => {
          const state = this.queueState(url);
          state.dlq.send(body, this.now);
          const track = this.taskOf(body);
          if (track) track.deadLettered++;
        }),
    };
    return this.variant?.tasks ? this.variant.tasks(port, actor.kind) : port;
  }

  private receive(
    actor: Actor,
    state: StoreState,
    max: number,
    visibilitySeconds: number,
  ): ReceivedMessage[] {
    const want = this.rng.chance(this.scenario.faults.partialReceive) ? this.rng.int(1, max) : max;
    const messages = state.queue.receive(this.now, want, visibilitySeconds * 1000);
    const lease = this.leases.get(actor.id);
    if (lease && lease.storeId === state.spec.storeId) {
      lease.received += messages.length;
      this.invariants.received(state, lease);
    }
    return messages.map((m) => ({
      messageId: m.id,
      receiptHandle: m.receipt as string,
      body: m.body,
      receiveCount: m.receiveCount,
      sentAt: m.sentAt,
    }));
  }

  private queueState(url: string): StoreState {
    const state = this.byQueueUrl.get(url);
    if (!state) throw new Error(`no such queue ${url}`);
    return state;
  }

  private attentionFor(actor: Actor): AttentionPublisher {
    return {
      publish: (message, delaySeconds) =>
        this.sched.call(
          actor,
          this.label('attention.publish', [message.storeId, message.slotId, message.reason, delaySeconds]),
          this.awsLatency(),
          () => {
            this.stats.attentionsPublished++;
            if (this.faultsOn && this.rng.chance(this.scenario.faults.attentionLoss)) {
              this.stats.attentionsLost++;
              this.sched.log(`${actor.name}   ↳ attention lost (injected)`);
              return;
            }
            const body = JSON.stringify(message);
            const meta = { storeId: message.storeId, slotId: message.slotId };
            this.attentionMeta.set(this.attentionQueue.send(body, this.now, delaySeconds * 1000), meta);
            if (this.faultsOn && this.rng.chance(this.scenario.faults.attentionDuplicate)) {
              const copy = this.attentionQueue.send(
                body,
                this.now,
                delaySeconds * 1000 + this.rng.int(0, 3000),
                true,
              );
              this.attentionMeta.set(copy, meta);
            }
          },
        ),
    };
  }

  private marketplaceFor(actor: Actor): Marketplace {
    const port: Marketplace = {
      deliver: (request) => {
        const plan = this.planOutcome();
        const storeId = request.storeId;
        const inFlight = this.market.start(storeId);
        this.invariants.callStarted(actor, storeId, inFlight);
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          this.market.end(storeId);
        };
        return this.sched.call(
          actor,
          this.label('marketplace.deliver', [request.idempotencyKey, plan.outcome.kind]),
          plan.latencyMs,
          () => {
            end();
            if (plan.serverApplies) {
              this.market.succeed(request);
              this.invariants.effectApplied(deliveryKey(request.storeId, request.body.eventId));
            }
            return plan.outcome;
          },
          (applied) => {
            if (!applied) end();
          },
        );
      },
    };
    return this.variant?.marketplace ? this.variant.marketplace(port) : port;
  }

  private planOutcome(): { outcome: DeliveryOutcome; latencyMs: number; serverApplies: boolean } {
    const latencyMs = this.rng.int(20, 400);
    const f = this.scenario.faults.marketplace;
    const r = this.faultsOn ? this.rng.next() : 1;
    let edge = f.transient;
    if (r < edge)
      return { outcome: { kind: 'transient', status: 503, error: '503' }, latencyMs, serverApplies: false };
    edge += f.throttle;
    if (r < edge)
      return {
        outcome: { kind: 'throttled', status: 429, retryAfterSeconds: this.rng.int(1, 10) },
        latencyMs,
        serverApplies: false,
      };
    edge += f.permanent;
    if (r < edge)
      return {
        outcome: { kind: 'permanent', status: 400, error: '400 rejected' },
        latencyMs,
        serverApplies: false,
      };
    edge += f.timeout;
    if (r < edge)
      return {
        outcome: { kind: 'transient', error: 'timeout' },
        latencyMs: MARKETPLACE_TIMEOUT_MS,
        // A timed-out request may still have been processed by the marketplace.
        serverApplies: this.rng.chance(0.5),
      };
    return { outcome: { kind: 'ok', status: 200 }, latencyMs, serverApplies: true };
  }

  private deliveriesFor(actor: Actor): DeliveryLog {
    const inner = this.variant?.deliveries ? this.variant.deliveries(this.deliveries) : this.deliveries;
    return this.scheduled(actor, 'deliveries', inner);
  }

  private storesFor(actor: Actor): StoreRegistry {
    const all = () => [...this.stores.values()].map((s) => ({ ...s.record }));
    const port: StoreRegistry = {
      get: (storeId) =>
        this.sched.call(actor, 'stores.get', this.awsLatency(), () => {
          const state = this.stores.get(storeId);
          return state ? { ...state.record } : undefined;
        }),
      scan: (cursor, limit) =>
        this.sched.call(actor, 'stores.scan', this.awsLatency(), () => {
          const start = cursor ? Number(cursor) : 0;
          const stores = all().slice(start, start + limit);
          const next = start + limit < this.stores.size ? { cursor: String(start + limit) } : {};
          return { stores, ...next };
        }),
      create: () => Promise.reject(new Error('not simulated')),
      put: () => Promise.reject(new Error('not simulated')),
    };
    return this.variant?.stores ? this.variant.stores(port, actor.kind) : port;
  }

  private queueAdminFor(actor: Actor): QueueAdmin {
    return {
      pending: (url) =>
        this.sched.call(actor, 'sqs.approximateCount', this.awsLatency(), () =>
          this.queueState(url).queue.approximateSize(this.now),
        ),
      counts: () => Promise.reject(new Error('not simulated')),
      createStoreQueues: () => Promise.reject(new Error('not simulated')),
      redrive: () => Promise.reject(new Error('not simulated')),
      // No redrive begins in this model, so no store carries a redrive mark for the reconciler to check.
      redriveRunning: () => Promise.reject(new Error('not simulated')),
      purge: () => Promise.reject(new Error('not simulated')),
    };
  }

  private commonDeps(actor: Actor) {
    const clock = this.sched.clockFor(actor);
    return {
      dispatch: this.dispatchFor(actor),
      attention: this.attentionFor(actor),
      clock: this.variant?.clock ? this.variant.clock(clock, actor.kind) : clock,
      ids: { next: () => `slot-${++this.idSeq}` },
      telemetry: new SimTelemetry(this.sched, actor),
    };
  }

  /* ---------------------------------------------------------------- actors */

  private spawnIngest(request: IngestRequest): void {
    const actor = this.sched.newActor('ingest', `ingest:${request.storeId}`, this.skew());
    const state = this.stores.get(request.storeId) as StoreState;
    this.liveIngests++;
    const deps: IngestDeps = {
      ...this.commonDeps(actor),
      stores: this.storesFor(actor),
      tasks: this.tasksFor(actor),
      deliveries: this.deliveriesFor(actor),
    };
    const task = (eventId: string) => ({
      eventId,
      type: 'inventory.update',
      payload: { sku: `sku-${eventId}`, quantity: 1 },
    });
    const body = request.batch ? { tasks: request.eventIds.map(task) } : task(request.eventIds[0] as string);
    const http: HttpRequest = {
      method: 'POST',
      resource: request.batch ? '/v1/stores/{storeId}/tasks/batch' : '/v1/stores/{storeId}/tasks',
      pathParameters: { storeId: request.storeId },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      tenantId: TENANT,
      requestId: `req-${actor.id}`,
    };
    const retry = () => {
      if (request.attempt < 3)
        this.pending.push({
          ...request,
          at: this.now + this.rng.int(500, 5_000),
          attempt: request.attempt + 1,
        });
      this.pending.sort((a, b) => a.at - b.at);
    };
    actor.onCrash = () => {
      this.liveIngests--;
      if (state.untracked.delete(actor.id)) state.orphans.add(actor.id);
      retry();
    };
    const submit = this.variant?.submit
      ? this.variant.submit(deps, http, request.batch)
      : request.batch
        ? submitBatch(deps, http)
        : submitTask(deps, http);
    submit
      .then(
        (response) => {
          this.sched.log(`${actor.name} answered ${response.status}`);
          if (response.status === 202) {
            for (const eventId of request.eventIds) {
              const track = this.tasks.get(deliveryKey(request.storeId, eventId));
              if (track) track.accepted = true;
            }
          } else retry();
        },
        (error: unknown) => {
          this.sched.log(`${actor.name} failed ${String(error)}`);
          retry();
        },
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          this.liveIngests--;
          // A finished request no longer excuses an untracked backlog: it either bumped enqSeq or never will.
          state.untracked.delete(actor.id);
        }
        this.sched.notify();
      });
  }

  private spawnWorker(message: SimMessage): void {
    const actor = this.sched.newActor('worker', 'worker', this.skew());
    this.freeWorkers--;
    const parsed = AttentionMessageSchema.parse(JSON.parse(message.body));
    const receipt = message.receipt;
    this.sched.log(`${actor.name} starts on attention ${parsed.storeId}/${parsed.slotId} (${parsed.reason})`);
    const deps: WorkerDeps = {
      ...this.commonDeps(actor),
      stores: this.storesFor(actor),
      tasks: this.tasksFor(actor),
      deliveries: this.deliveriesFor(actor),
      marketplace: this.marketplaceFor(actor),
      random: () => this.rng.next(),
      settings: { emptyPollSeconds: EMPTY_POLL_SECONDS, marketplaceTimeoutMs: MARKETPLACE_TIMEOUT_MS },
    };
    const done = () => {
      this.freeWorkers++;
      this.leases.delete(actor.id);
    };
    actor.onCrash = done;
    const handle = this.variant?.handleAttention ?? handleAttention;
    handle(deps, parsed)
      .then(
        (outcome) => {
          if (this.sched.tracing) this.sched.log(`${actor.name} done: ${JSON.stringify(outcome)}`);
          // The event source deletes a record that succeeded (partial batch response).
          const current = receipt ? this.attentionQueue.byReceipt(receipt) : undefined;
          if (current) this.attentionQueue.remove(current, this.now);
        },
        (error: unknown) => this.sched.log(`${actor.name} threw ${String(error)}: the attention comes back`),
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          done();
        }
        this.sched.notify();
      });
  }

  private spawnReconciler(): void {
    const actor = this.sched.newActor('reconciler', 'reconciler', this.skew());
    this.reconcilerRunning = true;
    const deps: ReconcilerDeps = {
      ...this.commonDeps(actor),
      stores: this.storesFor(actor),
      queues: this.queueAdminFor(actor),
      settings: { attentionGraceMs: ATTENTION_GRACE_MS, sweepStoresPerRun: 35 },
    };
    actor.onCrash = () => {
      this.reconcilerRunning = false;
      this.reconcilerCrashes++;
    };
    (this.variant?.reconcile ?? reconcile)(deps)
      .then(
        (report) => this.sched.tracing && this.sched.log(`${actor.name} report ${JSON.stringify(report)}`),
        (error: unknown) => this.sched.log(`${actor.name} threw ${String(error)}`),
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          this.reconcilerRunning = false;
        }
        this.sched.notify();
      });
  }

  /** The SQS event source: when a worker is free and an attention is visible, invoke a worker with it. */
  private armPoller(): void {
    if (this.pollArmed || this.freeWorkers <= 0) return;
    if (!this.attentionQueue.hasVisible(this.now)) return;
    this.pollArmed = true;
    void this.sched.call(this.env, 'eventsource.poll', this.rng.int(0, 30), () => {
      this.pollArmed = false;
      if (this.freeWorkers <= 0) return;
      const [message] = this.attentionQueue.receive(this.now, 1, ATTENTION_VISIBILITY_MS);
      if (message) this.spawnWorker(message);
    });
  }

  private nextAttentionVisibleAt(): number | undefined {
    if (this.pollArmed || this.freeWorkers <= 0) return undefined;
    let min: number | undefined;
    for (const m of this.attentionQueue.messages.values())
      if (min === undefined || m.visibleAt < min) min = m.visibleAt;
    return min;
  }

  private fireEnvironment(): void {
    while (this.pending.length > 0 && (this.pending[0] as IngestRequest).at <= this.now) {
      this.spawnIngest(this.pending.shift() as IngestRequest);
    }
    if (this.nextTickAt <= this.now) {
      if (!this.reconcilerRunning) this.spawnReconciler();
      this.nextTickAt = this.now + RECONCILER_PERIOD_MS + this.rng.int(0, RECONCILER_JITTER_MS);
    }
    if (this.faultsOn && this.now >= T0 + this.scenario.faultsEndMs) {
      this.faultsOn = false;
      this.sched.crashesEnabled = false;
      this.sched.log('faults end: from now on the run must drain');
    }
    this.armPoller();
  }

  /** Delivered (the marketplace applied it), dead-lettered, or settled as stale (superseded by a newer version). */
  settled(track: { storeId: string; eventId: string; deadLettered: number }): boolean {
    return (
      track.deadLettered > 0 ||
      this.market.effected(track.storeId, track.eventId) ||
      this.deliveries.records.get(deliveryKey(track.storeId, track.eventId))?.status === 'stale'
    );
  }

  private drained(): boolean {
    if (this.pending.length > 0 || this.liveIngests > 0) return false;
    for (const state of this.stores.values()) if (state.queue.messages.size > 0) return false;
    for (const track of this.tasks.values()) if (!this.settled(track)) return false;
    return true;
  }

  async run(): Promise<SimResult> {
    const horizon = T0 + this.scenario.faultsEndMs + HORIZON_AFTER_FAULTS_MS;
    this.fireEnvironment();
    while (!this.invariants.violation) {
      if (this.drained()) break;
      if (this.now > horizon) {
        this.invariants.notDrained();
        break;
      }
      if (this.sched.hasRunnable()) {
        await this.sched.step();
      } else {
        const candidates = [
          this.sched.earliestReadyAt(),
          this.pending[0]?.at,
          this.nextTickAt,
          this.nextAttentionVisibleAt(),
          this.faultsOn ? T0 + this.scenario.faultsEndMs : undefined,
        ].filter((t): t is number => t !== undefined);
        const next = Math.max(this.now, Math.min(...candidates));
        this.sched.now = next;
      }
      this.fireEnvironment();
      this.invariants.check();
    }
    this.stats.steps = this.sched.steps;
    this.stats.virtualMs = this.now - T0;
    this.stats.crashes = this.sched.crashes;
    this.stats.rawDuplicateSuccesses = this.market.rawDuplicates();
    for (const track of this.tasks.values()) {
      if (this.market.effected(track.storeId, track.eventId)) this.stats.delivered++;
      else if (track.deadLettered > 0) this.stats.deadLettered++;
    }
    const violation = this.invariants.violation;
    return {
      seed: this.scenario.seed,
      variant: this.variant?.name,
      ok: violation === undefined,
      ...(violation ? { violation } : {}),
      stats: this.stats,
      trace: this.sched.traceLines,
    };
  }
}

export const runSeed = async (seed: number, variant?: Variant, trace = false): Promise<SimResult> =>
  new World(scenarioFor(seed), variant, trace).run();
