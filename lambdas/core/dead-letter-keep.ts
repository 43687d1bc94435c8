import type { DeadLetterLedger } from './dead-letter-audit.js';
import { MetricNames } from './names.js';
import type { Clock, DeadLetterQueues, QueueAdmin, Telemetry } from './ports.js';
import { countRefreshed, noteIfOverdue, type RetentionSettings } from './retention.js';
import type { StoreRecord } from './store-model.js';

/**
 * Dead-letter keep (issue #10, "no silent expiry"). SQS deletes a dead letter 14 days after it was sent into
 * the DLQ — and a letter SQS moved there itself keeps its original SentTimestamp, so it may go sooner —
 * silently. The DLQ's tally keeps `oldestAt`, a lower bound of the SentTimestamp of its letters
 * (core/dead-letter-audit.ts says who writes it). When the sweep visits a store whose bound is a refresh age
 * old, every letter of its DLQ is sent back into it as a fresh copy (body and attributes kept: the reason
 * stays readable; SQS's clock restarts), delayed so the pass does not take its own copies again, and the
 * original deleted. Nothing is delivered and no slot, lease or delivery record reads a DLQ: the protocol is
 * untouched (docs/ARCHITECTURE.md, "Dead-letter keep").
 */
export interface KeepDeps {
  deadLetters: DeadLetterQueues;
  queues: Pick<QueueAdmin, 'redriveRunning'>;
  deadLetterLedger: Pick<DeadLetterLedger, 'markOldest'>;
  clock: Clock;
  telemetry: Telemetry;
  /** The retention pass's settings: its refresh age and copy delay; its batches per run, a budget of its own. */
  settings: RetentionSettings;
}

/** How long a refresh's receive hides a batch: if the reconciler dies before the copies are sent, it reappears. */
export const KEEP_VISIBILITY_SECONDS = 60;
/** The refresh's last receive is a long poll: a short poll samples SQS's servers and may miss some. */
const KEEP_EMPTY_POLL_SECONDS = 1;

/** A DLQ whose bound is at least a refresh age old gets a refresh (no bound: an empty DLQ, nothing to keep). */
export const needsKeep = (
  oldestAt: number | undefined,
  now: number,
  refreshAgeMs: number,
): oldestAt is number => oldestAt !== undefined && oldestAt <= now - refreshAgeMs;

export interface KeepResult {
  refreshed: number;
  /** The DLQ ended on an empty long poll with every copy sent: its bound was raised. */
  complete: boolean;
  /** Skipped because a redrive moves the DLQ's letters (the next visit looks again). */
  redriving?: boolean;
}

/**
 * One store's DLQ refresh, as far as `budget.batches` allows (shared by the run's stores). Completed, it
 * raises the bound to its start less half the refresh age, as the retention pass does: a letter hidden while
 * it ran (an earlier refresh that died holding it, an operator's console poll) is found by the next refresh,
 * half a refresh age later.
 */
export const keepDeadLetters = async (
  deps: KeepDeps,
  store: Pick<StoreRecord, 'storeId' | 'tenantId' | 'queueUrl' | 'deadLetterQueueUrl'>,
  oldestAt: number | undefined,
  budget: { batches: number },
): Promise<KeepResult> => {
  const { refreshAgeMs, copyDelaySeconds } = deps.settings;
  const startedAt = deps.clock.now();
  if (!needsKeep(oldestAt, startedAt, refreshAgeMs)) return { refreshed: 0, complete: false };
  // A DLQ left unrefreshed by this visit whose letters may already be 8.75 days old is at risk (as for the pass).
  const unrefreshed = (): void =>
    noteIfOverdue(deps.telemetry, store, 'dead-letter', oldestAt, startedAt, refreshAgeMs);
  if (budget.batches <= 0) {
    unrefreshed();
    return { refreshed: 0, complete: false };
  }
  // A move task receives from the DLQ too, and SQS runs one per queue: its letters leave the DLQ anyway.
  if (await deps.queues.redriveRunning(store)) return { refreshed: 0, complete: false, redriving: true };
  const receive = (waitSeconds: number) =>
    deps.deadLetters.refreshDeadLetters(store.deadLetterQueueUrl, {
      maxMessages: 10,
      waitSeconds,
      visibilitySeconds: KEEP_VISIBILITY_SECONDS,
      delaySeconds: copyDelaySeconds,
    });
  let refreshed = 0;
  let drained = false;
  let allCopied = true;
  while (budget.batches > 0) {
    budget.batches--;
    let batch = await receive(0);
    if (batch.received === 0) batch = await receive(KEEP_EMPTY_POLL_SECONDS);
    if (batch.received === 0) {
      drained = true;
      break;
    }
    if (batch.sentAt.length < batch.received) allCopied = false;
    countRefreshed(deps.telemetry, MetricNames.deadLettersRefreshed, batch.sentAt, startedAt - refreshAgeMs);
    refreshed += batch.sentAt.length;
  }
  const complete = drained && allCopied;
  if (complete) await deps.deadLetterLedger.markOldest(store.storeId, startedAt - refreshAgeMs / 2);
  else unrefreshed();
  deps.telemetry.info('dead letters refreshed', {
    storeId: store.storeId,
    tenantId: store.tenantId,
    refreshed,
    complete,
  });
  return { refreshed, complete };
};
