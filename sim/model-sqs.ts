import { attentionRoute } from '../lambdas/core/messages.js';
import { deliveryKey } from '../lambdas/core/names.js';
import { MAX_RECEIVE_COUNT } from '../lambdas/core/plans.js';
import type { AttentionPublisher, QueueAdmin, ReceivedMessage, TaskQueues } from '../lambdas/core/ports.js';
import { ATTENTION_QUEUE } from '../lambdas/config/topology.js';
import { T0 } from './constants.js';
import type { SimContext } from './context.js';
import { TENANT, type StoreSpec } from './scenario.js';
import { defer, type Actor } from './scheduler.js';
import { RedriveMoves } from './model-redrive.js';
import { SimQueue, type SimMessage } from './sim-sqs.js';
import type { LeaseTrack, StoreState, TaskTrack } from './world-view.js';

/**
 * SQS as the protocol sees it: the shared attention queue and each store's work queue and DLQ, behind
 * the ports the core uses (TaskQueues, AttentionPublisher, QueueAdmin), every call one scheduled
 * operation. It also keeps the task accounting invariant 1 reads: copies of each task in its queue and
 * its dead letters.
 */
export class SqsModel {
  readonly attentionQueue: SimQueue;
  /** The confirm queue: `confirm` attentions (a slice's empty look handed on), taken by a pool of its own. */
  readonly confirmQueue: SimQueue;
  readonly stores = new Map<string, StoreState>();
  readonly tasks = new Map<string, TaskTrack>();
  private readonly byQueueUrl = new Map<string, StoreState>();
  /** Every store queue by its URL: work, high-priority and dead-letter queues. */
  private readonly queues = new Map<string, SimQueue>();
  private readonly attentionMeta = new WeakMap<
    SimMessage,
    { storeId: string; slotId: string; confirm: boolean }
  >();
  /** Dead-letter moves started by a redrive (sim/model-redrive.ts). */
  readonly moves: RedriveMoves;

  constructor(
    private readonly ctx: SimContext,
    private readonly leaseOf: (actorId: number) => LeaseTrack | undefined,
  ) {
    this.moves = new RedriveMoves(ctx, (body) => this.taskOf(body));
    this.attentionQueue = new SimQueue('sim://attention', ctx.rng, ATTENTION_QUEUE.maxReceiveCount, (m) => {
      ctx.stats.attentionsLost++;
      ctx.sched.log(`attention ${m.body} moved to the attention DLQ (poison)`);
    });
    this.confirmQueue = new SimQueue('sim://confirm', ctx.rng, ATTENTION_QUEUE.maxReceiveCount, (m) => {
      ctx.stats.attentionsLost++;
      ctx.sched.log(`attention ${m.body} moved to the attention DLQ (poison, confirm queue)`);
    });
  }

  addStore(spec: StoreSpec): StoreState {
    const queue = new SimQueue(`sim://s/${spec.storeId}`, this.ctx.rng, MAX_RECEIVE_COUNT, (m) =>
      this.redriven(state, m),
    );
    // The high-priority queue redrives into the same DLQ.
    const high = new SimQueue(`sim://h/${spec.storeId}`, this.ctx.rng, MAX_RECEIVE_COUNT, (m) => {
      this.reachedHigh(state, m);
      this.redriven(state, m);
    });
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
        priorityQueueUrl: high.url,
        deadLetterQueueUrl: `sim://d/${spec.storeId}`,
        createdAt: T0,
        updatedAt: T0,
      },
      queue,
      high,
      dlq: new SimQueue(`sim://d/${spec.storeId}`, this.ctx.rng, undefined),
      untracked: new Set(),
      orphans: new Set(),
      falseEmpty: false,
    };
    this.stores.set(spec.storeId, state);
    for (const q of [queue, high, state.dlq]) {
      this.byQueueUrl.set(q.url, state);
      this.queues.set(q.url, q);
    }
    return state;
  }

  private reachedHigh(state: StoreState, message: SimMessage): void {
    const track = this.taskOf(message.body);
    if (track) this.ctx.checks.highReached(state.spec.storeId, track.eventId);
  }

  attentionOf(message: SimMessage): { storeId: string; slotId: string; confirm: boolean } | undefined {
    return this.attentionMeta.get(message);
  }

  /* ---------------------------------------------------------------- task accounting (invariant 1) */

  taskOf(body: string): TaskTrack | undefined {
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
        this.ctx.stats.tasks++;
      }
      return track;
    } catch {
      return undefined;
    }
  }

  private taskSent(state: StoreState, queue: SimQueue, body: string, actor: Actor): void {
    const { ctx } = this;
    const message = queue.send(body, ctx.now);
    const track = this.taskOf(body);
    if (track) track.copies++;
    if (track && queue === state.high) ctx.checks.highSent(state, track.eventId);
    state.untracked.add(actor.id);
    if (!ctx.faultsOn) return;
    if (ctx.rng.chance(ctx.scenario.faults.nearReceiveLimit))
      message.receiveCount = MAX_RECEIVE_COUNT - ctx.rng.int(1, 3);
    if (ctx.rng.chance(ctx.scenario.faults.duplicateTask)) {
      // SQS at-least-once: the same message (same MessageId) can be received twice while it is in the queue.
      // (A copy revived after its delete, which only the sweep would find, is not modelled.)
      queue.send(body, ctx.now, 0, false, message.messageId);
      if (track) track.copies++;
      ctx.stats.duplicateTasks++;
    }
  }

  private taskRemoved(message: SimMessage): void {
    const track = this.taskOf(message.body);
    if (!track) return;
    track.copies--;
    this.ctx.checks.taskLeftQueue(track);
  }

  private redriven(state: StoreState, message: SimMessage): void {
    state.dlq.send(message.body, this.ctx.now);
    const track = this.taskOf(message.body);
    if (track) {
      track.deadLettered++;
      track.copies--;
    }
  }

  private queueState(url: string): StoreState {
    const state = this.byQueueUrl.get(url);
    if (!state) throw new Error(`no such queue ${url}`);
    return state;
  }

  private queueAt(url: string): SimQueue {
    const queue = this.queues.get(url);
    if (!queue) throw new Error(`no such queue ${url}`);
    return queue;
  }

  /* ---------------------------------------------------------------- ports */

  tasksFor(actor: Actor): TaskQueues {
    const { ctx } = this;
    const port: TaskQueues = {
      send: (url, body) =>
        ctx.sched.call(actor, 'sqs.send', ctx.awsLatency(actor, 'sqs.send'), () => {
          this.taskSent(this.queueState(url), this.queueAt(url), body, actor);
        }),
      sendBatch: (url, entries) =>
        ctx.sched.call(
          actor,
          `sqs.sendBatch(${entries.length})`,
          ctx.awsLatency(actor, 'sqs.sendBatch'),
          () => {
            const state = this.queueState(url);
            for (const entry of entries) this.taskSent(state, this.queueAt(url), entry.body, actor);
            return { failed: [] };
          },
        ),
      receive: (url, opts) =>
        ctx.sched.call(
          actor,
          `sqs.receive(${opts.maxMessages})`,
          ctx.awsLatency(actor, 'sqs.receive'),
          () => {
            const state = this.queueState(url);
            const queue = this.queueAt(url);
            if (ctx.faultsOn && ctx.rng.chance(ctx.scenario.faults.falseEmpty)) {
              if (queue.hasVisible(ctx.now)) {
                state.falseEmpty = true;
                if (queue === state.high) ctx.checks.highMissed(state.spec.storeId);
                ctx.sched.log(`${actor.name}   ↳ false-empty receive injected`);
              }
              return [];
            }
            // A short poll samples SQS's servers and can miss what a small queue holds: the protocol must
            // not rely on one (its "empty" decision uses long polls), so this is no excuse for invariant 2.
            if (
              opts.waitSeconds <= 0 &&
              ctx.faultsOn &&
              queue.hasVisible(ctx.now) &&
              ctx.rng.chance(ctx.scenario.faults.shortPollMiss)
            ) {
              if (queue === state.high) ctx.checks.highMissed(state.spec.storeId);
              ctx.sched.log(`${actor.name}   ↳ short poll missed the queue's messages (injected)`);
              return [];
            }
            const take = () => this.receive(actor, state, queue, opts.maxMessages, opts.visibilitySeconds);
            const first = take();
            if (first.length > 0 || opts.waitSeconds <= 0) return first;
            return defer(opts.waitSeconds * 1000, take);
          },
        ),
      deleteBatch: (url, handles) =>
        ctx.sched.call(
          actor,
          `sqs.deleteBatch(${handles.length})`,
          ctx.awsLatency(actor, 'sqs.deleteBatch'),
          () => {
            const queue = this.queueAt(url);
            let stale = 0;
            for (const handle of handles) {
              const message = queue.byReceipt(handle);
              if (!message) {
                stale++;
                continue;
              }
              queue.remove(message, ctx.now);
              this.taskRemoved(message);
            }
            if (stale > 0) throw new Error(`DeleteMessageBatch: ${stale} receipt handle(s) no longer valid`);
          },
        ),
      changeVisibility: (url, entries) =>
        ctx.sched.call(
          actor,
          `sqs.changeVisibility(${entries.length})`,
          ctx.awsLatency(actor, 'sqs.changeVisibility'),
          () => {
            actor.guardOpen = false;
            const queue = this.queueAt(url);
            // The adapter ignores per-entry failures (a stale handle): so does SQS's batch answer.
            for (const entry of entries) {
              const message = queue.byReceipt(entry.receiptHandle);
              if (message) message.visibleAt = ctx.now + entry.seconds * 1000;
            }
          },
        ),
      resend: async (url, messages, delaySeconds) => {
        // As the adapter: copies first, originals after (a crash in between leaves a duplicate, never a loss).
        await ctx.sched.call(
          actor,
          `sqs.sendBatch(${messages.length}, delay ${delaySeconds})`,
          ctx.awsLatency(actor, 'sqs.resend'),
          () => {
            actor.guardOpen = false;
            const queue = this.queueAt(url);
            for (const m of messages) {
              queue.send(m.body, ctx.now, delaySeconds * 1000);
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
      deadLetter: (url, body, reason) =>
        ctx.sched.call(actor, 'sqs.deadLetter', ctx.awsLatency(actor, 'sqs.deadLetter'), () => {
          const state = this.queueState(url);
          state.dlq.send(body, ctx.now);
          const track = this.taskOf(body);
          if (track) {
            track.deadLettered++;
            ctx.checks.deadLettered(actor, track, reason);
          }
        }),
    };
    // Errors inside a variant's wrapper, so a broken adapter sees them (sim/variants-edges.ts).
    const failing = ctx.errors.wrap(actor, 'sqs', port);
    return ctx.variant?.tasks ? ctx.variant.tasks(failing, actor.kind) : failing;
  }

  private receive(
    actor: Actor,
    state: StoreState,
    queue: SimQueue,
    max: number,
    visibilitySeconds: number,
  ): ReceivedMessage[] {
    const { ctx } = this;
    const want = ctx.rng.chance(ctx.scenario.faults.partialReceive) ? ctx.rng.int(1, max) : max;
    const messages = queue.receive(ctx.now, want, visibilitySeconds * 1000);
    if (queue === state.high) for (const m of messages) this.reachedHigh(state, m);
    const lease = this.leaseOf(actor.id);
    if (lease && lease.storeId === state.spec.storeId) {
      lease.received += messages.length;
      ctx.checks.received(state, lease);
    }
    return messages.map((m) => ({
      messageId: m.messageId,
      receiptHandle: m.receipt as string,
      body: m.body,
      receiveCount: m.receiveCount,
      sentAt: m.sentAt,
    }));
  }

  attentionFor(actor: Actor): AttentionPublisher {
    const { ctx } = this;
    return {
      publish: (message, delaySeconds) =>
        ctx.sched.call(
          actor,
          ctx.label('attention.publish', [message.storeId, message.slotId, message.reason, delaySeconds]),
          ctx.awsLatency(actor, 'attention.publish'),
          () => {
            ctx.stats.attentionsPublished++;
            if (ctx.faultsOn && ctx.rng.chance(ctx.scenario.faults.attentionLoss)) {
              ctx.stats.attentionsLost++;
              ctx.sched.log(`${actor.name}   ↳ attention lost (injected)`);
              return;
            }
            const body = JSON.stringify(message);
            // The publisher's routing (sqs-attention-publisher.ts): `confirm` to the confirm queue, if deployed.
            const confirm = attentionRoute(message, ctx.scenario.confirm) === 'confirm';
            const queue = confirm ? this.confirmQueue : this.attentionQueue;
            const meta = { storeId: message.storeId, slotId: message.slotId, confirm };
            if (confirm) ctx.stats.confirmHandoffs++;
            this.attentionMeta.set(queue.send(body, ctx.now, delaySeconds * 1000), meta);
            if (ctx.faultsOn && ctx.rng.chance(ctx.scenario.faults.attentionDuplicate)) {
              const copy = queue.send(body, ctx.now, delaySeconds * 1000 + ctx.rng.int(0, 3000), true);
              this.attentionMeta.set(copy, meta);
            }
          },
        ),
    };
  }

  queueAdminFor(actor: Actor): QueueAdmin {
    const { ctx } = this;
    return {
      pending: (url) =>
        ctx.sched.call(actor, 'sqs.approximateCount', ctx.awsLatency(actor, 'sqs.approximateCount'), () =>
          this.queueAt(url).approximateSize(ctx.now),
        ),
      // The store view the admin answers with (sim/model-operator.ts): true counts, not approximate ones.
      counts: (store) =>
        ctx.sched.call(actor, 'sqs.counts', ctx.awsLatency(actor, 'sqs.counts'), () => {
          const state = this.queueState(store.queueUrl);
          const held = [...state.queue.messages.values(), ...state.high.messages.values()];
          const visible = held.filter((m) => m.visibleAt <= ctx.now).length;
          const inFlight = held.filter((m) => m.visibleAt > ctx.now && m.receipt !== undefined).length;
          const delayed = held.length - visible - inFlight;
          return { backlog: visible, inFlight, delayed, deadLetters: state.dlq.messages.size };
        }),
      createStoreQueues: () => Promise.reject(new Error('not simulated')),
      redrive: (store, rate) =>
        ctx.sched.call(actor, 'sqs.startMoveTask', ctx.awsLatency(actor, 'sqs.startMoveTask'), () => ({
          moving: this.moves.start(this.queueState(store.queueUrl), rate),
        })),
      redriveRunning: (store) =>
        ctx.sched.call(actor, 'sqs.listMoveTasks', ctx.awsLatency(actor, 'sqs.listMoveTasks'), () =>
          this.moves.running(this.queueState(store.queueUrl)),
        ),
      purge: () => Promise.reject(new Error('not simulated')),
    };
  }
}
