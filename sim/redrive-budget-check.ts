import type { DeadLetterReason } from '../lambdas/core/ports.js';
import { policyOf } from '../lambdas/core/store-model.js';
import type { TaskTrack, WorldView } from './world-view.js';

/** Invariant 15: a redriven task gets a fresh `maxAttempts` budget (lambdas/core/deliver-task.ts `budgetUsed`). */
export const REDRIVE_BUDGET_INVARIANT = 15;

/** One of the task's dead-letter sends: the attempts it reported (its settle's `deadAttempts`), and the calls by then. */
interface DeadSend {
  attempts: number;
  calls: number;
}

/**
 * Invariant 15, **a redrive starts a fresh retry budget**: a task dead-lettered for exhausted retries
 * (`retries_exhausted`) has had at least its store's `maxAttempts` marketplace calls since the dead-lettering its
 * budget counts from — the one whose settle wrote the record's `deadAttempts` as it stands (none: since its first
 * call). Counted on raw calls, as the marketplace saw them: a call counts toward `attempts` only once its settle
 * lands (a crash or a 429 between make raw calls more), and calls are serialized by their claims, so the counted
 * attempts since `deadAttempts` never outnumber the raw calls since the send that reported it. The send that
 * reported it is the latest with that `attempts`: a dead-lettering whose settle was lost (a crash between the DLQ
 * send and the settle, a hard error) leaves the record's `deadAttempts` at an earlier one's, and the budget counts
 * from there, as the core's does. Before session 20 a redriven task kept its attempts, and with `maxAttempts: 2`
 * one more failure dead-lettered it at once (broken variant `redrive-keeps-attempts`).
 */
export class RedriveBudgetCheck {
  /** Raw marketplace calls per task (`storeId:eventId`), and its dead-letter sends. */
  private readonly calls = new Map<string, number>();
  private readonly sends = new Map<string, DeadSend[]>();

  constructor(
    private readonly world: WorldView,
    private readonly fail: (invariant: number, message: string) => void,
  ) {}

  taskCallStarted(storeId: string, eventId: string): void {
    const key = `${storeId}:${eventId}`;
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
  }

  deadLettered(track: TaskTrack, reason: DeadLetterReason): void {
    const key = `${track.storeId}:${track.eventId}`;
    const calls = this.calls.get(key) ?? 0;
    const sends = this.sends.get(key) ?? [];
    this.sends.set(key, sends);
    if (reason.code === 'retries_exhausted') this.check(track, calls, sends);
    sends.push({ attempts: reason.attempts, calls });
  }

  private check(track: TaskTrack, calls: number, sends: readonly DeadSend[]): void {
    const from = this.world.deliveryRecord(track.storeId, track.eventId)?.deadAttempts;
    let since = 0;
    if (from !== undefined) {
      const send = sends.findLast((s) => s.attempts === from);
      // Every settle that writes `deadAttempts` follows a send reporting it: none found is a record this run
      // did not write (none here), so nothing to count from.
      if (send === undefined) return;
      since = send.calls;
      this.world.stats.redriveBudgetChecks++;
    }
    const budget = this.budgetOf(track.storeId);
    const made = calls - since;
    if (made < budget)
      this.fail(
        REDRIVE_BUDGET_INVARIANT,
        `${track.storeId}:${track.eventId} was dead-lettered for exhausted retries after ${made} call(s) since ` +
          `${from === undefined ? 'it was accepted' : 'the dead-lettering its budget counts from'} (maxAttempts ${budget})`,
      );
  }

  /** The store's `maxAttempts`: its spec's, or its record's now if lower (the operator never changes it). */
  private budgetOf(storeId: string): number {
    const state = this.world.store(storeId);
    if (state === undefined) return 1;
    return Math.min(state.spec.policy.maxAttempts, policyOf(state.record).maxAttempts);
  }
}
