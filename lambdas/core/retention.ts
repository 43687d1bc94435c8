import type { DispatchItem } from './dispatch-model.js';
import { MetricNames, type MetricName } from './names.js';
import type { Clock, DispatchState, RetentionMarks, TaskQueues, Telemetry } from './ports.js';
import type { StoreRecord } from './store-model.js';
import { workQueuesOf } from './store-queues.js';
import { guardUntilVisible, hiding } from './wake.js';

/**
 * The retention pass (issue #10, "no silent expiry"). SQS deletes a message 14 days after it was sent, silently,
 * whatever the store's state. Any store whose queues may hold a message sent more than the refresh age ago —
 * paused, in maintenance, disabled or active with a backlog that does not drain — gets a pass from the
 * reconciler: every message of its work queues is re-sent as a fresh copy (SQS's clock restarts; the body,
 * and so the task's `acceptedAt`, is kept) delayed by `copyDelaySeconds`, so the pass does not take it
 * again, and the original is deleted.
 * Nothing is delivered: the pass never calls the marketplace, so a paused store stays paused.
 *
 * Lost wake-up (invariant 2): before each batch is hidden, `wakeAt` is raised past the end of its visibility
 * and of its copies' delay (write-ahead), and the copies count as an enqueue before and after the send, exactly
 * as a slice's throttle re-send does: no lease can mark the store idle while the pass holds its messages.
 */
export interface RetentionDeps {
  dispatch: Pick<DispatchState, 'deferWake' | 'recordEnqueued'>;
  marks: RetentionMarks;
  tasks: TaskQueues;
  clock: Clock;
  telemetry: Telemetry;
  settings: RetentionSettings;
}

export interface RetentionSettings {
  /** A store whose queues may hold a message sent this long ago gets a pass (REFRESH_AGE_MS). */
  refreshAgeMs: number;
  /** The copies' delay (RETENTION_COPY_DELAY_SECONDS): longer than a pass may run. */
  copyDelaySeconds: number;
  /** Receives of up to 10 messages per reconciler run, over all stores (RETENTION_BATCHES_PER_RUN). */
  batchesPerRun: number;
}

/** How long the pass's receive hides a batch: if the reconciler dies before the copies are sent, it reappears. */
export const PASS_VISIBILITY_SECONDS = 60;
/** The pass's last receive of each queue is a long poll: a short poll samples SQS's servers and may miss some. */
const PASS_EMPTY_POLL_SECONDS = 1;

/**
 * No message of the store's queues was sent before this (a conservative bound), or undefined when the store is
 * idle (an idle store's queues are empty; a stranded one is the sweep's, which lowers the bound when it finds it).
 */
export const retentionBound = (item: DispatchItem): number | undefined =>
  item.activeShard === undefined ? undefined : (item.refreshedAt ?? item.activeSince ?? 0);

export const needsPass = (item: DispatchItem, now: number, refreshAgeMs: number): boolean => {
  const bound = retentionBound(item);
  return bound !== undefined && bound <= now - refreshAgeMs;
};

export interface PassResult {
  refreshed: number;
  /** Every work queue ended on an empty long poll: the store's bound was raised. */
  complete: boolean;
}

/**
 * Passes (or DLQ refreshes) are overdue once a store's bound is this many refresh ages old: 8.75 days with the
 * default 7, five days and more before SQS's 14. A pass that completes keeps the bound within one refresh
 * age (plus a run); one that cannot (a backlog larger than passes cover while their own copies come back,
 * budgets spent on other stores, a long sweep cycle for a DLQ) lets it age.
 */
export const OVERDUE_REFRESH_AGES = 1.25;

/**
 * For a store the run left unrefreshed: when messages under `bound` may be older than the passes should ever let
 * them get, counts and logs it (alarm `RetentionOverdue`). Its tasks or dead letters are still kept, but the next
 * passes may not reach them all before SQS's 14 days. The operator resumes, redrives or purges it.
 */
export const noteIfOverdue = (
  telemetry: Telemetry,
  store: { storeId: string; tenantId: string },
  queue: 'work' | 'dead-letter',
  bound: number,
  now: number,
  refreshAgeMs: number,
): void => {
  if (bound > now - refreshAgeMs * OVERDUE_REFRESH_AGES) return;
  telemetry.count(MetricNames.retentionOverdue, 1, { queue });
  telemetry.warn('retention overdue: messages may be older than the passes should let them get', {
    storeId: store.storeId,
    tenantId: store.tenantId,
    queue,
    // A bound of 0 (a sweep rescue: messages of unknown age) has no age worth printing.
    ...(bound > 0 ? { boundAgeHours: Math.floor((now - bound) / 3_600_000) } : { boundUnknown: true }),
  });
};

/**
 * Counts refreshed copies by the age of their originals (the dead-letter keep's too): `old` — sent at or before
 * `oldBy`, a refresh age before the pass began — is what the pass is for; `recent` is what it took along.
 */
export const countRefreshed = (
  telemetry: Telemetry,
  metric: MetricName,
  sentAt: readonly number[],
  oldBy: number,
): void => {
  const old = sentAt.filter((at) => at <= oldBy).length;
  if (old > 0) telemetry.count(metric, old, { age: 'old' });
  if (sentAt.length > old) telemetry.count(metric, sentAt.length - old, { age: 'recent' });
};

/**
 * One store's pass, as far as `budget.batches` allows (shared by the run's stores). Completed, it raises the
 * bound to its start less half the refresh age: a message a lease or a retry held while the pass ran (so it
 * did not see it) is found by the next pass, half a refresh age later (docs/ARCHITECTURE.md, "Retention").
 */
export const retentionPass = async (
  deps: RetentionDeps,
  store: Pick<StoreRecord, 'storeId' | 'queueUrl' | 'priorityQueueUrl'>,
  item: DispatchItem,
  budget: { batches: number },
): Promise<PassResult> => {
  const startedAt = deps.clock.now();
  const { refreshAgeMs, copyDelaySeconds } = deps.settings;
  let refreshed = 0;
  let complete = true;
  for (const url of workQueuesOf(store)) {
    let drained = false;
    while (budget.batches > 0) {
      budget.batches--;
      const plannedAt = deps.clock.now();
      // Write-ahead: hidden for the receive's visibility, then delayed as copies — no idle before both end.
      await guardUntilVisible(
        deps.dispatch,
        store.storeId,
        plannedAt + Math.max(PASS_VISIBILITY_SECONDS, copyDelaySeconds) * 1000,
      );
      let batch = await deps.tasks.receive(url, {
        maxMessages: 10,
        waitSeconds: 0,
        visibilitySeconds: PASS_VISIBILITY_SECONDS,
      });
      if (batch.length === 0)
        batch = await deps.tasks.receive(url, {
          maxMessages: 10,
          waitSeconds: PASS_EMPTY_POLL_SECONDS,
          visibilitySeconds: PASS_VISIBILITY_SECONDS,
        });
      if (batch.length === 0) {
        drained = true;
        break;
      }
      // The copies are an enqueue, before their send and after it (a zombie pass into a store gone idle).
      await deps.dispatch.recordEnqueued(store.storeId, batch.length, deps.clock.now());
      await hiding(
        deps,
        store.storeId,
        { plannedAt, seconds: copyDelaySeconds, enqueued: batch.length },
        () =>
          deps.tasks.resend(
            url,
            batch.map((m) => ({ receiptHandle: m.receiptHandle, body: m.body })),
            copyDelaySeconds,
          ),
      );
      countRefreshed(
        deps.telemetry,
        MetricNames.tasksRefreshed,
        batch.map((m) => m.sentAt),
        startedAt - refreshAgeMs,
      );
      refreshed += batch.length;
    }
    if (!drained) complete = false;
  }
  if (complete)
    await deps.marks.raiseRefreshed(store.storeId, startedAt - refreshAgeMs / 2, item.refreshedAt);
  deps.telemetry.info('retention pass', { storeId: store.storeId, refreshed, complete });
  return { refreshed, complete };
};
