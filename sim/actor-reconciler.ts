import { reconcile, type ReconcilerDeps } from '../lambdas/core/reconcile.js';
import { ATTENTION_GRACE_MS, RECONCILER_JITTER_MS, RECONCILER_PERIOD_MS, T0 } from './constants.js';
import type { SimContext } from './context.js';
import type { UpgradeModel } from './model-upgrade.js';
import type { SimPorts } from './sim-ports.js';

/** The EventBridge schedule: the real reconcile every period (+ jitter), one run at a time (reserved concurrency 1). */
export class ReconcilerSchedule {
  private running = false;
  /** Runs that crashed (each may delay a repair by one period: the stranding bound allows for it). */
  crashes = 0;
  nextTickAt: number;

  constructor(
    private readonly ctx: SimContext,
    private readonly ports: SimPorts,
    private readonly upgrade: UpgradeModel,
    /** Whether a run met a hard error (sim/model-errors.ts). */
    private readonly hitRun: (actorId: number) => boolean,
  ) {
    this.nextTickAt = T0 + ctx.rng.int(0, RECONCILER_PERIOD_MS);
  }

  fire(): void {
    const { ctx } = this;
    if (this.nextTickAt > ctx.now) return;
    if (!this.running) this.spawn();
    this.nextTickAt = ctx.now + RECONCILER_PERIOD_MS + ctx.rng.int(0, RECONCILER_JITTER_MS);
  }

  private spawn(): void {
    const { ctx } = this;
    const actor = ctx.sched.newActor('reconciler', 'reconciler', ctx.skew());
    this.running = true;
    // The code before the upgrade (sim/model-upgrade.ts) had no backfill; seeds without one never run it.
    const backfillIndex = this.upgrade.upgraded;
    const deps: ReconcilerDeps = {
      ...this.ports.common(actor),
      stores: this.ports.stores(actor),
      queues: this.ports.queueAdmin(actor),
      settings: {
        attentionGraceMs: ATTENTION_GRACE_MS,
        sweepStoresPerRun: 35,
        backfillIndex,
      },
    };
    actor.onCrash = () => {
      this.running = false;
      this.crashes++;
    };
    (ctx.variant?.reconcile ?? reconcile)(deps)
      .then(
        (report) => ctx.sched.tracing && ctx.sched.log(`${actor.name} report ${JSON.stringify(report)}`),
        (error: unknown) => ctx.sched.log(`${actor.name} threw ${String(error)}`),
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          this.running = false;
          this.upgrade.runEnded(backfillIndex, !this.hitRun(actor.id));
        }
        ctx.sched.notify();
      });
  }
}
