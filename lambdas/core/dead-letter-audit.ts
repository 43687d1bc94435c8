import type { Clock, QueueAdmin, Telemetry } from './ports.js';
import type { StoreRecord } from './store-model.js';

/**
 * Dead letters SQS moved by itself (issue #12). The worker dead-letters every task it gives up on (a copy
 * into the store's DLQ, metric TasksDeadLettered), including on the task's last allowed receive; SQS moves a
 * message by itself (redrive policy, maxReceiveCount) only when that last receive ended without the worker
 * acting on it (a crash, a timeout). No metric sees such a move: SQS's NumberOfMessagesSent on a DLQ leaves
 * out what a redrive policy moved, and an alarm cannot select `{prefix}-d-*` queues (Metrics Insights has no
 * prefix match and reads at most 10,000 metrics per query; 50,000 stores have 50,000 DLQs).
 *
 * So the reconciler's sweep, which visits every store once a cycle, audits each DLQ: the growth of its depth
 * since the last audit, minus the dead letters the worker wrote meanwhile, is what SQS moved by itself.
 */

/** Per store, the worker's count of dead letters written and the last audit's view. */
export interface DeadLetterTally {
  /** Dead letters the worker has written to the store's DLQ, ever (counted before each send). */
  written: number;
  /** When the worker last counted one (epoch ms). */
  writtenAt?: number;
  /** The DLQ's depth at the last audit (none yet: 0). */
  seenDepth?: number;
  /** `written` at the last audit (none yet: 0). */
  seenWritten?: number;
  /**
   * Dead-letter keep (core/dead-letter-keep.ts): no letter in the DLQ was sent before this (epoch ms). The
   * reconciler alone writes it: the audit raises it when it sees the DLQ empty and lowers it to the store's
   * creation when it finds letters it cannot date; a completed refresh raises it. The worker never touches it.
   */
  oldestAt?: number;
}

export interface DeadLetterLedger {
  /** Worker: one more dead letter written to the store's DLQ (before the send, so the count never lags it). */
  noteWritten(storeId: string, now: number): Promise<void>;
  read(storeId: string): Promise<DeadLetterTally | undefined>;
  /** Reconciler: what this audit saw, the baseline of the next (never touches `written`). */
  settle(storeId: string, seenDepth: number, seenWritten: number): Promise<void>;
  /** Reconciler: the DLQ's new `oldestAt` (the audit's or a completed refresh's). */
  markOldest(storeId: string, oldestAt: number): Promise<void>;
}

/**
 * ApproximateNumberOfMessages is eventually consistent (about a minute): a store the worker dead-lettered
 * into this recently is audited at a later visit, so a copy the count does not show yet is never taken for a
 * missing one later.
 */
export const DEAD_LETTER_SETTLE_MS = 60_000;

export interface AuditResult {
  /** Dead letters in the DLQ that the worker did not write. */
  unaccounted: number;
  /** The baseline to store, when it changed; absent when the audit is deferred or nothing moved. */
  settle?: { seenDepth: number; seenWritten: number };
  /** The DLQ's new `oldestAt`, when it changes (only with `refreshAgeMs`; never while deferred). */
  oldestAt?: number;
}

/**
 * The DLQ's `oldestAt` after an audit that saw `depth` at `seenAt` (taken before the depth was read), or
 * undefined when it stays. Empty: every letter that arrives later is sent after `seenAt` — written when there
 * is no bound or it is older than half the refresh age (one write per store per half refresh age, not per
 * visit). Letters but no bound (written before this mechanism, or before the store's first audit), or letters
 * the worker did not write (SQS moved them, keeping their original SentTimestamp): the store's creation, the
 * one bound every letter of its queues respects (its DLQ and work queues were created with it).
 */
export const oldestAfterAudit = (
  oldestAt: number | undefined,
  depth: number,
  unaccounted: number,
  seenAt: number,
  refreshAgeMs: number,
  createdAt: number,
): number | undefined => {
  if (depth === 0) return oldestAt === undefined || oldestAt < seenAt - refreshAgeMs / 2 ? seenAt : undefined;
  if (oldestAt === undefined || (unaccounted > 0 && oldestAt > createdAt)) return createdAt;
  return undefined;
};

export const auditDeadLetters = (
  tally: DeadLetterTally | undefined,
  depth: number,
  now: number,
  keep?: { refreshAgeMs: number; createdAt: number },
): AuditResult => {
  const written = tally?.written ?? 0;
  if (tally?.writtenAt !== undefined && now - tally.writtenAt < DEAD_LETTER_SETTLE_MS)
    return { unaccounted: 0 };
  const seenDepth = tally?.seenDepth ?? 0;
  const seenWritten = tally?.seenWritten ?? 0;
  const unaccounted = Math.max(0, depth - seenDepth - (written - seenWritten));
  const oldestAt =
    keep === undefined
      ? undefined
      : oldestAfterAudit(tally?.oldestAt, depth, unaccounted, now, keep.refreshAgeMs, keep.createdAt);
  const bound = oldestAt === undefined ? {} : { oldestAt };
  if (depth === seenDepth && written === seenWritten) return { unaccounted, ...bound };
  return { unaccounted, settle: { seenDepth: depth, seenWritten: written }, ...bound };
};

export interface AuditDeps {
  queues: Pick<QueueAdmin, 'pending'>;
  deadLetterLedger: DeadLetterLedger;
  clock: Clock;
  telemetry: Telemetry;
  /** With it, the audit keeps the DLQ's `oldestAt` (core/dead-letter-keep.ts). */
  refreshAgeMs?: number;
}

export interface StoreAudit {
  /** Dead letters in the DLQ that the worker did not write. */
  unaccounted: number;
  /** The DLQ's `oldestAt` after the audit (undefined: none, or the audit was deferred). */
  oldestAt?: number;
}

/** Audits one store's DLQ: how many of its dead letters the worker did not write, and its `oldestAt`. */
export const auditStoreDeadLetters = async (
  deps: AuditDeps,
  store: Pick<StoreRecord, 'storeId' | 'tenantId' | 'deadLetterQueueUrl' | 'createdAt'>,
): Promise<StoreAudit> => {
  // Before the depth: a letter this depth does not show was sent after it (the bound an empty DLQ gets).
  const seenAt = deps.clock.now();
  // The depth first: the worker counts a letter before it sends it, so every letter this depth shows is in
  // the tally read after it (or that tally's `writtenAt` is recent and the audit waits).
  const depth = await deps.queues.pending(store.deadLetterQueueUrl);
  const tally = await deps.deadLetterLedger.read(store.storeId);
  const result = auditDeadLetters(
    tally,
    depth,
    seenAt,
    deps.refreshAgeMs === undefined
      ? undefined
      : { refreshAgeMs: deps.refreshAgeMs, createdAt: store.createdAt },
  );
  if (result.settle) {
    await deps.deadLetterLedger.settle(store.storeId, result.settle.seenDepth, result.settle.seenWritten);
  }
  if (result.oldestAt !== undefined) await deps.deadLetterLedger.markOldest(store.storeId, result.oldestAt);
  if (result.unaccounted > 0) {
    deps.telemetry.warn('dead letters the worker did not write', {
      storeId: store.storeId,
      tenantId: store.tenantId,
      unaccounted: result.unaccounted,
      depth,
    });
  }
  const oldestAt = result.oldestAt ?? tally?.oldestAt;
  return { unaccounted: result.unaccounted, ...(oldestAt === undefined ? {} : { oldestAt }) };
};
