import type { MemoryDispatchState } from '../test/support/memory-dispatch-state.js';
import { T0 } from './constants.js';
import type { SimContext } from './context.js';

/**
 * Issue #10's upgrade path: at the scenario's `upgradeAtMs` the deployment moves from the code before
 * f267a90 to the code under test. The older code marked a store active with `activeShard` alone, so every
 * item marked active at that moment is left without `headSentAt`, in no index (the rest of the older code
 * behaved as today's, which the run before the upgrade stands for). The new reconciler, and with it the index
 * backfill, runs from the upgrade on. Until the first reconciler run with the backfill ends clean (no crash,
 * no hard error), such items are excused from the active-index checks (invariant 2); at that run's end none
 * may be left.
 */
export class UpgradeModel {
  /** The upgrade's true time; undefined: no upgrade in this run. */
  readonly at: number | undefined;
  private fired = false;
  /** From the upgrade until the end of the first clean reconciler run started after it. */
  pending = false;

  constructor(
    private readonly ctx: SimContext,
    private readonly dispatch: MemoryDispatchState,
  ) {
    const ms = ctx.scenario.upgradeAtMs;
    this.at = ms === undefined ? undefined : T0 + ms;
  }

  nextAt(): number | undefined {
    return this.fired ? undefined : this.at;
  }

  /** The code under test's reconciler (with its backfill) runs from the upgrade on. */
  get upgraded(): boolean {
    return this.fired;
  }

  fire(): void {
    if (this.fired || this.at === undefined || this.ctx.now < this.at) return;
    this.fired = true;
    this.pending = true;
    let legacy = 0;
    for (const item of this.dispatch.items.values()) {
      if (item.activeShard === undefined) continue;
      delete item.headSentAt;
      legacy++;
    }
    this.ctx.stats.legacyItems += legacy;
    this.ctx.sched.log(
      `upgrade from before f267a90: ${legacy} item(s) marked active left without headSentAt`,
    );
  }

  /** A reconciler run ended; `backfilled`: it ran with the backfill; `clean`: no crash, no hard error. */
  runEnded(backfilled: boolean, clean: boolean): void {
    if (!this.pending || !clean || !backfilled) return;
    this.pending = false;
    this.ctx.checks.upgradeSettled();
  }
}
