import type { DeadLetterReason } from '../lambdas/core/ports.js';
import { deliveryKey } from '../lambdas/core/names.js';
import { policyOf } from '../lambdas/core/store-model.js';
import type { Actor } from './scheduler.js';
import type { TaskTrack, WorldView } from './world-view.js';

/** Invariant 15: a redrive starts a fresh retry budget (lambdas/core/deliver-task.ts `budgetUsed`). */
export const REDRIVE_BUDGET_INVARIANT = 15;

/** Where an attempt's budget starts: the task's raw calls at the last dead-lettering its claim came after. */
interface Start {
  calls: number;
  /** A dead-lettering of the task had landed before the claim (its budget is a fresh one). */
  fresh: boolean;
}

/**
 * Invariant 15, **a redrive starts a fresh retry budget**: a task dead-lettered for exhausted retries
 * (`retries_exhausted`) has had at least its store's `maxAttempts` marketplace calls since the last dead-lettering
 * of it (a settle `dead_lettered` that landed) before the claim of the attempt that dead-letters it — or since it
 * was accepted, when there was none. Every point comes from what the check saw itself — raw marketplace calls,
 * claims granted, settles that landed — never from the record's `deadAttempts`, the field under test.
 *
 * Why the protocol as built keeps it: the attempt's claim reads the record as that last landed dead-lettering left
 * it (`deadAttempts` = the attempts then), so the core's budget is the attempts counted since. An attempt is counted
 * only by its settle landing, which needs its claim still live; claims are exclusive while live; so each attempt
 * counted since that settle had its claim granted after it, and made its raw call after it. A call whose settle
 * never landed (a crash, a 429, a zombie whose claim expired) only adds raw calls. A zombie's dead-letter send that
 * lands after another attempt's dead-lettering is judged by its own claim (simulation seed 11706 of the first
 * version, which read the record when the send landed and counted from the other's).
 */
export class RedriveBudgetCheck {
  /** Raw marketplace calls per task (delivery key). */
  private readonly calls = new Map<string, number>();
  /** Per task: its raw calls when its last `dead_lettered` settle landed. */
  private readonly settled = new Map<string, number>();
  /** Per worker and task: where the budget of the worker's latest claim of the task starts. */
  private readonly claims = new Map<Actor, Map<string, Start>>();

  constructor(
    private readonly world: WorldView,
    private readonly fail: (invariant: number, message: string) => void,
  ) {}

  taskCallStarted(storeId: string, eventId: string): void {
    const key = deliveryKey(storeId, eventId);
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
  }

  taskClaimed(actor: Actor, storeId: string, eventId: string): void {
    const key = deliveryKey(storeId, eventId);
    const settled = this.settled.get(key);
    const claims = this.claims.get(actor) ?? new Map<string, Start>();
    this.claims.set(actor, claims);
    claims.set(key, { calls: settled ?? 0, fresh: settled !== undefined });
  }

  deadLetterSettled(storeId: string, eventId: string): void {
    const key = deliveryKey(storeId, eventId);
    this.settled.set(key, this.calls.get(key) ?? 0);
  }

  deadLettered(actor: Actor, track: TaskTrack, reason: DeadLetterReason): void {
    if (reason.code !== 'retries_exhausted') return;
    const task = deliveryKey(track.storeId, track.eventId);
    const start = this.claims.get(actor)?.get(task);
    if (start === undefined) {
      this.fail(
        REDRIVE_BUDGET_INVARIANT,
        `${actor.name} dead-lettered ${task} for exhausted retries unclaimed`,
      );
      return;
    }
    if (start.fresh) this.world.stats.redriveBudgetChecks++;
    const budget = this.budgetOf(track.storeId);
    const made = (this.calls.get(task) ?? 0) - start.calls;
    if (made < budget)
      this.fail(
        REDRIVE_BUDGET_INVARIANT,
        `${actor.name} dead-lettered ${task} for exhausted retries after ${made} call(s) since ` +
          `${start.fresh ? 'its last dead-lettering' : 'it was accepted'} (maxAttempts ${budget})`,
      );
  }

  /** The store's `maxAttempts`: its spec's, or its record's now if lower (the operator never changes it). */
  private budgetOf(storeId: string): number {
    const state = this.world.store(storeId);
    if (state === undefined) return 1;
    return Math.min(state.spec.policy.maxAttempts, policyOf(state.record).maxAttempts);
  }
}
