import { REST_RULES, type RestRules } from '../lambdas/core/slice-receive.js';
import { handleAttention, type AttentionOutcome, type WorkerDeps } from '../lambdas/core/attention.js';
import { AttentionMessageSchema, type AttentionMessage } from '../lambdas/core/messages.js';
import { attentionVisibilitySeconds, workerTimeoutSeconds } from '../lambdas/core/timing.js';
import { EMPTY_POLL_SECONDS, MARKETPLACE_TIMEOUT_MS } from './constants.js';
import { campaignBook } from './model-campaigns.js';
import type { SimContext } from './context.js';
import type { Actor } from './scheduler.js';
import type { SimPorts } from './sim-ports.js';
import type { SimMessage, SimQueue } from './sim-sqs.js';
import type { LeaseTrack } from './world-view.js';

const WORKER_TIMEOUT_MS = workerTimeoutSeconds() * 1000;
const ATTENTION_VISIBILITY_MS = attentionVisibilitySeconds(workerTimeoutSeconds()) * 1000;

/** One event source's pool: its workers, its batch size, and how long it gathers a batch (the batching window). */
export interface PoolShape {
  workers: number;
  batchSize: number;
  /** The poll comes 0 to this many ms after an attention is visible (the event source's poll, or its window). */
  windowMs: number;
  /** The event source takes nothing from `from` until `until` (virtual time): a lagging or stalled queue. */
  stall?: { from: number; until: number };
}

/**
 * The SQS event source and a pool of W worker Lambdas: when a worker is free and an attention is visible,
 * the event source takes up to the pool's batch size of them and invokes one worker with them. The attention
 * queue has one pool (the scenario's W and batch size); the confirm queue another (its own event source, batches
 * gathered over a batching window). As the
 * real handler's batch processor does, the invocation runs the real handleAttention on every record at
 * once, each record an actor of its own (its own lease) sharing the invocation's clock and Lambda timeout.
 * The invocation is one process: a crash or timeout of any record kills them all and returns every record
 * (none is deleted). Otherwise, when the last record ends, the records that succeeded are deleted (partial
 * batch response) and those that threw come back after their visibility timeout; the worker is free again.
 */
export class WorkerPool {
  private free: number;
  private pollArmed = false;

  constructor(
    private readonly ctx: SimContext,
    private readonly ports: SimPorts,
    private readonly env: Actor,
    private readonly attentionQueue: SimQueue,
    private readonly leases: Map<number, LeaseTrack>,
    private readonly shape: PoolShape,
  ) {
    this.free = shape.workers;
  }

  /** Arms one poll of the event source when a worker is free and an attention is visible. */
  arm(): void {
    const { ctx } = this;
    if (this.pollArmed || this.free <= 0) return;
    if (this.stalled(ctx.now)) return;
    if (!this.attentionQueue.hasVisible(ctx.now)) return;
    this.pollArmed = true;
    void ctx.sched.call(this.env, 'eventsource.poll', ctx.rng.int(0, this.shape.windowMs), () => {
      this.pollArmed = false;
      if (this.free <= 0 || this.stalled(ctx.now)) return;
      const messages = this.attentionQueue.receive(ctx.now, this.shape.batchSize, ATTENTION_VISIBILITY_MS);
      if (messages.length > 0) this.invoke(messages);
    });
  }

  /** When the next attention becomes visible, if a poll could take it then. */
  nextVisibleAt(): number | undefined {
    if (this.pollArmed || this.free <= 0) return undefined;
    let min: number | undefined;
    for (const m of this.attentionQueue.messages.values())
      if (min === undefined || m.visibleAt < min) min = m.visibleAt;
    const stall = this.shape.stall;
    // A stalled event source looks again when its stall ends.
    if (min !== undefined && stall !== undefined && this.stalled(Math.max(min, this.ctx.now)))
      return stall.until;
    return min;
  }

  private stalled(at: number): boolean {
    const stall = this.shape.stall;
    return stall !== undefined && at >= stall.from && at < stall.until;
  }

  private invoke(messages: SimMessage[]): void {
    const { ctx } = this;
    this.free--;
    ctx.stats.invocations++;
    if (messages.length > 1) ctx.stats.batchedInvocations++;
    // One process: one clock and one Lambda timeout, from the invocation, for every record.
    const skew = ctx.skew();
    const killAt = ctx.now + WORKER_TIMEOUT_MS;
    const actors: Actor[] = [];
    let dead = false;
    let freed = false;
    const freeWorker = () => {
      if (freed) return;
      freed = true;
      this.free++;
      for (const actor of actors) this.leases.delete(actor.id);
    };
    const kill = () => {
      if (dead) return;
      dead = true;
      // The process died: every record's slice dies with it, and every record comes back.
      for (const actor of actors) ctx.sched.crash(actor, false);
      freeWorker();
    };
    let pending = messages.length;
    const succeeded: SimMessage[] = [];
    /** The invocation returns when its last record ends: succeeded records are deleted, the worker is free. */
    const recordEnded = (
      actor: Actor,
      message: SimMessage,
      outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
    ) => {
      if (dead) return;
      this.leases.delete(actor.id);
      if (outcome.ok) {
        if (ctx.sched.tracing) ctx.sched.log(`${actor.name} done: ${JSON.stringify(outcome.value)}`);
        succeeded.push(message);
      } else ctx.sched.log(`${actor.name} threw ${String(outcome.error)}: the attention comes back`);
      if (--pending > 0) return;
      for (const a of actors) a.finished = true;
      // The event source deletes the records that succeeded (partial batch response) once the invocation returns.
      for (const done of succeeded) {
        const current = done.receipt ? this.attentionQueue.byReceipt(done.receipt) : undefined;
        if (current) this.attentionQueue.remove(current, ctx.now);
      }
      freeWorker();
    };
    const thunks = messages.map((message) => {
      const actor = ctx.sched.newActor('worker', 'worker', skew);
      // Its Lambda timeout, from its invocation: a zombie stalled past it is killed, its call in flight with it.
      actor.killAt = killAt;
      actor.onCrash = kill;
      actors.push(actor);
      const parsed = AttentionMessageSchema.parse(JSON.parse(message.body));
      ctx.sched.log(
        `${actor.name} starts on attention ${parsed.storeId}/${parsed.slotId} (${parsed.reason})`,
      );
      return () =>
        this.handle(actor, parsed)
          .then(
            (value) => recordEnded(actor, message, { ok: true, value }),
            (error: unknown) => recordEnded(actor, message, { ok: false, error }),
          )
          .finally(() => ctx.sched.notify());
    });
    const runBatch = ctx.variant?.runBatch ?? ((runs) => Promise.allSettled(runs.map((run) => run())));
    void runBatch(thunks);
  }

  /** The variant's (or the built) rules for an empty check's other long poll, counting those that held messages. */
  private get restRules(): RestRules {
    const { ctx } = this;
    const rules = ctx.variant?.restRules ?? REST_RULES;
    return {
      settle: (rest, handBack) =>
        rules.settle(rest, async (answer) => {
          if (answer.status === 'fulfilled' && answer.value.length > 0) ctx.stats.restsHandedBack++;
          await handBack(answer);
        }),
    };
  }

  private handle(actor: Actor, parsed: AttentionMessage): Promise<unknown> {
    const { ctx } = this;
    const deps: WorkerDeps = {
      ...this.ports.common(actor),
      stores: this.ports.stores(actor),
      tasks: this.ports.tasks(actor),
      deliveries: this.ports.deliveries(actor),
      marketplace: this.ports.marketplace(actor),
      random: () => ctx.rng.next(),
      campaigns: ctx.variant?.campaigns
        ? ctx.variant.campaigns(campaignBook(ctx.scenario.campaigns))
        : campaignBook(ctx.scenario.campaigns),
      settings: {
        emptyPollSeconds: EMPTY_POLL_SECONDS,
        marketplaceTimeoutMs: MARKETPLACE_TIMEOUT_MS,
        confirmQueue: ctx.scenario.confirm,
      },
      ...(ctx.variant?.rateRules ? { rateRules: ctx.variant.rateRules } : {}),
      ...(ctx.variant?.blockRules ? { blockRules: ctx.variant.blockRules } : {}),
      ...(ctx.variant?.watchRules ? { watchRules: ctx.variant.watchRules } : {}),
      restRules: this.restRules,
    };
    const handle = ctx.variant?.handleAttention ?? handleAttention;
    return handle(deps, parsed).then((outcome) => {
      const sliced = outcome as Partial<AttentionOutcome & { kind: 'sliced' }>;
      if (parsed.reason === 'confirm' && (sliced.slice?.handled ?? 0) > 0) ctx.stats.confirmTrickles++;
      return outcome;
    });
  }
}
