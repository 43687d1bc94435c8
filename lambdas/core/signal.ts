import type { AttentionReason } from './messages.js';
import type { StorePriority } from './plans.js';
import { MetricNames } from './names.js';
import type {
  AttentionPublisher,
  Clock,
  Conditional,
  DispatchState,
  IdGenerator,
  LeaseRef,
  Telemetry,
} from './ports.js';
import { clampDelaySeconds } from './timing.js';

/**
 * A slot id that asks the worker to issue a slot itself. Ingest publishes it only when it could not
 * reach the dispatch state after a task became durable, so that the task is not left for the sweep.
 */
export const ENSURE_SLOT = '*';

export interface SignalDeps {
  dispatch: DispatchState;
  attention: AttentionPublisher;
  clock: Clock;
  ids: IdGenerator;
  telemetry: Telemetry;
}

export const publishAttention = async (
  deps: Pick<SignalDeps, 'attention' | 'clock' | 'telemetry'>,
  storeId: string,
  slotId: string,
  reason: AttentionReason,
  /** The store's level now (its policy in hand): picks the level queue the attention travels on. */
  priority: StorePriority,
  /** The slot's due time as written (`at`): the attention is delayed until then (at most SQS's 15 min). */
  dueAt: number,
  correlationId?: string,
): Promise<void> => {
  const issuedAt = deps.clock.now();
  await deps.attention.publish(
    {
      v: 1,
      storeId,
      slotId,
      reason,
      issuedAt,
      priority,
      dueAt,
      ...(correlationId ? { correlationId } : {}),
    },
    clampDelaySeconds((dueAt - issuedAt) / 1000),
  );
  deps.telemetry.count(MetricNames.attentionsPublished, 1, { reason });
};

/**
 * Gives the store one more queued slot, if it holds fewer than `limit`, and publishes its attention.
 * The conditional write is what bounds signalling: concurrent callers race for the same few slots and
 * the losers publish nothing (counted as coalesced).
 */
export const signalStore = async (
  deps: SignalDeps,
  storeId: string,
  opts: SignalOptions & {
    limit: number;
    /** A fan-out: the lease issuing the slot, which must still hold it. */
    by?: LeaseRef;
  },
): Promise<boolean> => {
  const issued = await issueAndPublish(deps, storeId, opts, (slotId, dueAt, now) =>
    deps.dispatch.issueSlot(storeId, slotId, dueAt, opts.limit, now, opts.by),
  );
  if (!issued) deps.telemetry.count(MetricNames.attentionsCoalesced, 1, { reason: opts.reason });
  return issued;
};

/** What a new slot's attention says. */
export interface SignalOptions {
  reason: AttentionReason;
  priority: StorePriority;
  delayMs?: number;
  correlationId?: string;
}

/**
 * A new slot, due after `delayMs`, written by `write` (a conditional write that adds queued slot `slotId`); if it
 * won, the slot's attention is published. Resolves whether it won. `signalStore`'s `issueSlot`, or ingest's
 * `endEnqueueIssuing`.
 */
export const issueAndPublish = async (
  deps: SignalDeps,
  storeId: string,
  opts: SignalOptions,
  write: (slotId: string, dueAt: number, now: number) => Promise<Conditional>,
): Promise<boolean> => {
  const now = deps.clock.now();
  const slotId = deps.ids.next();
  const dueAt = now + (opts.delayMs ?? 0);
  if (!(await write(slotId, dueAt, now)).ok) return false;
  await publishAttention(deps, storeId, slotId, opts.reason, opts.priority, dueAt, opts.correlationId);
  return true;
};
