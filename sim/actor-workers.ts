import { handleAttention, type WorkerDeps } from '../lambdas/core/attention.js';
import { AttentionMessageSchema } from '../lambdas/core/messages.js';
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

/**
 * The SQS event source and a pool of W worker Lambdas: when a worker is free and an attention is visible,
 * one worker runs the real handleAttention on it; a record that succeeded is deleted (partial batch
 * response), one that threw comes back after its visibility timeout.
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
  ) {
    this.free = ctx.scenario.workers;
  }

  /** Arms one poll of the event source when a worker is free and an attention is visible. */
  arm(): void {
    const { ctx } = this;
    if (this.pollArmed || this.free <= 0) return;
    if (!this.attentionQueue.hasVisible(ctx.now)) return;
    this.pollArmed = true;
    void ctx.sched.call(this.env, 'eventsource.poll', ctx.rng.int(0, 30), () => {
      this.pollArmed = false;
      if (this.free <= 0) return;
      const [message] = this.attentionQueue.receive(ctx.now, 1, ATTENTION_VISIBILITY_MS);
      if (message) this.spawn(message);
    });
  }

  /** When the next attention becomes visible, if a poll could take it then. */
  nextVisibleAt(): number | undefined {
    if (this.pollArmed || this.free <= 0) return undefined;
    let min: number | undefined;
    for (const m of this.attentionQueue.messages.values())
      if (min === undefined || m.visibleAt < min) min = m.visibleAt;
    return min;
  }

  private spawn(message: SimMessage): void {
    const { ctx } = this;
    const actor = ctx.sched.newActor('worker', 'worker', ctx.skew());
    // Its Lambda timeout, from its invocation: a zombie stalled past it is killed, its call in flight with it.
    actor.killAt = ctx.now + WORKER_TIMEOUT_MS;
    this.free--;
    const parsed = AttentionMessageSchema.parse(JSON.parse(message.body));
    const receipt = message.receipt;
    ctx.sched.log(`${actor.name} starts on attention ${parsed.storeId}/${parsed.slotId} (${parsed.reason})`);
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
      settings: { emptyPollSeconds: EMPTY_POLL_SECONDS, marketplaceTimeoutMs: MARKETPLACE_TIMEOUT_MS },
      ...(ctx.variant?.rateRules ? { rateRules: ctx.variant.rateRules } : {}),
      ...(ctx.variant?.blockRules ? { blockRules: ctx.variant.blockRules } : {}),
    };
    const done = () => {
      this.free++;
      this.leases.delete(actor.id);
    };
    actor.onCrash = done;
    const handle = ctx.variant?.handleAttention ?? handleAttention;
    handle(deps, parsed)
      .then(
        (outcome) => {
          if (ctx.sched.tracing) ctx.sched.log(`${actor.name} done: ${JSON.stringify(outcome)}`);
          // The event source deletes a record that succeeded (partial batch response).
          const current = receipt ? this.attentionQueue.byReceipt(receipt) : undefined;
          if (current) this.attentionQueue.remove(current, ctx.now);
        },
        (error: unknown) => ctx.sched.log(`${actor.name} threw ${String(error)}: the attention comes back`),
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          done();
        }
        ctx.sched.notify();
      });
  }
}
