import {
  ADAPTIVE_RULES,
  SLEEP_THROUGH_MAX_SECONDS,
  type RateAnswer,
  type RateRules,
  type RateState,
} from './adaptive-rate.js';
import { deliverTask, type DeliverDeps } from './deliver-task.js';
import { UnsettledError, writeDelivered } from './delivered-settle.js';
import { MetricNames } from './names.js';
import type { DeliveredSettle, DispatchState } from './ports.js';
import type { Policy } from './plans.js';
import { quotaPacer } from './quota-pacer.js';
import {
  intervalMs,
  localPacer,
  maxPaceWaitMs,
  BLOCK_RULES,
  sharedPacer,
  spanOf,
  type BlockRules,
  type Pacer,
} from './rate.js';
import { signalStore, type SignalDeps } from './signal.js';
import {
  bySource,
  receiveBatch,
  REST_RULES,
  type PollAnswer,
  type RestRules,
  type SourcedMessage,
} from './slice-receive.js';
import { StoreRate } from './store-rate.js';
import type { StoreRecord } from './store-model.js';
import type { SliceWatch } from './store-watch.js';
import { MAX_DELAY_SECONDS, VISIBILITY_MARGIN_SECONDS } from './timing.js';
import { guardUntilVisible, hiding } from './wake.js';

export const SLICE_END_REASONS = [
  'max_messages',
  'max_time',
  'yielded',
  'empty',
  'confirm',
  'deferred',
  'throttled',
  'error',
  'lease_lost',
  'store_changed',
  'stalled',
] as const;
export type SliceEndReason = (typeof SLICE_END_REASONS)[number];

export interface SliceDeps extends DeliverDeps, SignalDeps {
  dispatch: DispatchState;
  /** The adaptive rate's rules; ADAPTIVE_RULES unless the simulation runs a broken variant. */
  rateRules?: RateRules;
  /** The shared pacer's block arithmetic; BLOCK_RULES unless the simulation runs a broken variant. */
  blockRules?: BlockRules;
  /** How a slice ends with an empty check's other long poll still running; REST_RULES unless the simulation runs a broken variant. */
  restRules?: RestRules;
  settings: DeliverDeps['settings'] & {
    emptyPollSeconds: number;
    /**
     * A confirm queue exists: a slice whose short polls come back empty hands its slot to it (`confirm`) rather
     * than long-polling itself; the confirm slice makes the empty decision (docs/ARCHITECTURE.md, "Confirm queue").
     */
    confirmQueue?: boolean;
  };
}

export interface Lease {
  slotId: string;
  fence: number;
  /** enqSeq as read when the lease was taken: the value "mark idle" is conditioned on. */
  seenSeq: number;
  startedAt: number;
  expiresAt: number;
  /** Earliest start of this store's next call, for single-consumer pacing carried across slices. */
  nextCallAt: number;
  /** Slots the store held when the lease was taken; fan-out only while below the concurrency limit. */
  slotsAtStart: number;
  /** Slices of this slot in a row that ended on an error before this one (the slot's `e`). */
  errorStreak?: number;
  /** When the store last became busy (its active mark), for the time-to-drain measure. */
  activeSince?: number;
  /** Carried from the ingest request that signalled the store, for the logs. */
  correlationId?: string;
  /** The store's learnt marketplace rate (adaptive rate) as read with the lease. */
  rate?: RateState;
  /** The shared schedule's last block's lateness as read with the lease (`tatLate`, rate.ts `sharedPacer`). */
  tatLate?: number;
  /**
   * The store's confirm slice (its attention came through the confirm queue): its first receive is the empty
   * decision's long poll, and it never hands its slot on again.
   */
  confirming?: boolean;
  /**
   * This slice makes its empty decision itself, with the long poll, rather than hand it to the confirm queue (its
   * attention's reason is one of `DECIDES_EMPTY`: the store trickles, or the reconciler re-announced the slot).
   */
  decidesEmpty?: boolean;
}

export interface SliceResult {
  end: SliceEndReason;
  handled: number;
  delivered: number;
  deadLettered: number;
  /** The store went idle (last slot removed) at the end of this slice. */
  idle: boolean;
  /**
   * When the store should next be looked at (requeue due time), for max_*, yielded, confirm, throttled, deferred
   * and error.
   */
  resumeAt?: number;
  nextCallAt: number;
  /** On an error: until when messages the slice received may still be hidden (forbid idle until then). */
  hiddenUntil?: number;
  /**
   * Hold the store until then: on an error, the end of the latest Retry-After the slice was told; on any end, a
   * spent window quota whose hold the slice could not write.
   */
  throttledUntil?: number;
  headSentAt?: number;
}

const SQS_MAX_BATCH = 10;
/**
 * A slice that has handled this many tasks (five full batches) keeps its empty decision even where a confirm queue
 * exists: its store is busy (a catch-up with a running ingest), a second's long poll costs it little per task, and
 * a hand-off would add a round of signalling for the tasks about to arrive (the pipeline bench, 10 stores fed at
 * 1,000/s: 1.84 → 2.05 requests a task when every slice handed off). The confirm queue is for small activations —
 * the lone task, a small burst. One full batch was tried first: the scale model's busy multi-consumer slices then
 * drifted 11 % from the real core's worker time in the calibration (five: within 5 %).
 */
export const HANDOFF_BELOW_HANDLED = 5 * SQS_MAX_BATCH;
/** A store whose only pending work is hidden for a retry is looked at again at least this often. */
const DEFERRED_LOOK_MS = 20_000;
/**
 * A slice with a full batch in hand fans out once its calls (two or more, the last delivered) have taken this much
 * work, without waiting for the batch's end.
 */
export const FANOUT_WORK_MS = 1_000;
/** A slice that ended on an operational error is looked at again after this, doubling with each error in a row. */
export const ERROR_RETRY_MS = 5_000;
/** The ceiling of that backoff: SQS's longest delay, so a broken store costs O(1) requests per 15 minutes. */
export const MAX_ERROR_RETRY_MS = 900_000;

/**
 * How long a slot waits after its `streak`-th error in a row: 5 s doubling up to 15 min, with "equal
 * jitter" (half fixed, half random) so stores failing together (a dependency outage) do not retry in step.
 */
export const errorBackoffMs = (streak: number, random: () => number): number => {
  const ceiling = Math.min(MAX_ERROR_RETRY_MS, ERROR_RETRY_MS * 2 ** Math.max(0, streak - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
};

type IdleAttempt =
  | { kind: 'idle'; drainMs?: number }
  | { kind: 'shared' }
  | { kind: 'lost' }
  | { kind: 'new_work'; enqSeq: number }
  | { kind: 'deferred'; wakeAt: number };

/**
 * The queue looked empty under a long poll. Mark the store idle only if nothing was enqueued since
 * the lease read enqSeq (ingest bumps it after the send is durable) — else keep consuming.
 * `tat` carries a single-consumer store's pacing to its next lease.
 *
 * The polls' "empty" holds as of when they looked, which can be long before they answer (one of the two
 * side-by-side long polls stalls while the other answered empty at once): so the store's guards — a
 * message hidden until `wakeAt`, an ingest in flight until `ingestUntil` — are compared with the time the
 * polls began (`polledAt`), not with now. Compared with now, a guard that expired during the stall let a
 * message that became visible after the prompt poll answered be left in an idle store (simulation seed
 * 52622: the high queue's long poll stalled 17 s).
 */
const tryIdle = async (
  deps: SliceDeps,
  storeId: string,
  lease: Lease,
  seenSeq: number,
  tat: number | undefined,
  polledAt: number,
): Promise<IdleAttempt> => {
  // Two tries: a release refused because the other slots left meanwhile makes this the last slot.
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = polledAt;
    // Time to drain: from the store becoming busy to the slice that found it empty.
    const drainMs =
      lease.activeSince === undefined ? undefined : Math.max(0, deps.clock.now() - lease.activeSince);
    const result = await deps.dispatch.markIdle(storeId, lease.slotId, lease.fence, {
      seenSeq,
      now,
      ...(tat === undefined ? {} : { tat }),
      ...(drainMs === undefined ? {} : { drainMs }),
    });
    if (result.ok) return drainMs === undefined ? { kind: 'idle' } : { kind: 'idle', drainMs };
    const current = result.current;
    const slot = current?.slots[lease.slotId];
    if (!current || !slot || slot.s !== 'l' || slot.f !== lease.fence) return { kind: 'lost' };
    if (current.enqSeq !== seenSeq) return { kind: 'new_work', enqSeq: current.enqSeq };
    // An ingest is between its write-ahead and its end: its tasks are on their way; look again.
    if ((current.ingesting ?? 0) > 0 && (current.ingestUntil ?? 0) > now)
      return { kind: 'new_work', enqSeq: current.enqSeq };
    if (current.wakeAt !== undefined && current.wakeAt > now)
      return { kind: 'deferred', wakeAt: current.wakeAt };
    // A redrive may still be feeding the queue: look again soon, until the reconciler sees the move end.
    if (current.redriveAt !== undefined) return { kind: 'deferred', wakeAt: now + DEFERRED_LOOK_MS };
    // Other slots remain: leave this one; they go idle when their own queue looks empty.
    const released = await deps.dispatch.release(storeId, lease.slotId, lease.fence, tat);
    if (released.ok) return { kind: 'shared' };
    const after = released.current?.slots[lease.slotId];
    if (!after || after.s !== 'l' || after.f !== lease.fence) return { kind: 'lost' };
  }
  return { kind: 'lost' };
};

/**
 * Consumes one bounded slice of a store's queue under a lease (invariant 4): it ends at
 * maxMessagesPerSlice, maxSliceSeconds, a throttle, an operational error or an empty queue.
 * One marketplace call at a time per lease; calls are paced so the store never exceeds ratePerSecond.
 */
export const runSlice = async (
  deps: SliceDeps,
  store: StoreRecord,
  policy: Policy,
  lease: Lease,
  /** Asked before each call: the store re-read (absent: the slice never re-reads, as in unit tests of other ends). */
  watch?: SliceWatch,
): Promise<SliceResult> => {
  const deadline = lease.startedAt + policy.maxSliceSeconds * 1000;
  const single = policy.maxConcurrentConsumers === 1;
  /** The store's effective rate: the policy's, or lower where the marketplace said so (read before each call). */
  const rate = new StoreRate(deps, store.storeId, policy.ratePerSecond, lease.rate, policy.throttleScope);
  /** The spacing of this lease's calls: the effective rate's, stretched to keep every 5 s window (`pacedInterval`). */
  const policyInterval = intervalMs(policy.ratePerSecond);
  const paceRules = deps.blockRules ?? BLOCK_RULES;
  const interval = (): number => paceRules.paced(rate.intervalMs(), !single, policyInterval);
  const rules = deps.rateRules ?? ADAPTIVE_RULES;
  /**
   * Past this wait for its instant, a multi-consumer store is held (another consumer's 429), not paced: a
   * hold short enough to sleep through (as the consumer that met the 429 does) is waited out in the slice.
   */
  const maxWaitMs = (): number =>
    maxPaceWaitMs(interval(), policy.maxConcurrentConsumers) + SLEEP_THROUGH_MAX_SECONDS * 1000;
  /** Until when the marketplace said this store's window quota is spent (`quotaSpentUntil`; 0: never). */
  let quotaUntil = 0;
  /** How far the holds this slice wrote on the shared schedule are known to reach (0: none landed). */
  let heldUntil = 0;
  const ratePacer: Pacer = single
    ? localPacer(interval, lease.nextCallAt, deps.clock)
    : sharedPacer(deps.dispatch, store.storeId, interval, deps.clock, {
        maxWait: maxWaitMs,
        onReservation: (reservation) => rate.reserved(reservation),
        ...(deps.blockRules === undefined ? {} : { rules: deps.blockRules }),
        peek: { wanted: () => rate.peekWanted(), read: () => rate.peek() },
        // The cap's blocks, stacked end to end, within the wait a call takes for a normal one.
        horizon: () => maxWaitMs() / policy.maxConcurrentConsumers,
        ...(lease.tatLate === undefined ? {} : { knownLate: lease.tatLate }),
        consumers: policy.maxConcurrentConsumers,
      });
  const pacer = quotaPacer(ratePacer, deps.clock, () => quotaUntil, rules.resumeWithinSlice);
  /** This lease's expected spacing between calls: its share of the store's rate. */
  const shareMs = (): number => interval() * policy.maxConcurrentConsumers;
  /** Each marketplace answer feeds the rate; a lowered rate also stretches the shared schedule at once. */
  const observe = async (answer: RateAnswer): Promise<void> => {
    if (answer.retryAfterSeconds !== undefined)
      throttledUntil = Math.max(throttledUntil, deps.clock.now() + answer.retryAfterSeconds * 1000);
    // The window's quota spent: no call of the store before the window resets — this lease's (`quotaPacer`), a
    // single-consumer store's next lease (the carried pace) and the other consumers' (the hold below).
    const spent = rules.quotaSpentUntil(answer.limit, deps.clock.now());
    if (spent !== undefined) {
      quotaUntil = Math.max(quotaUntil, spent);
      throttledUntil = Math.max(throttledUntil, spent);
    }
    // A 429 first holds the other consumers for its whole Retry-After (firstHoldUntil), before the rate's own
    // writes and the settle: their next reservations, which would otherwise go out at the old spacing into an
    // empty bucket while those writes run, then wait. A spent quota holds them likewise, one write for both;
    // written for a single-consumer store too (a consumer a raised cap adds paces on the shared schedule).
    const holdUntil = Math.max(
      !single && answer.throttled ? rules.firstHoldUntil(answer.retryAfterSeconds, deps.clock.now()) : 0,
      spent ?? 0,
    );
    if (holdUntil > 0)
      await deps.dispatch
        .holdTat(store.storeId, holdUntil)
        .then(() => {
          heldUntil = Math.max(heldUntil, holdUntil);
        })
        .catch((error: unknown) => deps.telemetry.warn('store not held', { error: String(error) }));
    const before = interval();
    await rate.observe(answer);
    const stretch = spanOf(1, interval() - before);
    // The schedule's next instant was reserved at the old spacing: push it on by the difference, so the next
    // call of any consumer is one new interval after this one (one write, only when the rate was lowered).
    if (!single && stretch > 0)
      await deps.dispatch
        .advanceTat(store.storeId, stretch, 0)
        .catch((error: unknown) => deps.telemetry.warn('schedule not stretched', { error: String(error) }));
  };
  let seenSeq = lease.seenSeq;
  let handled = 0;
  let delivered = 0;
  let deadLettered = 0;
  let fannedOut = lease.slotsAtStart >= policy.maxConcurrentConsumers;
  /**
   * Marketplace calls this slice made and the time their tasks took, less the sleep for the rate (the claim, the
   * call, the rate's writes on its answer, the pacer's writes and the looks at the store; the delivered settles
   * are the batch's): how many consumers the store's rate can use.
   */
  let calls = 0;
  let callMs = 0;
  let headSentAt: number | undefined;
  /**
   * A full batch means a deep backlog: open one more slot, as far as more consumers can help — once per slice,
   * after the batch, or as soon as two or more of its calls, the last delivered, have taken FANOUT_WORK_MS of work
   * (a slow marketplace: ten 3 s calls do not fit a 20 s slice, and a store waiting for its batch's end never got a
   * second consumer). A store whose
   * rate binds gains nothing from consumers that would only wait for it while holding workers: about rate × task
   * time of them keep it busy, plus one. The task's time, not only its call: on a slow table the claim before a
   * 20 ms call took several times as long, and two consumers of a 6/s store sent 4–5 calls a second
   * (bench:adaptive, 2026-12-03). Each new slice does the same, so a store ramps up in a few slices and never
   * beyond maxConcurrentConsumers (the slot-count condition).
   */
  const fanOut = async (): Promise<void> => {
    if (fannedOut) return;
    fannedOut = true;
    const useful = Math.ceil((rate.current().effective * callMs) / calls / 1000) + 1;
    await signalStore(deps, store.storeId, {
      limit: Math.min(policy.maxConcurrentConsumers, useful),
      reason: 'fanout',
      priority: policy.priority,
      // Fenced: a zombie's fan-out (its lease reclaimed) could put a slot beside a lease that paces alone.
      by: { slotId: lease.slotId, fence: lease.fence },
    }).catch((error: unknown) => deps.telemetry.warn('fan-out failed', { error: String(error) }));
  };
  /** This lease's last call was answered 429 and slept through (the next 429 in a row ends the slice). */
  let sleptThrough = false;
  /** The end of the latest Retry-After a marketplace answer gave this slice (0: none). */
  let throttledUntil = 0;
  /**
   * Until when messages this slice received may stay hidden: a receive hides them for the visibility it asked
   * (at most the lease's remaining time at `polledAt` + the margin) from when SQS applied it — as late as its
   * answer came back (or its error, if it applied with the answer lost), which a stall may put past the lease.
   * An error ending the slice forbids idle until then (seeds 4734 and 4776: a stalled receive, then a failed
   * hand-back or a lost answer, left messages hidden beyond the lease's guard in a store marked idle).
   */
  let hiddenUntil = 0;
  const receivedUntil = (polledAt: number): void => {
    const asked = Math.ceil((lease.expiresAt - polledAt) / 1000) + VISIBILITY_MARGIN_SECONDS;
    hiddenUntil = Math.max(hiddenUntil, deps.clock.now() + asked * 1000);
  };
  /**
   * `hiding` (an SQS call that hides messages or sends delayed copies, then its late guard after a stall) whose
   * call or late guard failed: what it hid may stay hidden until `seconds` from now, which the write-ahead
   * guard, computed before a stall, may not cover; the error end's guard covers it instead (simulation seed
   * 361626: a zombie's throttle re-send landed, its late guard failed, and the next slice marked the store
   * idle while the delayed copies were still on their way).
   */
  const hidden = async (
    opts: { plannedAt: number; seconds: number; enqueued?: number },
    call: () => Promise<unknown>,
  ) => {
    try {
      await hiding(deps, store.storeId, opts, call);
    } catch (error) {
      hiddenUntil = Math.max(hiddenUntil, deps.clock.now() + opts.seconds * 1000);
      throw error;
    }
  };
  /**
   * Whatever ends the slice, a Retry-After it was told holds: the store's next call (carried for a
   * single-consumer store) and an error's retry wait for it, even when the writes that would have carried it
   * (the hold, the re-send, the settle) are what failed (simulation seeds 1513, 2471).
   */
  const result = (end: SliceEndReason, extra: Partial<SliceResult> = {}): SliceResult => ({
    end,
    handled,
    delivered,
    deadLettered,
    idle: false,
    nextCallAt: Math.max(pacer.carry, throttledUntil),
    ...(headSentAt === undefined ? {} : { headSentAt }),
    ...extra,
    ...(end === 'error' && extra.resumeAt !== undefined
      ? { resumeAt: Math.max(extra.resumeAt, throttledUntil) }
      : {}),
    ...(end === 'error' && hiddenUntil > 0 ? { hiddenUntil } : {}),
    ...(end === 'error' && throttledUntil > 0
      ? { throttledUntil }
      : // A spent quota whose hold did not land, whatever ends the slice: the attention writes it again.
        quotaUntil > heldUntil && quotaUntil > deps.clock.now()
        ? { throttledUntil: quotaUntil }
        : {}),
  });

  /**
   * The empty check's other long poll, still running when the first brought a trickle (`receiveBatch`), and
   * when that round's polls began.
   */
  let rest: { answer: Promise<PollAnswer>; polledAt: number } | undefined;
  /** Messages this slice will not call, back to their queues at once (one batch call per queue). */
  const visibleNow = async (messages: SourcedMessage[]): Promise<void> => {
    for (const [url, group] of bySource(messages))
      await deps.tasks.changeVisibility(
        url,
        group.map((m) => ({ receiptHandle: m.receiptHandle, seconds: 0 })),
      );
  };
  /**
   * Whether this round's empty look goes to the confirm queue: where one exists, unless this is the confirm slice
   * itself, keeps its decision (`decidesEmpty`: a trickle's next task would wait out the confirm queue's window),
   * or has handled five full batches (HANDOFF_BELOW_HANDLED: a busy store).
   */
  const handsOff = (): boolean =>
    deps.settings.confirmQueue === true &&
    lease.confirming !== true &&
    lease.decidesEmpty !== true &&
    handled < HANDOFF_BELOW_HANDLED;
  /** A confirm slice's first receive goes straight to the long polls (its main slice's short polls came first). */
  let longFirst = lease.confirming === true;
  const ended = await (async (): Promise<SliceResult> => {
    try {
      for (;;) {
        const now = deps.clock.now();
        if (handled >= policy.maxMessagesPerSlice) return result('max_messages', { resumeAt: now });
        if (now >= deadline) return result('max_time', { resumeAt: now });
        // Receive no more than this lease can deliver before its deadline at its share of the rate.
        const callsLeft = Math.max(1, Math.floor((deadline - now) / shareMs()) + 1);
        const budget = Math.min(SQS_MAX_BATCH, policy.maxMessagesPerSlice - handled);
        const want = Math.min(budget, callsLeft);
        let batch: SourcedMessage[];
        /** Tasks that only arrived during the empty check: deliver them, then yield the worker. */
        let trickled: boolean;
        /** When the polls of this round began: an "empty" answer holds as of then at best (see tryIdle). */
        const polledAt = deps.clock.now();
        try {
          let pending: Promise<PollAnswer> | undefined;
          let handedOff: true | undefined;
          ({
            batch,
            trickled,
            rest: pending,
            handoff: handedOff,
          } = await receiveBatch(deps.tasks, store, {
            want,
            budget,
            emptyPollSeconds: deps.settings.emptyPollSeconds,
            handoff: handsOff(),
            longFirst,
            // From the clock at each receive: the polls before it move it on.
            visibilitySeconds: () =>
              Math.ceil((lease.expiresAt - deps.clock.now()) / 1000) + VISIBILITY_MARGIN_SECONDS,
          }));
          longFirst = false;
          // Only with a trickle, which ends the slice after its batch: no idle decision comes while it runs.
          if (pending !== undefined) rest = { answer: pending, polledAt };
          // Both short polls empty: the slot goes to the confirm queue, whose slices long-poll side by side.
          if (handedOff === true) return result('confirm', { resumeAt: deps.clock.now() });
        } catch (error) {
          deps.telemetry.error('receive failed', { error: String(error) });
          // It may have applied with its answer lost: its messages hide as long as if it had answered.
          receivedUntil(polledAt);
          return result('error', { resumeAt: now + ERROR_RETRY_MS });
        }
        receivedUntil(polledAt);

        if (batch.length === 0) {
          const idle = await tryIdle(
            deps,
            store.storeId,
            lease,
            seenSeq,
            single ? Math.max(pacer.carry, throttledUntil) : undefined,
            polledAt,
          );
          switch (idle.kind) {
            case 'idle': {
              if (idle.drainMs !== undefined) {
                deps.telemetry.timing(MetricNames.timeToDrain, idle.drainMs);
                deps.telemetry.info('store drained', { drainMs: idle.drainMs });
              }
              return result('empty', { idle: true });
            }
            case 'shared':
              return result('empty');
            case 'lost':
              return result('lease_lost');
            case 'deferred':
              // Look again well before a long backoff ends: new tasks must not wait behind a retried one.
              return result('deferred', {
                resumeAt: Math.min(idle.wakeAt, deps.clock.now() + DEFERRED_LOOK_MS),
              });
            case 'new_work':
              // A confirm slice is one empty check: tasks its long poll did not see go to a slice of the level's
              // pool, which makes its own empty decision (`recheck`), so confirm invocations stay short.
              if (lease.confirming === true) return result('yielded', { resumeAt: deps.clock.now() });
              seenSeq = idle.enqSeq;
              continue;
          }
        }

        const oldest = Math.min(...batch.map((m) => m.sentAt));
        // The age of the oldest task in hand when the slice starts: how long this store's work waited.
        if (handled === 0 && headSentAt === undefined)
          deps.telemetry.timing(MetricNames.oldestTaskAge, Math.max(0, now - oldest));
        headSentAt = oldest;
        const fullBatch = batch.length === SQS_MAX_BATCH;

        // Each message goes back to the queue it came from (the high-priority queue or the work queue).
        const finished: SourcedMessage[] = [];
        /** The delivered settles of this batch's 2xx calls, not yet written (with their messages). */
        const settles = new Map<SourcedMessage, DeliveredSettle>();
        /**
         * Deletes the finished messages — after the delivered settles among them are written, in one request:
         * a message deleted before its settle landed would leave the task `processing`, and a crash between
         * them would lose its status. A settle still unwritten after its tries keeps its message (it comes back
         * after its visibility, and is called again once its claim expires) and fails the slice.
         */
        const flush = async (): Promise<void> => {
          const done = finished.splice(0);
          const pending = new Map(settles);
          settles.clear();
          let failure: UnsettledError | undefined;
          try {
            if (pending.size > 0) await writeDelivered(deps, [...pending.values()]);
          } catch (error) {
            failure =
              error instanceof UnsettledError ? error : new UnsettledError([...pending.values()], error);
          }
          const unsettled = new Set(failure?.unsettled ?? []);
          const deletable = done.filter((m) => {
            const settle = pending.get(m);
            return settle === undefined || !unsettled.has(settle);
          });
          for (const [url, rest] of bySource(deletable))
            await deps.tasks.deleteBatch(
              url,
              rest.map((m) => m.receiptHandle),
            );
          if (failure) throw failure;
        };
        const handBack = async (start: number): Promise<void> => {
          await flush();
          await visibleNow(batch.slice(start));
        };
        /** The messages from `start` on come back after `delaySeconds` as fresh copies (their receive count restarts). */
        const resendCopies = async (
          messages: SourcedMessage[],
          delaySeconds: number,
          plannedAt: number,
        ): Promise<void> => {
          // Write-ahead, as an enqueue: a zombie (its lease expired while it waited) re-sending into a store
          // that went idle meanwhile has marked it active again before its copies land (simulation seed 9162).
          await deps.dispatch.recordEnqueued(store.storeId, messages.length, deps.clock.now());
          await hidden({ plannedAt, seconds: delaySeconds, enqueued: messages.length }, async () => {
            for (const [url, copies] of bySource(messages))
              await deps.tasks.resend(url, copies, delaySeconds);
          });
          deps.telemetry.count(MetricNames.tasksResent, messages.length);
        };
        const resendRest = async (start: number, delaySeconds: number, plannedAt: number): Promise<void> => {
          await flush();
          await resendCopies(batch.slice(start), delaySeconds, plannedAt);
        };
        try {
          for (let i = 0; i < batch.length; i++) {
            const message = batch[i] as SourcedMessage;
            // No call starts at or after the slice deadline, so the last one ends before the lease expires.
            const pace = async (): Promise<boolean> => {
              // The messages in hand from this one on: a shared pacer reserves their instants with one write.
              // The store as read less than STORE_RECHECK_MS before the call (a pause, a disable, a lowered cap or
              // rate ends the slice): looked at before the rate's wait, so a read due then does not make the call late
              // for its instant, and again at the instant, inside the pacer (a read only when the wait was long): its
              // time counts as the call's lateness there, so a slow read never bunches calls (rate.ts `atInstant`).
              // Its reads count as the task's work (the fan-out's task time), as the pacer's writes do; only the
              // pacer's sleep is pacing (session 26). A failed read ends the slice as an error, after
              // deliverTask released the task's claim (not_started).
              const look = async (): Promise<boolean> => {
                if (!watch) return true;
                const verdict = await watch.recheck(policy, deadline).catch((error: unknown) => {
                  unread = { error };
                  return 'unread' as const;
                });
                changed = verdict === 'changed';
                return verdict === 'go';
              };
              const slept = pacer.sleptMs;
              const allowed = (await look()) && (await pacer.acquire(deadline, batch.length - i, look));
              callStartedAt = deps.clock.now();
              paced += pacer.sleptMs - slept;
              return allowed;
            };
            const taskStartedAt = deps.clock.now();
            let callStartedAt: number | undefined;
            /** The re-read before this task's call found the store changed: it ends the slice. */
            let changed = false;
            /** The re-read before this task's call failed (its error): it ends the slice as an error. */
            let unread: { error: unknown } | undefined;
            /**
             * This task's time asleep for the rate (its instant, a quota): not its work. The pacer's writes and the
             * looks at the store are (session 26): they lie on the lease's path before every call, and where each
             * call needs its own block (a lease slower than the interval) a loaded table's writes made the store's
             * fan-out too small to reach its rate — 30/s, 60 ms calls, four consumers of ten, 86 % of the rate.
             */
            let paced = 0;
            if (deps.clock.now() >= deadline) {
              await handBack(i);
              return result('max_time', { resumeAt: deps.clock.now() });
            }
            // An operational error (DynamoDB, SQS) mid-task ends the slice through the catch below; the message
            // reappears after its visibility.
            const outcome = await deliverTask(deps, store, policy, message, pace, deadline, observe, {
              add: (settle) => settles.set(message, settle),
              holds: (holder) => [...settles.values()].some((settle) => settle.claimed.holder === holder),
            });
            if (outcome.kind === 'not_started') {
              const at = deps.clock.now();
              if (unread) {
                // The messages in hand were not called: back to the queue now (best effort), not after the lease.
                await handBack(i).catch(() => undefined);
                throw unread.error;
              }
              if (changed) {
                // Paused, disabled, deleted, or a lower cap or rate in force: the messages in hand go back at once,
                // and the slot is requeued under the store as just read (dropped over a lowered cap; a paused
                // store's attention is discarded, its slot with it, and resuming issues a fresh one).
                await handBack(i);
                return result('store_changed', { resumeAt: at });
              }
              if (pacer.held) {
                // Another consumer's 429 holds the store (holdTat), or the marketplace's window quota is spent
                // (quotaPacer) for longer than a sleep-through: the messages in hand come back when the hold
                // ends, as fresh copies — handing them back would spend one receive per hold, and a long
                // throttle would push them into the DLQ. Write-ahead: no idling before they are visible again.
                const delaySeconds = Math.min(
                  MAX_DELAY_SECONDS,
                  Math.max(1, Math.ceil((pacer.blockedUntil - at) / 1000)),
                );
                const visibleAt = at + delaySeconds * 1000;
                await guardUntilVisible(deps.dispatch, store.storeId, visibleAt);
                await resendRest(i, delaySeconds, at);
                return result('throttled', { resumeAt: visibleAt });
              }
              // No call may start before the deadline, or the host is stalled past the lateness the spacing pays for
              // (the pacer's late wake-ups in a row, its own reason so an operator can tell it): look again when one may.
              await handBack(i);
              return result(pacer.stalled ? 'stalled' : 'max_time', {
                resumeAt: Math.max(at, pacer.blockedUntil),
              });
            }
            if (callStartedAt !== undefined) {
              calls++;
              callMs += deps.clock.now() - taskStartedAt - paced;
            }
            // A slow marketplace: two delivered calls or more have taken a second of work (not a failing one, whose
            // timeouts would add consumers against it; not one cold first call, which would overstate the need).
            if (
              fullBatch &&
              outcome.kind === 'done' &&
              outcome.as === 'delivered' &&
              calls >= 2 &&
              callMs >= FANOUT_WORK_MS
            )
              await fanOut();
            handled++;
            // (Not a task dead-lettered as expiring on its 429: it is done, never called again.)
            if (outcome.kind === 'throttled' && !outcome.deadLettered) {
              // A short Retry-After that ends before the deadline: hold every consumer of the store (the shared
              // schedule), sleep through it with the task still in hand, and call it again — no copies, no restart.
              // The 429 counted as one of the slice's calls: only while the batch's calls still fit the slice.
              // Not twice in a row: a store the marketplace keeps refusing (a 429 storm) gives its worker back.
              const at = deps.clock.now();
              const resume = sleptThrough
                ? undefined
                : rules.resumeWithinSlice(outcome.afterSeconds, at, deadline);
              if (resume !== undefined && handled + batch.length - i <= policy.maxMessagesPerSlice) {
                sleptThrough = true;
                await deps.dispatch.holdTat(store.storeId, resume);
                const wait = resume - deps.clock.now();
                if (wait > 0) await deps.clock.sleep(wait);
                i--;
                continue;
              }
            }
            sleptThrough = false;
            if (outcome.kind === 'done') {
              if (outcome.as === 'delivered') delivered++;
              if (outcome.as === 'dead_lettered') deadLettered++;
              finished.push(message);
              continue;
            }
            // The task must come back later: first forbid "idle" until then (write-ahead), then hide the message.
            const plannedAt = deps.clock.now();
            const until = plannedAt + outcome.afterSeconds * 1000;
            await guardUntilVisible(deps.dispatch, store.storeId, until);
            if (outcome.kind === 'retry') {
              // A 429 under `throttleScope: 'task'`: that task alone comes back after its Retry-After, as a fresh
              // copy; a transient failure, by its message's visibility.
              if (outcome.copy) await resendCopies([message], outcome.afterSeconds, plannedAt);
              else
                await hidden({ plannedAt, seconds: outcome.afterSeconds }, () =>
                  deps.tasks.changeVisibility(message.queueUrl, [
                    { receiptHandle: message.receiptHandle, seconds: outcome.afterSeconds },
                  ]),
                );
              continue;
            }
            // Throttled: the store stops until Retry-After — all its consumers, not only this one: holding the
            // shared schedule makes the others' next calls wait for it too (or end their slices until then).
            // Written for a single-consumer store too (one write per 429): a consumer added meanwhile by a raised
            // cap paces on the shared schedule, and must find the hold there.
            // Its messages in hand come back then as fresh copies, so throttling never counts toward the DLQ's
            // receive limit.
            await deps.dispatch.holdTat(store.storeId, until);
            // A task past its expiry age was dead-lettered instead (issue #10): delete it, re-send the rest.
            if (outcome.deadLettered) {
              deadLettered++;
              finished.push(message);
            }
            await resendRest(outcome.deadLettered ? i + 1 : i, outcome.afterSeconds, plannedAt);
            return result('throttled', { resumeAt: until });
          }
        } catch (error) {
          // Any failure mid-batch (a task's claim or settle, a guard, visibility or hold write, a re-send): the calls
          // that already answered 2xx still get their delivered settles (best effort) before the error ends the
          // slice; left unwritten, their claims would expire and a later copy would call again (simulation seed 129).
          await flush().catch(() => undefined);
          throw error;
        }
        // DynamoDB refusing the batch's delivered settles every try (UnsettledError) ends the slice as an error in the
        // outer catch, like any failure: their messages stay.
        await flush();
        if (trickled) {
          // A store fed by a trickle would keep its worker waiting in long polls until maxSliceSeconds; its turn
          // ends instead, and it goes to the back of the round like any other (invariant 5).
          return result('yielded', { resumeAt: deps.clock.now() });
        }
        if (fullBatch && calls > 0) await fanOut();
      }
    } catch (error) {
      // An operational error (DynamoDB, SQS) anywhere in the slice ends it as an error, here rather than in the
      // caller, so the result still carries a Retry-After this slice was told (simulation seed 1513).
      deps.telemetry.error('slice failed', { error: String(error) });
      return result('error', { resumeAt: deps.clock.now() + ERROR_RETRY_MS });
    }
  })();
  if (rest === undefined) return ended;
  // Settled before the lease goes: its messages handed back, or the slice fails, forbidding idle while they may
  // stay hidden (hiddenUntil), like a receive whose answer was lost.
  const { answer, polledAt } = rest;
  let outcome = ended;
  await (deps.restRules ?? REST_RULES).settle(answer, async (settledAnswer) => {
    try {
      if (settledAnswer.status === 'rejected') throw settledAnswer.reason;
      await visibleNow(settledAnswer.value);
    } catch (error) {
      deps.telemetry.error('empty check not settled', { error: String(error) });
      receivedUntil(polledAt);
      outcome = result('error', {
        resumeAt: Math.max(ended.resumeAt ?? 0, deps.clock.now() + ERROR_RETRY_MS),
      });
    }
  });
  return outcome;
};

export const countSliceEnd = (deps: Pick<SliceDeps, 'telemetry'>, result: SliceResult): void => {
  deps.telemetry.count(MetricNames.slicesEnded, 1, { reason: result.end });
};
