import { CONFIRM_EVENT_SOURCE, FUNCTIONS, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { SLEEP_THROUGH_MAX_SECONDS } from '../../lambdas/core/adaptive-rate.js';
import { ACTIVE_SHARDS } from '../../lambdas/core/names.js';
import {
  bindsDeep,
  blockLateness,
  blockSize,
  LATENESS_REACH_MS,
  lateness,
  maxPaceWaitMs,
  pacedInterval,
  reachSpacing,
  recordCycle,
  spacingOf,
} from '../../lambdas/core/rate.js';
import { HANDOFF_BELOW_HANDLED } from '../../lambdas/core/slice.js';
import { STORE_RECHECK_MS } from '../../lambdas/core/timing.js';
import { IntQueue, KeyedHeap } from './engine.js';
import { MODEL, Requests, type World } from './world.js';

/**
 * The six dispatch designs. Each one wires itself to a World (arrivals, per-store counters, the shared rate
 * limiter, metrics) and drives workers through simulated time. Every design delivers one task per
 * marketplace call, honours each store's ratePerSecond through the same GCRA limiter (a worker that holds a
 * task waits for the store's next instant), and pays the same AWS call latency and marketplace latency.
 */
export interface DesignRun {
  /** Workers that the utilisation is measured against. */
  readonly workers: number;
  /** Adds the requests that are counted analytically (idle long polls) once the run's span is known. */
  finish(spanMs: number): void;
}

export interface Design {
  readonly id: string;
  readonly label: string;
  readonly attach: (world: World, workers: number) => DesignRun;
  /** Requests in a month with no traffic at all, counted from the design's polling behaviour. */
  readonly idleMonth: (stores: number, workers: number) => Requests;
  /** Lambda GB-s in such a month (functions that run with no traffic: the attention design's reconciler). */
  readonly idleGbSeconds?: () => number;
}

const MONTH_MS = 30 * 86_400_000;

/** A month of `pollers` consumers long-polling empty queues: the idle cost of the polling designs. */
const idleLongPolling = (bucket: 'sqs' | 'sqsFifo', pollers: number): Requests => {
  const req = new Requests();
  req.add(bucket, 'polling', (pollers * MONTH_MS) / MODEL.longPollMs);
  return req;
};
const SQS_BATCH = 10;
const AWS = MODEL.awsCallMs;

// ---------------------------------------------------------------------------------------------------------
// This project: the attention queue.
// ---------------------------------------------------------------------------------------------------------

/** Settings from lambdas/config (runtime-config defaults) and docs/ARCHITECTURE.md. */
export const ATTENTION = {
  /** AQ_EMPTY_POLL_SECONDS default: the long poll that decides "empty" at the end of a slice. */
  emptyPollMs: 1000,
  /**
   * Attentions per worker invocation (WORKER_EVENT_SOURCE.defaultBatchSize), their slices run concurrently:
   * the worker (one unit of MaximumConcurrency) is held until the last of them ends.
   */
  batchSize: WORKER_EVENT_SOURCE.defaultBatchSize,
  /**
   * The confirm queue (CONFIRM_EVENT_SOURCE): a slice whose short polls come back empty hands its slot on, and the
   * confirm slices run in batches gathered over the batching window. The model charges their invocations to the
   * same pool of W workers (the deployment reserves CONFIRM_EVENT_SOURCE.maxConcurrency more beside it).
   */
  confirm: {
    batch: CONFIRM_EVENT_SOURCE.batchSize,
    windowMs: CONFIRM_EVENT_SOURCE.batchingWindowSeconds * 1000,
  },
  reconcilerPeriodMs: 60_000,
  /** AQ_SWEEP_STORES_PER_RUN default. */
  sweepPerRun: 35,
  /**
   * Task queues a slice polls per store: every store created through the API has its high-priority queue beside its
   * work queue (admin.ts createStoreQueues). slice-receive.ts short-polls the high queue before the work queue each
   * batch (the high poll is task priority's price: counted as task-queue requests), short-polls both to hand off or
   * before the empty check, and long-polls both at once in the check; a long poll that brings tasks leaves the other
   * running, and the slice waits for its answer before its lease goes (slice.ts `rest`). The reconciler's sweep
   * counts a store's high queue too when its work queue reads 0.
   */
  storeQueues: 2,
  /** Lambda's SQS event source: long pollers kept on an idle attention queue (assumption). */
  eventSourcePollers: 5,
  /** The store priority levels' attention queues, each with an event source of its own (lib: AttentionWorkers). */
  levelQueues: 3,
  /** Read units of one sweep step's Stores scan page (35 items ≈ 17 KB). */
  sweepScanReads: 5,
  /** The reconciler's memory (lambdas/config/topology.ts). */
  reconcilerMemoryGb: FUNCTIONS.reconciler.memoryMb / 1024,
} as const;

/** Store queues a slice polls (ATTENTION.storeQueues): the high-priority queue and the work queue. */
const Q = ATTENTION.storeQueues;

/**
 * The empty receives of Lambda's event-source pollers over `spanMs`: on every level's attention queue, and on the
 * confirm queue when there is one.
 */
const eventSourcePolls = (confirmQueue: boolean, spanMs: number): number =>
  ((ATTENTION.levelQueues + (confirmQueue ? 1 : 0)) * ATTENTION.eventSourcePollers * spanMs) /
  MODEL.longPollMs;

/** One reconciler run with nothing active: its calls one after another (16 queries, 35 GetQueueAttributes, …). */
const reconcilerIdleRunMs = (): number => {
  const req = new Requests();
  reconcilerRun(req, 0);
  return (req.bucket.sqs + req.bucket.ddbRead + req.bucket.ddbWrite) * MODEL.awsCallMs;
};

/** One reconciler run's requests, given how many stores are in the active index. */
const reconcilerRun = (req: Requests, active: number): void => {
  req.add('scheduler', 'attention');
  req.add('lambda', 'attention');
  req.add('ddbRead', 'attention', ACTIVE_SHARDS + active); // 16 index queries, then one read per active store
  req.add('ddbRead', 'attention', 1 + ATTENTION.sweepScanReads); // sweep cursor + Stores page
  // GetQueueAttributes per swept store: its work queue, and its high queue where that reads 0 (idle: every store).
  req.add('sqs', 'attention', ATTENTION.sweepPerRun * Q);
  req.add('ddbWrite', 'attention', 1); // sweep cursor
};

export const attentionDesign = (
  emptyPollMs: number = ATTENTION.emptyPollMs,
  id = 'attention',
  label = 'Attention queue (this project)',
  /** false: no reconciler runs and no event-source pollers (the calibration compares the slices alone). */
  background = true,
  batchSize: number = ATTENTION.batchSize,
  /**
   * The confirm queue (ATTENTION.confirm as built; absent: each slice long-polls itself, as before session 27): a
   * slice whose short poll comes back empty hands its slot to a separate confirm queue instead of long-polling;
   * that queue's event source batches `batch` records with a `windowMs` batching window, and its slices start
   * with the long poll (docs/ARCHITECTURE.md, "Confirm queue").
   */
  confirm?: {
    batch: number;
    windowMs: number;
    /**
     * Sensitivity (not built): the slice keeps its lease across the confirm (the message carries it): no requeue
     * write before the hand-off, and the confirm slice resumes the lease without the store read and the acquire.
     */
    parked?: boolean;
  },
): Design => ({
  id,
  label,
  idleGbSeconds: () =>
    (MONTH_MS / ATTENTION.reconcilerPeriodMs) * (reconcilerIdleRunMs() / 1000) * ATTENTION.reconcilerMemoryGb,
  idleMonth: () => {
    const req = new Requests();
    const runs = MONTH_MS / ATTENTION.reconcilerPeriodMs;
    reconcilerRun(req, 0);
    for (const k of Object.keys(req.bucket) as (keyof Requests['bucket'])[]) req.bucket[k] *= runs;
    for (const k of Object.keys(req.category) as (keyof Requests['category'])[]) req.category[k] *= runs;
    req.add('sqs', 'attention', eventSourcePolls(confirm !== undefined, MONTH_MS));
    return req;
  },
  attach: (world, workers) => {
    const { w, eng, req } = world;
    const slots = new Int32Array(w.stores);
    const enqSeq = new Int32Array(w.stores);
    const attention = new IntQueue(1024);
    const waiters: ((() => void)[] | undefined)[] = new Array(w.stores);
    let free = workers;
    /** The confirm queue's event source runs at most this many invocations at once, beside the W workers. */
    let confirmFree: number = CONFIRM_EVENT_SOURCE.maxConcurrency;
    let active = 0;
    /** The confirm queue: stores waiting for their confirm slice, and since when. */
    const confirmStores: number[] = [];
    const confirmAt: number[] = [];
    let confirmHead = 0;
    const confirmLength = (): number => confirmStores.length - confirmHead;
    const confirmReady = (): boolean =>
      confirm !== undefined &&
      confirmLength() > 0 &&
      (confirmLength() >= confirm.batch || eng.now - (confirmAt[confirmHead] as number) >= confirm.windowMs);

    // Per request: the write-ahead before the send and its end after it (ingest steps 3 and 5).
    req.add('ddbWrite', 'enqSeq', 2 * w.ingestRequests);

    /** One invocation: the worker is held from its start until the last of its slices has ended. */
    interface Invocation {
      startedAt: number;
      pending: number;
      /** Per slice: tasks it delivered and the time from asking for each rate instant to the call's end. */
      slices: { handled: number; callMs: number; confirm: boolean }[];
      /** A confirm queue's invocation: its own pool (CONFIRM_EVENT_SOURCE.maxConcurrency), not one of the W. */
      confirm?: boolean;
    }
    const dispatch = (): void => {
      while (confirmFree > 0 && confirmReady()) {
        confirmFree--;
        req.add('sqs', 'attention', 2);
        req.add('lambda', 'attention');
        const n = Math.min((confirm as { batch: number }).batch, confirmLength());
        const inv: Invocation = { startedAt: eng.now, pending: n, slices: [], confirm: true };
        for (let k = 0; k < n; k++) startSlice(confirmStores[confirmHead++] as number, inv, true);
        if (confirmHead > 4096 && confirmHead * 2 > confirmStores.length) {
          confirmStores.splice(0, confirmHead);
          confirmAt.splice(0, confirmHead);
          confirmHead = 0;
        }
      }
      while (free > 0 && attention.length > 0) {
        free--;
        // The event source's receive of up to batchSize attentions and its delete of them, one invocation.
        req.add('sqs', 'attention', 2);
        req.add('lambda', 'attention');
        const inv: Invocation = {
          startedAt: eng.now,
          pending: Math.min(batchSize, attention.length),
          slices: [],
        };
        // A `recheck` attention (its slice keeps its empty decision, attention.ts) is queued as −(store + 1).
        for (let k = inv.pending; k > 0; k--) {
          const v = attention.shift();
          startSlice(v < 0 ? -v - 1 : v, inv, false, v < 0);
        }
      }
    };
    /** A slice hands its slot to the confirm queue (a requeue write and a SendMessage, sensitivity only). */
    const publishConfirm = (s: number): void => {
      req.add('sqs', 'attention');
      if (confirmLength() === 0 && confirm !== undefined) eng.after(confirm.windowMs, dispatch);
      confirmStores.push(s);
      confirmAt.push(eng.now);
      dispatch();
    };
    const publish = (s: number, recheck = false): void => {
      req.add('sqs', 'attention'); // SendMessage to the attention queue
      attention.push(recheck ? -s - 1 : s);
      dispatch();
    };
    const releaseWorker = (inv: Invocation, at: number): void => {
      eng.at(at, () => {
        world.markActivity();
        if (--inv.pending > 0) return;
        world.workerBusyMs += at - inv.startedAt;
        const share = (at - inv.startedAt) / inv.slices.length;
        for (const slice of inv.slices)
          if (slice.confirm) {
            world.confirmSlices++;
            world.confirmShareMs += share;
          } else if (slice.handled === 1) {
            world.singleTaskActivations++;
            world.singleTaskExtraMs += share - slice.callMs;
          }
        if (inv.confirm === true) confirmFree++;
        else free++;
        dispatch();
      });
    };

    world.onArrival = (s) => {
      enqSeq[s] = (enqSeq[s] as number) + 1;
      if (slots[s] === 0) {
        // Ingest steps 5-6 for a store with no slot: one write ends the write-ahead and issues the slot (counted
        // with the write-ahead's two writes a request, above), and the attention is published after the send
        // and that write (ingest.ts signalAfterEnqueue, endEnqueueIssuing).
        slots[s] = 1;
        active++;
        eng.after(2 * AWS, () => publish(s));
        return;
      }
      const ws = waiters[s];
      if (ws !== undefined && ws.length > 0) (ws.shift() as () => void)();
    };

    const startSlice = (
      s: number,
      inv: Invocation,
      confirmSlice: boolean,
      /** A `recheck` attention's slice keeps its empty decision (slice.ts `handoff`). */
      keepsEmptyDecision = false,
    ): void => {
      const policy = w.policies[w.plan[s] as number];
      if (policy === undefined) throw new Error('no policy');
      // Stores read, acquire (conditional write); a parked lease's confirm slice resumes it without either.
      const resumed = confirmSlice && confirm?.parked === true;
      if (!resumed) world.activations++;
      const stats = { handled: 0, callMs: 0, confirm: confirmSlice };
      inv.slices.push(stats);
      if (!resumed) {
        req.add('ddbRead', 'attention');
        req.add('ddbWrite', 'attention');
      }
      const t0 = eng.now + MODEL.invokeMs + (resumed ? 0 : 2 * AWS);
      /** When the slice's last read of the store began (store-watch.ts: again before a call a second later). */
      let readAt = eng.now + MODEL.invokeMs;
      const deadline = t0 + policy.maxSliceSeconds * 1000;
      const single = policy.maxConcurrentConsumers === 1;
      const interval = world.interval[s] as number;
      const shareMs = interval * policy.maxConcurrentConsumers;
      let fanned = (slots[s] as number) >= policy.maxConcurrentConsumers;
      let handled = 0;
      /** enqSeq as the lease read it: "mark idle" is conditioned on it (slice.ts tryIdle). */
      let seenSeq = enqSeq[s] as number;
      /** As slice.ts: tasks that arrived during the empty check are delivered, then the slice yields. */
      let trickled = false;
      /** A confirm slice's first look is the long poll (slice.ts `longFirst`): what it finds is a trickle. */
      let longFirst = confirmSlice;
      /** As rate.ts sharedPacer: this lease's block of instants, where it last left the schedule, its pace. */
      let block:
        { first: number; count: number; next: number; step: number; late: number; end?: number } | undefined;
      let knownEnd: number | undefined;
      let lagging = true;
      let ahead = 0;
      let deepRuns = 0;
      /** The schedule's lateness as the lease's acquire read it, then as its writes left it (rate.ts knownLate). */
      let knownLate: number | undefined = (world.tatLate[s] as number) || undefined;
      let lastCallAt: number | undefined;
      /** As rate.ts: the slower of the lease's last PACE_CYCLES cycles, and its last block's first call's lag. */
      let cycle: number | undefined;
      const cycles: number[] = [];
      let startLag = 0;
      let firstOfBlock = true;
      /** This slice's schedule writes: work on the lease's path that the fan-out counts (slice.ts `paced`). */
      let paceWrites = 0;

      /** The empty check's other long poll, still running after one brought tasks: the slice ends after its answer. */
      let restUntil = 0;
      /** The loop runs because a long poll of the empty check brought tasks: that poll is this round's receive. */
      let wokeByLongPoll = false;
      const requeue = (): void => {
        // requeue write + attention publish, then the store goes to the back of the attention queue.
        req.add('ddbWrite', 'attention');
        const at = Math.max(eng.now, restUntil) + 2 * AWS;
        eng.at(at, () => publish(s, trickled));
        releaseWorker(inv, at);
      };

      /**
       * As rate.ts sharedPacer.acquire for a multi-consumer store: one write (a restartTat when the schedule lagged
       * the clock at this lease's last reservation and its block has ended, else an advanceTat; each an AWS call on the worker's path)
       * reserves a block of instants for the messages in hand (rate.ts blockSize: ≤ 10, before the deadline,
       * within the horizon, as many as the lease's own pace keeps up with); the calls go at its instants, and
       * a block the deadline refuses gives its tail back (one more write). Answers the call's start, or
       * undefined when the instant lies at or past the deadline (or further off than a normal wait).
       */
      const sharedPace = (inHand: number, then: (start: number | undefined) => void): void => {
        // The instants' spacing: the interval, paced for the lateness and the arrival jitter (rate.ts
        // pacedInterval); each block's own lateness (rate.ts blockLateness) stretches it (reachSpacing).
        const paced = spacingOf(pacedInterval(interval, true));
        const standard = lateness(paced);
        const maxWaitMs =
          maxPaceWaitMs(paced, policy.maxConcurrentConsumers) + SLEEP_THROUGH_MAX_SECONDS * 1000;
        if (lastCallAt !== undefined) cycle = recordCycle(cycles, eng.now - lastCallAt);
        const write = <T>(apply: () => T, after: (value: T) => void): void => {
          req.add('ddbWrite', 'rate');
          paceWrites++;
          const value = apply();
          eng.after(AWS, () => after(value));
        };
        const deep = deepRuns >= 2;
        const late = blockLateness({
          interval: paced,
          inHand,
          cycle,
          lagging,
          deep,
          knownLate,
          consumers: policy.maxConcurrentConsumers,
          startLag,
        });
        const step = reachSpacing(paced, late);
        const size = (start: number, at = late): number =>
          blockSize({
            interval: paced,
            inHand,
            start,
            deadline,
            horizon: maxWaitMs,
            cycle,
            late: at,
            startLag,
          });
        /** As rate.ts: the block the write answered, and what the lease learns from it. */
        const took = (first: number, count: number, at: number, end?: number): void => {
          const spacing = reachSpacing(paced, at);
          knownEnd = first + count * spacing;
          knownLate = at;
          firstOfBlock = true;
          block = { first, count, next: 0, step: spacing, late: at, ...(end === undefined ? {} : { end }) };
        };
        const restart = (now0: number, count: number, done: (ok: boolean) => void): void =>
          write(() => {
            // restartTat: the schedule lags, and its last block calls no later or ended the reach's gap before.
            const last = world.tatLate[s] as number;
            const tat = world.tat[s] as number;
            if (tat > now0 || (last > late && tat > now0 - (LATENESS_REACH_MS - late))) return false;
            world.tat[s] = now0 + count * step;
            world.tatLate[s] = late;
            took(now0, count, late);
            return true;
          }, done);
        /**
         * advanceTat with the block's lateness: refused (a second write) where the schedule's last block calls
         * later — placed the gap after it where the store binds deep, else at that lateness — or where a raise
         * meets a schedule that leads the clock (then at the schedule's lateness).
         */
        const advance = (count: number, done: () => void): void =>
          write(
            () => {
              const last = world.tatLate[s] as number;
              const tat = world.tat[s] as number;
              const refused = last > late || (late > standard && late > last && tat > eng.now);
              return { refused, last };
            },
            ({ refused, last }) => {
              if (!refused) {
                world.tat[s] = (world.tat[s] as number) + count * step;
                world.tatLate[s] = late;
                const end = world.tat[s] as number;
                took(end - count * step, count, late, end);
                return done();
              }
              const lower = last > late && deep;
              const at = lower ? late : Math.max(last, standard);
              const spacing = reachSpacing(paced, at);
              write(
                () => {
                  const start = lower
                    ? Math.max((world.tat[s] as number) + (last - late), eng.now)
                    : (world.tat[s] as number);
                  world.tat[s] = start + count * spacing;
                  world.tatLate[s] = at;
                  return start;
                },
                (start) => {
                  took(start, count, at, start + count * spacing);
                  done();
                },
              );
            },
          );
        const reserve = (done: () => void): void => {
          const now0 = eng.now;
          const advancing = (): void => {
            const count = size(Math.max(now0, knownEnd ?? now0));
            advance(count, () => {
              const b = block as NonNullable<typeof block>;
              if (b.first + (b.count - 1) * b.step >= eng.now - b.late) return done();
              const again = eng.now;
              restart(again, size(again), (ok) => (ok ? done() : advance(count, done)));
            });
          };
          if (lagging && (knownEnd === undefined || knownEnd <= now0))
            restart(now0, size(now0), (ok) => (ok ? done() : advancing()));
          else advancing();
        };
        const nextInstant = (): number | undefined => {
          if (block === undefined) return undefined;
          const j = Math.max(block.next, Math.ceil((eng.now - block.late - block.first) / block.step));
          if (j >= block.count) return undefined;
          block.next = j;
          return block.first + j * block.step;
        };
        const go = (instant: number): void => {
          const b = block as NonNullable<typeof block>;
          if (instant - eng.now > maxWaitMs || instant >= deadline) {
            block = undefined;
            // returnTat: only while the block is still the schedule's last write.
            const end = b.end;
            if (end === undefined) return then(undefined);
            return write(
              () => {
                if (world.tat[s] === end) world.tat[s] = end - (b.count - b.next) * b.step;
              },
              () => then(undefined),
            );
          }
          eng.at(Math.max(instant, eng.now), () => {
            b.next++;
            lastCallAt = eng.now;
            if (firstOfBlock) startLag = eng.now - instant;
            firstOfBlock = false;
            then(eng.now);
          });
        };
        const instant = nextInstant();
        if (instant !== undefined) return go(instant);
        // A block whose writes took it past its instants counts as a late wake-up: reserve again, up to 5 tries.
        let tries = 0;
        const take = (): void =>
          reserve(() => {
            ahead = (block as NonNullable<typeof block>).first - eng.now;
            lagging = ahead <= 0;
            // As rate.ts isDeep: two reservations in a row past the reach's gap (or waited for, keeping pace).
            deepRuns = bindsDeep(ahead, paced, cycle) ? deepRuns + 1 : 0;
            const fresh = nextInstant();
            if (fresh !== undefined) return go(fresh);
            if (++tries < 5) return take();
            // As rate.ts: five late tries in a row refuse the call (the slice hands its messages back).
            then(undefined);
          });
        take();
      };
      /** A single-consumer store paces locally (rate.ts localPacer): no write. */
      const localPace = (_inHand: number, then: (start: number | undefined) => void): void => {
        if (world.nextStart(s) >= deadline) return then(undefined);
        // Spaced as rate.ts pacedInterval: no 5 s window of arrivals over the rate.
        then(world.reserve(s, pacedInterval(interval, false)));
      };
      const pace = single ? localPace : sharedPace;

      const loop = (): void => {
        const now = eng.now;
        if (handled >= policy.maxMessagesPerSlice || now >= deadline) return requeue();
        const callsLeft = Math.max(1, Math.floor((deadline - now) / shareMs) + 1);
        const want = Math.min(SQS_BATCH, policy.maxMessagesPerSlice - handled, callsLeft);
        /** This round's receive is the empty check's long polls, answered at once by the tasks already there. */
        let longAnswered = wokeByLongPoll;
        wokeByLongPoll = false;
        if (longFirst) {
          longFirst = false;
          if (world.visible(s) === 0) return longPoll();
          trickled = true;
          longAnswered = true;
          if (Q > 1) restUntil = eng.now + emptyPollMs;
        }
        // slice.ts: a slice that has handled five full batches keeps its decision (HANDOFF_BELOW_HANDLED).
        const handsOff =
          confirm !== undefined && !confirmSlice && !keepsEmptyDecision && handled < HANDOFF_BELOW_HANDLED;
        if (handsOff && world.visible(s) === 0) {
          // The short polls (each store queue) came back empty; the slot goes to the confirm queue (requeue write +
          // SendMessage) and this slice ends without the long polls.
          req.add('sqs', 'attention', Q);
          if (confirm.parked === true) {
            eng.after((Q + 1) * AWS, () => publishConfirm(s));
            return releaseWorker(inv, eng.now + (Q + 1) * AWS);
          }
          req.add('ddbWrite', 'attention');
          eng.after((Q + 2) * AWS, () => publishConfirm(s));
          return releaseWorker(inv, eng.now + (Q + 2) * AWS);
        }
        if (world.visible(s) === 0) {
          // slice.ts: short polls first (a backlog answers at once), then the long polls that decide "empty".
          if (!trickled) {
            req.add('sqs', 'attention', Q);
            eng.after(Q * AWS, longPoll);
            return;
          }
          return longPoll();
        }
        const k = Math.min(want, world.visible(s));
        // ReceiveMessage with tasks: the work queue's, after the high queue's empty short poll (or both long polls).
        req.add('sqs', 'data', Q);
        const batch: number[] = [];
        for (let i = 0; i < k; i++) batch.push(world.take(s));
        let i = 0;
        /** The rest of the batch goes back (visibility 0): delete what succeeded + ChangeMessageVisibilityBatch. */
        const handBack = (): void => {
          world.handBack(s, batch.slice(i));
          req.add('sqs', 'data', i > 0 ? 2 : 1);
          if (i > 0) req.add('ddbWrite', 'data', 1, 0); // the delivered settles' BatchWriteItem (items billed per task)
          // slice.ts handBack: the settles, then the delete (flush), then the visibility change, one after another.
          eng.after((i > 0 ? 3 : 1) * AWS, requeue);
        };
        const endBatch = (): void => {
          // The batch's delivered settles: one BatchWriteItem (delivered-settle.ts), its items billed per task.
          req.add('ddbWrite', 'data', 1, 0);
          req.add('sqs', 'data'); // DeleteMessageBatch
          // slice.ts flush: the delete only after the settles landed (a task's status never lags its message).
          eng.after(2 * AWS, () => {
            if (trickled) return requeue();
            if (fanned || k < SQS_BATCH) return loop();
            fanned = true;
            // As slice.ts, after a full batch: one more slot, as far as the store's rate can keep consumers
            // busy (rate × measured task time: the claim, the call and the schedule writes, less the sleep for
            // the rate, + 1); a refused issueSlot publishes nothing.
            const meanCallMs =
              (MODEL.marketplaceMinMs + MODEL.marketplaceMaxMs) / 2 +
              AWS +
              (paceWrites * AWS) / Math.max(1, handled);
            const useful = Math.ceil((policy.ratePerSecond * meanCallMs) / 1000) + 1;
            req.add('ddbWrite', 'attention'); // issueSlot(limit = min(maxConcurrentConsumers, useful))
            if ((slots[s] as number) >= Math.min(policy.maxConcurrentConsumers, useful))
              return eng.after(AWS, loop);
            slots[s] = (slots[s] as number) + 1;
            eng.after(AWS, () => {
              publish(s);
              eng.after(AWS, loop);
            });
          });
        };
        const next = (): void => {
          if (i === batch.length) return endBatch();
          if (eng.now >= deadline) return handBack();
          // deliver-task.ts: the claim, the pace, the call (the settle is the batch's, at endBatch).
          eng.after(AWS, () => {
            const pacedAt = eng.now;
            pace(batch.length - i, (start) => {
              if (start === undefined) {
                // Not started: the claim is settled back to pending, the rest handed back.
                req.add('ddbWrite', 'data', 2);
                eng.after(AWS, handBack);
                return;
              }
              // store-watch.ts: a second after its last read began, the slice reads the store again before the call.
              let callAt = start;
              if (start - readAt >= STORE_RECHECK_MS) {
                req.add('ddbRead', 'attention');
                readAt = start;
                callAt = start + AWS;
              }
              if (!single) world.callStarting(s);
              const lat = world.callLatency();
              const arrived = batch[i] as number;
              eng.at(callAt + lat, () => {
                world.deliver(s, arrived, lat, true);
                handled++;
                stats.handled++;
                stats.callMs += eng.now - pacedAt;
                i++;
                // Straight to the next task: its delivered settle is the batch's (endBatch), no write after the call.
                next();
              });
            });
          });
        };
        // The receive itself: the high queue's short poll, then the work queue's; one long poll's answer.
        eng.after((longAnswered ? 1 : Q) * AWS, next);
      };

      const longPoll = (): void => {
        let done = false;
        const polledAt = eng.now;
        const wake = (): void => {
          if (done) return;
          done = true;
          trickled = true;
          wokeByLongPoll = true;
          if (Q > 1) restUntil = polledAt + emptyPollMs;
          loop();
        };
        if (world.visible(s) > 0) return wake();
        const list = waiters[s] ?? (waiters[s] = []);
        list.push(wake);
        eng.after(emptyPollMs, () => {
          if (done) return;
          done = true;
          const idx = list.indexOf(wake);
          if (idx >= 0) list.splice(idx, 1);
          req.add('sqs', 'attention', Q); // the empty long polls
          tryIdle(0);
        });
      };

      /**
       * slice.ts tryIdle: markIdle succeeds only for the store's last slot with enqSeq unchanged since the
       * lease read it; new tasks meanwhile send the slice round again (another short + long poll); other
       * slots left mean a release write instead.
       */
      const tryIdle = (attempt: number): void => {
        req.add('ddbWrite', 'attention'); // markIdle
        if (enqSeq[s] === seenSeq && slots[s] === 1) {
          slots[s] = 0;
          active--;
          return releaseWorker(inv, eng.now + AWS);
        }
        if (enqSeq[s] !== seenSeq) {
          seenSeq = enqSeq[s] as number;
          // A confirm slice told of new work yields it to the pool (slice.ts), as a `recheck`.
          if (confirmSlice) {
            trickled = true;
            eng.after(AWS, requeue);
            return;
          }
          eng.after(AWS, loop);
          return;
        }
        eng.after(AWS, () => {
          req.add('ddbWrite', 'attention'); // release
          if ((slots[s] as number) > 1) {
            slots[s] = (slots[s] as number) - 1;
            return releaseWorker(inv, eng.now + AWS);
          }
          if (attempt === 0) eng.after(AWS, () => tryIdle(1));
          else releaseWorker(inv, eng.now + AWS);
        });
      };

      eng.at(t0, loop);
    };

    // The reconciler, every minute while there is work (its idle cost is in idleMonth).
    const reconcile = (): void => {
      reconcilerRun(req, active);
      if (world.remaining() > 0 || eng.now < w.arrivalsEnd)
        eng.after(ATTENTION.reconcilerPeriodMs, reconcile);
    };
    if (background) eng.at(ATTENTION.reconcilerPeriodMs, reconcile);

    return {
      workers,
      finish: (spanMs) => {
        if (!background) return;
        req.add('sqs', 'attention', eventSourcePolls(confirm !== undefined, spanMs));
      },
    };
  },
});

// ---------------------------------------------------------------------------------------------------------
// A permanent long-polling consumer per store queue.
// ---------------------------------------------------------------------------------------------------------

const perStoreDesign: Design = {
  id: 'per-store',
  label: 'Long-polling consumer per store',
  idleMonth: (stores) => idleLongPolling('sqs', stores),
  attach: (world) => {
    const { w, eng, req } = world;
    const busy = new Uint8Array(w.stores);
    const busySince = new Float64Array(w.stores);
    let busyTotal = 0;

    const receive = (s: number): void => {
      const vis = world.visible(s);
      if (vis === 0) {
        busy[s] = 0;
        busyTotal += eng.now - (busySince[s] as number);
        world.markActivity();
        return; // back to its long poll (counted analytically)
      }
      req.add('sqs', 'data');
      world.invoke(); // as a Lambda event source: one invocation per batch
      const k = Math.min(SQS_BATCH, vis);
      const batch: number[] = [];
      for (let i = 0; i < k; i++) batch.push(world.take(s));
      let next = 0;
      let inflight = 0;
      const launch = (): void => {
        // One process, up to the plan's maxConcurrentConsumers calls at once, paced locally (no shared write).
        while (inflight < (world.conc[s] as number) && next < k) {
          const arrived = batch[next++] as number;
          inflight++;
          world.deliverOne(
            s,
            arrived,
            () => world.reserve(s),
            () => {
              inflight--;
              if (next === k && inflight === 0) {
                req.add('sqs', 'data'); // DeleteMessageBatch
                eng.after(2 * AWS, () => receive(s));
              } else launch();
            },
          );
        }
      };
      // The receive, then the event source's invoke (MODEL.invokeMs, as for every design's Lambda consumers).
      eng.after(AWS + MODEL.invokeMs, launch);
    };

    world.onArrival = (s) => {
      if (busy[s] === 1) return;
      busy[s] = 1;
      busySince[s] = eng.now;
      eng.after(AWS, () => receive(s)); // the waiting long poll returns
    };
    return {
      workers: w.stores,
      finish: (spanMs) => {
        world.workerBusyMs += busyTotal;
        req.add('sqs', 'polling', (w.stores * spanMs - busyTotal) / MODEL.longPollMs);
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------
// One shared FIFO queue, MessageGroupId = store.
// ---------------------------------------------------------------------------------------------------------

const fifoDesign: Design = {
  id: 'fifo',
  label: 'One shared FIFO queue (group = store)',
  idleMonth: (_stores, workers) => idleLongPolling('sqsFifo', workers),
  attach: (world, workers) => {
    const { w, eng, req } = world;
    // Ingest went to the FIFO queue instead: move those requests to the FIFO price.
    req.bucket.sqs -= w.ingestRequests;
    req.bucket.sqsFifo += w.ingestRequests;
    const locked = new Uint8Array(w.stores);
    const queued = new Uint8Array(w.stores);
    const heap = new KeyedHeap();
    let idle = workers;
    let idleMs = 0;
    let lastIdleMark = 0;
    // Idle worker time, for the empty receives of the workers' long polls.
    const markIdle = (): void => {
      idleMs += idle * (eng.now - lastIdleMark);
      lastIdleMark = eng.now;
    };

    const offer = (s: number): void => {
      if (locked[s] === 0 && queued[s] === 0 && world.visible(s) > 0) {
        queued[s] = 1;
        heap.push(s, world.headTime(s));
      }
    };
    const dispatch = (): void => {
      if (idle > 0 && heap.size > 0) markIdle();
      while (idle > 0 && heap.size > 0) {
        const s = heap.pop();
        queued[s] = 0;
        idle--;
        serve(s);
      }
    };
    const serve = (s: number): void => {
      const startedAt = eng.now;
      // SQS FIFO hands out the oldest available group's messages, as many of that group as it can (≤ 10),
      // and nothing more of the group until they are deleted.
      locked[s] = 1;
      req.add('sqsFifo', 'data');
      world.invoke(); // a Lambda FIFO event source: one invocation per message-group batch
      const k = Math.min(SQS_BATCH, world.visible(s));
      const batch: number[] = [];
      for (let i = 0; i < k; i++) batch.push(world.take(s));
      req.add('ddbWrite', 'rate'); // the store's pace lives in shared state: one read-modify-write per batch
      let i = 0;
      const next = (): void => {
        if (i === k) {
          req.add('sqsFifo', 'data');
          eng.after(AWS, () => {
            locked[s] = 0;
            offer(s);
            markIdle();
            idle++;
            world.workerBusyMs += eng.now - startedAt;
            world.markActivity();
            dispatch();
          });
          return;
        }
        world.deliverOne(
          s,
          batch[i] as number,
          () => world.reserve(s),
          () => {
            i++;
            next();
          },
        );
      };
      // The receive, then the event source's invoke (MODEL.invokeMs, as for every design's Lambda consumers).
      eng.after(AWS + MODEL.invokeMs, next);
    };
    world.onArrival = (s) => {
      offer(s);
      dispatch();
    };
    return {
      workers,
      finish: () => {
        markIdle();
        req.add('sqsFifo', 'polling', idleMs / MODEL.longPollMs);
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------
// Grouped standard queues: stores hashed into G groups, one long-polling consumer per group.
// ---------------------------------------------------------------------------------------------------------

const hashStore = (s: number, groups: number): number => {
  let x = Math.imul(s ^ 0x9e3779b9, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) % groups;
};

const groupedDesign = (groups: number | 'workers'): Design => ({
  id: 'grouped',
  label: groups === 'workers' ? 'Grouped queues (one consumer each)' : `${groups} grouped queues`,
  idleMonth: (_stores, workers) => idleLongPolling('sqs', groups === 'workers' ? workers : groups),
  attach: (world, workers) => {
    const g = groups === 'workers' ? workers : groups;
    const { w, eng, req } = world;
    const group = new Int32Array(w.stores);
    for (let s = 0; s < w.stores; s++) group[s] = hashStore(s, g);
    const queues = Array.from({ length: g }, () => new IntQueue(256));
    const busy = new Uint8Array(g);
    const busySince = new Float64Array(g);
    let busyTotal = 0;

    const serve = (q: number): void => {
      const queue = queues[q] as IntQueue;
      if (queue.length === 0) {
        busy[q] = 0;
        busyTotal += eng.now - (busySince[q] as number);
        world.markActivity();
        return;
      }
      req.add('sqs', 'data');
      world.invoke(); // as a Lambda event source: one invocation per batch
      const k = Math.min(SQS_BATCH, queue.length);
      const stores: number[] = [];
      const arrivals: number[] = [];
      for (let i = 0; i < k; i++) {
        const s = queue.shift();
        stores.push(s);
        arrivals.push(world.take(s));
      }
      let i = 0;
      const next = (): void => {
        if (i === k) {
          req.add('sqs', 'data');
          eng.after(AWS, () => serve(q));
          return;
        }
        const s = stores[i] as number;
        // One consumer per group, so a store's pace is local to it: no shared write.
        world.deliverOne(
          s,
          arrivals[i] as number,
          () => world.reserve(s),
          () => {
            i++;
            next();
          },
        );
      };
      // The receive, then the event source's invoke (MODEL.invokeMs, as for every design's Lambda consumers).
      eng.after(AWS + MODEL.invokeMs, next);
    };
    world.onArrival = (s) => {
      const q = group[s] as number;
      (queues[q] as IntQueue).push(s);
      if (busy[q] === 0) {
        busy[q] = 1;
        busySince[q] = eng.now;
        eng.after(AWS, () => serve(q));
      }
    };
    return {
      workers: g,
      finish: (spanMs) => {
        world.workerBusyMs += busyTotal;
        req.add('sqs', 'polling', (g * spanMs - busyTotal) / MODEL.longPollMs);
      },
    };
  },
});

// ---------------------------------------------------------------------------------------------------------
// A polling scheduler: GetQueueAttributes on every store queue every N seconds; jobs drain a store.
// ---------------------------------------------------------------------------------------------------------

const schedulerDesign = (periodSeconds: number): Design => ({
  id: 'scheduler',
  label: `Polling scheduler (sweep every ${periodSeconds} s)`,
  idleMonth: (stores) => {
    const req = new Requests();
    req.add('sqs', 'polling', (stores * MONTH_MS) / (periodSeconds * 1000));
    req.add('scheduler', 'polling', MONTH_MS / (periodSeconds * 1000));
    return req;
  },
  attach: (world, workers) => {
    const { w, eng, req } = world;
    const hasJob = new Uint8Array(w.stores);
    const jobs = new IntQueue(1024);
    let free = workers;

    const dispatch = (): void => {
      while (free > 0 && jobs.length > 0) {
        free--;
        const s = jobs.shift();
        const startedAt = eng.now;
        world.invoke(); // one invocation per job
        req.add('ddbWrite', 'rate'); // the store's pace, carried through shared state once per job
        drain(s, startedAt);
      }
    };
    const drain = (s: number, startedAt: number): void => {
      if (world.visible(s) === 0) {
        req.add('sqs', 'polling'); // the receive that finds the queue empty ends the job
        eng.after(AWS, () => {
          hasJob[s] = 0;
          world.workerBusyMs += eng.now - startedAt;
          world.markActivity();
          free++;
          dispatch();
        });
        return;
      }
      req.add('sqs', 'data');
      const k = Math.min(SQS_BATCH, world.visible(s));
      const batch: number[] = [];
      for (let i = 0; i < k; i++) batch.push(world.take(s));
      let i = 0;
      const next = (): void => {
        if (i === k) {
          req.add('sqs', 'data');
          eng.after(AWS, () => drain(s, startedAt));
          return;
        }
        world.deliverOne(
          s,
          batch[i] as number,
          () => world.reserve(s),
          () => {
            i++;
            next();
          },
        );
      };
      // The receive, then the event source's invoke (MODEL.invokeMs, as for every design's Lambda consumers).
      eng.after(AWS + MODEL.invokeMs, next);
    };
    const sweep = (): void => {
      req.add('sqs', 'polling', w.stores);
      req.add('scheduler', 'polling');
      for (let s = 0; s < w.stores; s++) {
        if (hasJob[s] === 0 && world.visible(s) > 0) {
          hasJob[s] = 1;
          jobs.push(s);
        }
      }
      dispatch();
      if (world.remaining() > 0 || eng.now < w.arrivalsEnd) eng.after(periodSeconds * 1000, sweep);
    };
    // The sweep's phase relative to the workload is arbitrary: start half a period in.
    eng.at((periodSeconds * 1000) / 2, sweep);
    world.onArrival = () => undefined;
    return { workers, finish: () => undefined };
  },
});

// ---------------------------------------------------------------------------------------------------------
// SQS fair queues: one standard queue, MessageGroupId = store; quiet groups' messages are served first.
// ---------------------------------------------------------------------------------------------------------

/** The documented noisy-group rule modelled here: > 10% of in-flight messages, and at least 30 of its own. */
export const FAIR = { noisyShare: 0.1, noisyMin: 30 } as const;

const fairDesign: Design = {
  id: 'fair',
  label: 'SQS fair queue (group = store)',
  idleMonth: (_stores, workers) => idleLongPolling('sqs', workers),
  attach: (world, workers) => {
    const { w, eng, req } = world;
    const inflight = new Int32Array(w.stores);
    const queued = new Uint8Array(w.stores);
    const heap = new KeyedHeap();
    let totalInflight = 0;
    let idle = workers;
    let idleMs = 0;
    let lastMark = 0;
    const mark = (): void => {
      idleMs += idle * (eng.now - lastMark);
      lastMark = eng.now;
    };
    const noisy = (s: number): boolean => {
      const n = inflight[s] as number;
      return n >= FAIR.noisyMin && n > FAIR.noisyShare * totalInflight;
    };
    const offer = (s: number): void => {
      if (queued[s] === 0 && world.visible(s) > 0) {
        queued[s] = 1;
        heap.push(s, world.headTime(s));
      }
    };
    const takeOne = (s: number, stores: number[], arrivals: number[]): void => {
      stores.push(s);
      arrivals.push(world.take(s));
      inflight[s] = (inflight[s] as number) + 1;
      totalInflight++;
    };
    const receive = (): { stores: number[]; arrivals: number[] } => {
      const stores: number[] = [];
      const arrivals: number[] = [];
      const aside: number[] = [];
      while (stores.length < SQS_BATCH && heap.size > 0) {
        const s = heap.pop();
        queued[s] = 0;
        if (noisy(s)) {
          aside.push(s);
          continue;
        }
        takeOne(s, stores, arrivals);
        offer(s);
      }
      // Only when no quiet group has a message do noisy groups' messages fill the batch (oldest first).
      for (const s of aside) {
        while (stores.length < SQS_BATCH && world.visible(s) > 0) takeOne(s, stores, arrivals);
        offer(s);
      }
      return { stores, arrivals };
    };
    const work = (startedAt: number): void => {
      if (heap.size === 0) {
        world.workerBusyMs += eng.now - startedAt;
        world.markActivity();
        mark();
        idle++;
        return;
      }
      req.add('sqs', 'data');
      world.invoke(); // as a Lambda event source: one invocation per batch
      const { stores, arrivals } = receive();
      let i = 0;
      const next = (): void => {
        if (i === stores.length) {
          req.add('sqs', 'data');
          eng.after(AWS, () => work(startedAt));
          return;
        }
        const s = stores[i] as number;
        req.add('ddbWrite', 'rate'); // any worker may hold any store's task: shared limiter write per call
        world.deliverOne(
          s,
          arrivals[i] as number,
          () => Math.max(world.reserve(s), eng.now + AWS),
          () => {
            inflight[s] = (inflight[s] as number) - 1;
            totalInflight--;
            i++;
            next();
          },
        );
      };
      // The receive, then the event source's invoke (MODEL.invokeMs, as for every design's Lambda consumers).
      eng.after(AWS + MODEL.invokeMs, next);
    };
    world.onArrival = (s) => {
      offer(s);
      if (idle > 0) {
        mark();
        idle--;
        const startedAt = eng.now;
        eng.after(AWS, () => work(startedAt));
      }
    };
    return {
      workers,
      finish: () => {
        mark();
        req.add('sqs', 'polling', idleMs / MODEL.longPollMs);
      },
    };
  },
};

/**
 * Sensitivity only, not a deployable setting (AQ_EMPTY_POLL_SECONDS ≥ 1, since a short poll can come back empty
 * while messages exist): the attention queue without the end-of-slice long poll, to show what it costs.
 */
export const attentionNoEmptyPoll = attentionDesign(
  0,
  'attention-no-empty-poll',
  'Attention queue, hypothetical 0 s end-of-slice poll',
);

/** Sensitivity: one attention per worker invocation, as before issue #11 (each slice holds a worker alone). */
export const attentionBatchOne = attentionDesign(
  ATTENTION.emptyPollMs,
  'attention-batch-1',
  'Attention queue, one attention per invocation (before #11)',
  true,
  1,
);

/**
 * Sensitivity: the attention queue without the confirm queue, as before session 27: every slice makes its own
 * empty decision with the 1 s long poll.
 */
export const attentionNoConfirm = attentionDesign(
  ATTENTION.emptyPollMs,
  'attention-no-confirm',
  'Attention queue without the confirm queue (each slice long-polls itself; before session 27)',
);

/**
 * Sensitivity: the confirm queue with the lease kept across it (not built): the slice hands its lease, not its
 * slot, to the confirm queue, and the confirm slice resumes it (no requeue, store read or acquire).
 */
export const attentionConfirmParked = attentionDesign(
  ATTENTION.emptyPollMs,
  'attention-confirm-parked',
  'Attention queue, hypothetical confirm queue keeping the lease (batches of 100, 1 s window)',
  true,
  ATTENTION.batchSize,
  { ...ATTENTION.confirm, parked: true },
);

/** The project as built: the confirm queue on (issue #11). */
export const attentionAsBuilt = attentionDesign(
  ATTENTION.emptyPollMs,
  'attention',
  'Attention queue (this project)',
  true,
  ATTENTION.batchSize,
  ATTENTION.confirm,
);

export const designs = (schedulerPeriodSeconds: number): Design[] => [
  attentionAsBuilt,
  perStoreDesign,
  fifoDesign,
  groupedDesign('workers'),
  schedulerDesign(schedulerPeriodSeconds),
  fairDesign,
];
