import { Engine, rng } from './engine.js';
import type { Workload } from './workload.js';

/** Modelling constants shared by every design (stated in the results' methodology notes). */
export const MODEL = {
  /** Marketplace call latency, uniform. */
  marketplaceMinMs: 20,
  marketplaceMaxMs: 50,
  /** One SQS or DynamoDB call (receive, delete, conditional write) on the worker's critical path. */
  awsCallMs: 8,
  /**
   * A Lambda event source's delivery and a warm invoke, before the handler's first call: paid by every design whose
   * consumers are Lambda functions (the attention queue's worker and confirm invocations, and each alternative's
   * invocation per batch or job), and counted as worker time held (the invocation holds its unit of concurrency).
   */
  invokeMs: 40,
  /** SQS long poll (max 20 s): an empty receive every 20 s per idle poller. */
  longPollMs: 20_000,
  /** A store counts in the fairness index if it was backlogged at least this long. */
  fairnessMinBacklogMs: 30_000,
  /** Windowed fairness: stores backlogged through a whole window, compared within the window. */
  fairnessWindowMs: 120_000,
} as const;

/** Billing buckets (list prices in cost.ts) and request categories (what the request is for). */
export type Bucket = 'sqs' | 'sqsFifo' | 'ddbRead' | 'ddbWrite' | 'lambda' | 'scheduler';
/**
 * data: ingest sends, receives that return tasks, deletes, the effect-once delivery record (claim + settle);
 * attention: the project's signalling (attention send/receive/delete, store read, lease writes, fan-out,
 *   end-of-slice empty receives, reconciler, sweep, event-source pollers) — the "attention overhead";
 * enqSeq: ingest's per-request enqSeq bump (the lost-wake-up guard);
 * rate: shared rate-limiter writes (GCRA reservation) where several workers can call for one store;
 * polling: empty receives of permanent pollers, GetQueueAttributes sweeps.
 */
export type Category = 'data' | 'attention' | 'enqSeq' | 'rate' | 'polling';

export class Requests {
  readonly bucket: Record<Bucket, number> = {
    sqs: 0,
    sqsFifo: 0,
    ddbRead: 0,
    ddbWrite: 0,
    lambda: 0,
    scheduler: 0,
  };
  readonly category: Record<Category, number> = { data: 0, attention: 0, enqSeq: 0, rate: 0, polling: 0 };

  /**
   * `n` requests of `category`, billed as `billed` units of `bucket` (by default one per request; a DynamoDB
   * BatchWriteItem bills one write per item, so the delivered settles' batch is one request billed per task).
   */
  add(bucket: Bucket, category: Category, n = 1, billed = n): void {
    this.bucket[bucket] += billed;
    // Lambda invocations and scheduler triggers are billed, but are not SQS/DynamoDB requests: they stay out of the shares.
    if (bucket !== 'lambda' && bucket !== 'scheduler') this.category[category] += n;
  }
}

class Growable {
  data = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Per-store queue counters, the shared rate limiter, and the measurements every design reports. */
export class World {
  readonly eng = new Engine();
  readonly req = new Requests();
  readonly head: Int32Array;
  readonly tail: Int32Array;
  readonly outstanding: Int32Array;
  readonly backlogSince: Float64Array;
  readonly backlogMs: Float64Array;
  readonly deliveredN: Int32Array;
  readonly tat: Float64Array;
  /** The shared schedule's last block's lateness (rate.ts `tatLate`, the reach; 0: none yet). */
  readonly tatLate: Float64Array;
  readonly interval: Float64Array;
  readonly conc: Int32Array;
  /** Messages handed back (visibility 0) before their call: served before the head. */
  private readonly returned = new Map<number, number[]>();
  private readonly rand: () => number;
  readonly smallLat = new Growable();
  readonly smallArr = new Growable();
  delivered = 0;
  lastDelivery = 0;
  focusLast = 0;
  workerBusyMs = 0;
  /** Worker activations (slices, batches, jobs): Lambda invocations where the workers run on Lambda. */
  activations = 0;
  /**
   * Activations that delivered exactly one task (the attention design), and the worker time each held beyond
   * its marketplace call and rate wait: its share of its invocation (duration ÷ slices in it) minus the time
   * from asking for its rate instant to the call's end (issue #11's "worker time per activation").
   */
  singleTaskActivations = 0;
  singleTaskExtraMs = 0;
  /** Confirm slices (a sensitivity design) and their share of their invocations, added to each single-task activation. */
  confirmSlices = 0;
  confirmShareMs = 0;
  /** Calls reserved but not finished, per store, and how often a store went over maxConcurrentConsumers. */
  readonly callsInFlight: Int32Array;
  overConcurrency = 0;
  /** The last time a worker was released (utilisation is measured up to max(last delivery, this)). */
  lastActivity = 0;
  workerCallMs = 0;
  /** Per plan: Σ over windows of (Jain index × stores in it), and Σ stores, for the windowed fairness. */
  readonly windowJain: { sum: number; stores: number; windows: number }[] = [0, 1, 2].map(() => ({
    sum: 0,
    stores: 0,
    windows: 0,
  }));
  private windowStartDelivered: Int32Array | undefined;
  /** Fairness probe: per plan, the time its first store drained and every store's deliveries at that time. */
  trackFirstDrain = false;
  readonly firstDrain: ({ t: number; delivered: Int32Array } | undefined)[] = [
    undefined,
    undefined,
    undefined,
  ];
  /** Hooks a design sets: called after a task is enqueued. */
  onArrival: (s: number) => void = () => undefined;

  constructor(
    readonly w: Workload,
    seed: number,
  ) {
    const n = w.stores;
    this.head = new Int32Array(n);
    this.tail = new Int32Array(n);
    this.outstanding = new Int32Array(n);
    this.backlogSince = new Float64Array(n);
    this.backlogMs = new Float64Array(n);
    this.deliveredN = new Int32Array(n);
    this.tat = new Float64Array(n);
    this.tatLate = new Float64Array(n);
    this.interval = new Float64Array(n);
    this.conc = new Int32Array(n);
    this.callsInFlight = new Int32Array(n);
    for (let s = 0; s < n; s++) {
      const policy = w.policies[w.plan[s] as number];
      if (policy === undefined) throw new Error(`no policy for store ${s}`);
      this.interval[s] = 1000 / policy.ratePerSecond;
      this.conc[s] = policy.maxConcurrentConsumers;
    }
    this.rand = rng(seed);
    this.req.add('sqs', 'data', w.ingestRequests);
    // Ingest looks the store up (its tenant, its queue) once per request, whatever the dispatch design.
    this.req.add('ddbRead', 'data', w.ingestRequests);
  }

  get now(): number {
    return this.eng.now;
  }

  visible(s: number): number {
    const r = this.returned.get(s);
    return (this.tail[s] as number) - (this.head[s] as number) + (r === undefined ? 0 : r.length);
  }

  /** Arrival time of the oldest visible message (the store must have one). */
  headTime(s: number): number {
    const r = this.returned.get(s);
    if (r !== undefined && r.length > 0) return r[0] as number;
    return this.w.taskTime[(this.w.offset[s] as number) + (this.head[s] as number)] as number;
  }

  /** Takes the oldest visible message; returns its arrival time. */
  take(s: number): number {
    const r = this.returned.get(s);
    if (r !== undefined && r.length > 0) {
      const t = r.shift() as number;
      if (r.length === 0) this.returned.delete(s);
      return t;
    }
    const t = this.w.taskTime[(this.w.offset[s] as number) + (this.head[s] as number)] as number;
    this.head[s] = (this.head[s] as number) + 1;
    return t;
  }

  handBack(s: number, arrivals: number[]): void {
    const r = this.returned.get(s) ?? [];
    r.push(...arrivals);
    r.sort((a, b) => a - b);
    this.returned.set(s, r);
  }

  /** A worker activation that runs as one Lambda invocation (its duration is the held time, in workerBusyMs). */
  invoke(): void {
    this.activations++;
    this.req.add('lambda', 'data');
  }

  /** A call of store s is about to be made: counts it in flight (and whether that exceeds the plan's limit). */
  callStarting(s: number): void {
    const calls = (this.callsInFlight[s] as number) + 1;
    this.callsInFlight[s] = calls;
    if (calls > (this.conc[s] as number)) this.overConcurrency++;
  }

  /**
   * The shared per-store rate limit (GCRA): the earliest start of this store's next call, reserved now, the next
   * `spacing` later (the rate's interval, unless a design paces otherwise).
   */
  reserve(s: number, spacing = this.interval[s] as number): number {
    this.callStarting(s);
    const start = Math.max(this.eng.now, this.tat[s] as number);
    this.tat[s] = start + spacing;
    return start;
  }

  /** Earliest start the store's rate allows, without reserving it. */
  nextStart(s: number): number {
    return Math.max(this.eng.now, this.tat[s] as number);
  }

  callLatency(): number {
    return MODEL.marketplaceMinMs + this.rand() * (MODEL.marketplaceMaxMs - MODEL.marketplaceMinMs);
  }

  random(): number {
    return this.rand();
  }

  arrive(i: number): void {
    const s = this.w.arrStore[i] as number;
    this.tail[s] = (this.tail[s] as number) + 1;
    if (this.outstanding[s] === 0) this.backlogSince[s] = this.eng.now;
    this.outstanding[s] = (this.outstanding[s] as number) + 1;
    this.onArrival(s);
  }

  /**
   * One task's delivery as every design makes it (deliver-task.ts): the effect-once claim write, the
   * store's instant (`instant` reserves it and answers when the call may start), the marketplace call,
   * the settle write; then `after`. The two writes are counted in `deliver`.
   */
  deliverOne(s: number, arrivedAt: number, instant: () => number, after: () => void): void {
    this.eng.after(MODEL.awsCallMs, () => {
      const start = instant();
      const lat = this.callLatency();
      this.eng.at(start + lat, () => {
        this.deliver(s, arrivedAt, lat);
        this.eng.after(MODEL.awsCallMs, after);
      });
    });
  }

  /**
   * A marketplace call for a task of store s that arrived at `arrivedAt` just succeeded. `batchedSettle`:
   * the caller counts the delivered settle itself, one write per receive batch (slice.ts).
   */
  deliver(s: number, arrivedAt: number, callMs: number, batchedSettle = false): void {
    const now = this.eng.now;
    // Effect-once delivery record: the claim, and the settle — unless batched, when the caller counts the batch's
    // one request and this task's item is billed here (a BatchWriteItem bills each item as a write).
    this.req.add('ddbWrite', 'data', batchedSettle ? 1 : 2, 2);
    this.workerCallMs += callMs;
    this.delivered++;
    this.lastDelivery = now;
    this.deliveredN[s] = (this.deliveredN[s] as number) + 1;
    this.callsInFlight[s] = (this.callsInFlight[s] as number) - 1;
    const left = (this.outstanding[s] as number) - 1;
    this.outstanding[s] = left;
    if (left === 0) {
      this.backlogMs[s] = (this.backlogMs[s] as number) + now - (this.backlogSince[s] as number);
      const plan = this.w.plan[s] as number;
      if (this.trackFirstDrain && this.firstDrain[plan] === undefined && now >= this.w.arrivalsEnd) {
        this.firstDrain[plan] = { t: now, delivered: Int32Array.from(this.deliveredN) };
      }
    }
    if (this.w.small[s] === 1) {
      this.smallLat.push(now - arrivedAt);
      this.smallArr.push(arrivedAt);
    }
    if (s === this.w.focusStore) this.focusLast = now;
  }

  markActivity(): void {
    if (this.eng.now > this.lastActivity) this.lastActivity = this.eng.now;
  }

  remaining(): number {
    return this.w.totalTasks - this.delivered;
  }

  /** Closes a fairness window: Jain over the shares of stores (per plan) that were backlogged throughout it. */
  private fairnessWindow = (): void => {
    const now = this.eng.now;
    const from = now - MODEL.fairnessWindowMs;
    const before = this.windowStartDelivered;
    if (before !== undefined) {
      const xs: number[][] = [[], [], []];
      for (let s = 0; s < this.w.stores; s++) {
        if ((this.outstanding[s] as number) === 0 || (this.backlogSince[s] as number) > from) continue;
        const got = (this.deliveredN[s] as number) - (before[s] as number);
        const entitled = (MODEL.fairnessWindowMs / 1000) * (1000 / (this.interval[s] as number));
        (xs[this.w.plan[s] as number] as number[]).push(got / entitled);
      }
      xs.forEach((x, plan) => {
        if (x.length < 2) return;
        let a = 0;
        let b = 0;
        for (const v of x) {
          a += v;
          b += v * v;
        }
        const j = b === 0 ? 1 : (a * a) / (x.length * b);
        const acc = this.windowJain[plan] as { sum: number; stores: number; windows: number };
        acc.sum += j * x.length;
        acc.stores += x.length;
        acc.windows++;
      });
    }
    this.windowStartDelivered = Int32Array.from(this.deliveredN);
    if (this.remaining() > 0 || now < this.w.arrivalsEnd)
      this.eng.after(MODEL.fairnessWindowMs, this.fairnessWindow);
  };

  run(onProgress?: (fraction: number) => void): void {
    this.eng.at(0, this.fairnessWindow);
    this.eng.run(
      this.w.arrTime,
      (i) => this.arrive(i),
      Infinity,
      onProgress === undefined
        ? undefined
        : () => onProgress(this.delivered / Math.max(1, this.w.totalTasks)),
    );
  }
}
