import { z } from 'zod';
import { RateStateSchema } from './adaptive-rate.js';

/**
 * A slot is one unit of a store's concurrency: either an attention waiting on the shared queue
 * ('q', `at` = when it is due) or a worker holding a lease ('l', `at` = lease expiry, `f` = fencing token).
 * `n` carries the slot's next allowed marketplace call across slices (rate pacing); `r` counts reconciler resends;
 * `e` counts the slot's slices in a row that ended on an operational error (their backoff; absent = none).
 * A store never has more slots than its maxConcurrentConsumers, which bounds both its leases
 * (invariant 3) and the attentions that can act for it (invariant 7).
 */
const errorStreak = z.number().int().min(1).optional();
export const SlotSchema = z.discriminatedUnion('s', [
  z.object({
    s: z.literal('q'),
    at: z.number(),
    r: z.number().int().min(0).optional(),
    n: z.number().optional(),
    e: errorStreak,
  }),
  z.object({
    s: z.literal('l'),
    at: z.number(),
    f: z.number().int(),
    n: z.number().optional(),
    e: errorStreak,
  }),
]);
export type Slot = z.infer<typeof SlotSchema>;

export const DispatchItemSchema = z.object({
  storeId: z.string(),
  /** Bumped by ingest after each durable send; a worker may mark the store idle only at the value it saw before its empty receive. */
  enqSeq: z.number().int().default(0),
  /** Monotonic counter; each lease takes the next value as its fencing token. */
  fence: z.number().int().default(0),
  slots: z.record(z.string(), SlotSchema).default({}),
  /** Present while the store is not idle; the sparse "active" index the reconciler reads. */
  activeShard: z.string().optional(),
  activeSince: z.number().optional(),
  /** No worker may mark the store idle before this time (deferred retries, throttles, redrives). */
  wakeAt: z.number().optional(),
  /**
   * A dead-letter redrive started then and may still be feeding the queue (moved messages bump no
   * `enqSeq`): no worker may mark the store idle until the reconciler has seen the move end and removed it.
   */
  redriveAt: z.number().optional(),
  /**
   * The oldest-task estimate and the `active` index's sort key: the activation time while no slice has run,
   * then the SentTimestamp of the oldest message seen at the last slice end. Removed with idle.
   */
  headSentAt: z.number().optional(),
  /**
   * Retention (issue #10): no message of the store's queues was sent before this (a lower bound, set by the
   * retention pass; 0 after a sweep rescue or a redrive, which may bring older messages). Absent: `activeSince`
   * is the bound. Removed with idle.
   */
  refreshedAt: z.number().optional(),
  idleSeq: z.number().int().optional(),
  /**
   * Ingest requests between their write-ahead and their end (their send in between), and when the last of
   * them is over at the latest (its Lambda timeout): no worker may mark the store idle while one may still
   * be sending. Removed with idle.
   */
  ingesting: z.number().int().optional(),
  ingestUntil: z.number().optional(),
  /** Rate limiting: the store's theoretical arrival time, the earliest its next marketplace call may start. */
  tat: z.number().optional(),
  /** Writes to `tat` by the pacers (restart, advance, hold, give-back): what a give-back checks it still owns. */
  tatSeq: z.number().int().optional(),
  /**
   * How late after its instants the schedule's last block may start its calls (ms; rate.ts `sharedPacer`): a
   * block of smaller lateness starts the difference after `tat`. 0 after a single consumer's carried pace.
   * Absent on items written before it was kept: taken as LATENESS_CEILING_MS, the most any block had then.
   */
  tatLate: z.number().optional(),
  /**
   * The calls the pacers reserved on `tat` (instants handed out, less those given back), all consumers: the
   * adaptive rate's sent-rate count. Absent on items written before it: the first reservation starts it.
   */
  tatCalls: z.number().int().optional(),
  /**
   * The marketplace's own limit as last learnt (adaptive rate, `adaptive-rate.ts`): a header rate or a backoff,
   * shared by all the store's consumers; absent while the policy rate holds. Written only when it changes.
   */
  rate: RateStateSchema.optional(),
  /**
   * Per-store measures (issue #4), kept on writes the protocol makes anyway, cumulative since the store
   * was created: attentions re-published after a slice, resent by the reconciler, discarded (paused,
   * over the limit, duplicate, coalesced), lease blocks (over the concurrency limit), slices stopped by a
   * marketplace 429; and the last completed drain (signalled → idle).
   */
  nRepublished: z.number().int().optional(),
  nResent: z.number().int().optional(),
  nDiscarded: z.number().int().optional(),
  nLeaseBlocked: z.number().int().optional(),
  nThrottled: z.number().int().optional(),
  lastDrainMs: z.number().optional(),
  lastIdleAt: z.number().optional(),
});
export type DispatchItem = z.infer<typeof DispatchItemSchema>;

export const liveLeases = (item: Pick<DispatchItem, 'slots'>, now: number): number =>
  Object.values(item.slots).filter((slot) => slot.s === 'l' && slot.at > now).length;
