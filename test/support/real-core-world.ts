import { CONFIRM_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { handleAttention, type WorkerDeps } from '../../lambdas/core/attention.js';
import type { HttpRequest } from '../../lambdas/core/http.js';
import { submitBatch, submitTask, type IngestDeps } from '../../lambdas/core/ingest.js';
import {
  AttentionMessageSchema,
  attentionRoute,
  type AttentionMessage,
} from '../../lambdas/core/messages.js';
import type {
  AttentionPublisher,
  Clock,
  Marketplace,
  ReceivedMessage,
  ScopedTelemetry,
  StoreRegistry,
  TaskQueues,
} from '../../lambdas/core/ports.js';
import type { StoreRecord } from '../../lambdas/core/store-model.js';
import type { CalibrationFigures, CalibrationSpec } from '../../bench/sim/calibration.js';
import { ATTENTION } from '../../bench/sim/designs.js';
import { EventHeap, rng } from '../../bench/sim/engine.js';
import { MODEL } from '../../bench/sim/world.js';
import { MemoryDeliveryLog } from './memory-delivery-log.js';
import { MemoryDispatchState } from './memory-dispatch-state.js';

/**
 * The REAL core (ingest's submitTask/submitBatch, the worker's handleAttention → runSlice) on in-memory
 * ports in simulated time, with the scale model's own timing constants (bench/sim: every SQS/DynamoDB call
 * MODEL.awsCallMs, marketplace calls U(marketplaceMinMs, marketplaceMaxMs), MODEL.invokeMs before a
 * handler starts), so the scale model can be calibrated against it (test/unit/bench/calibration.test.ts).
 *
 * Time is a heap of timers; after the timers of one instant fire, one macrotask turn lets every promise
 * chain run to its next port call (nothing here uses real timers or I/O), then the clock moves on.
 * Every port call is counted as the AWS requests it would make (batches of 10).
 */
const AWS = MODEL.awsCallMs;
const SQS_BATCH = 10;

class SimTime implements Clock {
  private t = 0;
  private readonly heap = new EventHeap();
  now(): number {
    return this.t;
  }
  at(t: number, fn: () => void): void {
    this.heap.push(Math.max(t, this.t), fn);
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.at(this.t + Math.max(0, ms), resolve));
  }
  async run(limitMs: number): Promise<void> {
    while (this.heap.size > 0) {
      const t = this.heap.peekTime();
      if (t > limitMs) throw new Error(`the run did not finish within ${limitMs} ms of simulated time`);
      this.t = t;
      while (this.heap.size > 0 && this.heap.peekTime() === t) this.heap.pop()?.fn();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

const quiet: ScopedTelemetry = {
  count: () => undefined,
  timing: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  scoped: () => quiet,
  end: () => undefined,
};

export interface RealCoreCounts {
  sqs: number;
  ddbRead: number;
  ddbWrite: number;
  invocations: number;
  slices: number;
  workerBusyMs: number;
  delivered: number;
  byCall: Map<string, number>;
}

interface Msg {
  id: string;
  body: string;
  sentAt: number;
  visibleAt: number;
  receiveCount: number;
  receipt?: string;
}

/** Store queues with SQS's receive semantics that matter here: visibility, batches of ≤ 10, long polls. */
class Queues implements TaskQueues {
  private readonly queues = new Map<string, { msgs: Msg[]; waiters: Set<() => void> }>();
  private seq = 0;
  constructor(
    private readonly time: SimTime,
    private readonly count: (call: string, requests: number) => void,
  ) {}

  private q(url: string) {
    let q = this.queues.get(url);
    if (q === undefined) this.queues.set(url, (q = { msgs: [], waiters: new Set() }));
    return q;
  }
  private wake(url: string): void {
    for (const w of [...this.q(url).waiters]) w();
  }
  private put(url: string, body: string, delayMs = 0): void {
    const now = this.time.now();
    this.q(url).msgs.push({
      id: `m${++this.seq}`,
      body,
      sentAt: now,
      visibleAt: now + delayMs,
      receiveCount: 0,
    });
    if (delayMs === 0) this.wake(url);
    else this.time.at(now + delayMs, () => this.wake(url));
  }
  private take(url: string, max: number, visibilityMs: number): ReceivedMessage[] {
    const now = this.time.now();
    const visible = this.q(url)
      .msgs.filter((m) => m.visibleAt <= now)
      .sort((a, b) => a.visibleAt - b.visibleAt)
      .slice(0, max);
    return visible.map((m) => {
      m.receiveCount++;
      m.visibleAt = now + visibilityMs;
      m.receipt = `${m.id}@${m.receiveCount}`;
      return {
        messageId: m.id,
        receiptHandle: m.receipt,
        body: m.body,
        receiveCount: m.receiveCount,
        sentAt: m.sentAt,
      };
    });
  }
  pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.msgs.length;
    return n;
  }

  async send(url: string, body: string): Promise<void> {
    this.count('sqs.SendMessage', 1);
    await this.time.sleep(AWS);
    this.put(url, body);
  }
  async sendBatch(url: string, entries: { id: string; body: string }[]) {
    this.count('sqs.SendMessageBatch', Math.ceil(entries.length / SQS_BATCH));
    await this.time.sleep(AWS);
    for (const e of entries) this.put(url, e.body);
    return { failed: [] };
  }
  receive(
    url: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number },
  ): Promise<ReceivedMessage[]> {
    this.count(opts.waitSeconds > 0 ? 'sqs.ReceiveMessage(long)' : 'sqs.ReceiveMessage(short)', 1);
    const visibilityMs = opts.visibilitySeconds * 1000;
    const got = this.take(url, opts.maxMessages, visibilityMs);
    if (got.length > 0 || opts.waitSeconds === 0) return this.time.sleep(AWS).then(() => got);
    // A long poll: answered as soon as a message becomes visible, else empty when the wait ends.
    return new Promise((resolve) => {
      const waiters = this.q(url).waiters;
      const waiter = (): void => {
        const batch = this.take(url, opts.maxMessages, visibilityMs);
        if (batch.length === 0) return;
        waiters.delete(waiter);
        void this.time.sleep(AWS).then(() => resolve(batch));
      };
      waiters.add(waiter);
      this.time.at(this.time.now() + opts.waitSeconds * 1000, () => {
        if (!waiters.delete(waiter)) return;
        resolve([]);
      });
    });
  }
  async deleteBatch(url: string, receiptHandles: string[]): Promise<void> {
    this.count('sqs.DeleteMessageBatch', Math.ceil(receiptHandles.length / SQS_BATCH));
    const q = this.q(url);
    const gone = new Set(receiptHandles);
    q.msgs = q.msgs.filter((m) => m.receipt === undefined || !gone.has(m.receipt));
    await this.time.sleep(AWS);
  }
  async changeVisibility(url: string, entries: { receiptHandle: string; seconds: number }[]) {
    this.count('sqs.ChangeMessageVisibilityBatch', Math.ceil(entries.length / SQS_BATCH));
    const now = this.time.now();
    for (const e of entries) {
      const m = this.q(url).msgs.find((x) => x.receipt === e.receiptHandle);
      if (m !== undefined) m.visibleAt = now + e.seconds * 1000;
      this.time.at(now + e.seconds * 1000, () => this.wake(url));
    }
    await this.time.sleep(AWS);
  }
  async deadLetter(): Promise<void> {
    this.count('sqs.SendMessage(dlq)', 1);
    await this.time.sleep(AWS);
  }
  async resend(url: string, messages: { receiptHandle: string; body: string }[], delaySeconds: number) {
    this.count('sqs.SendMessageBatch', Math.ceil(messages.length / SQS_BATCH));
    await this.time.sleep(AWS);
    for (const m of messages) this.put(url, m.body, delaySeconds * 1000);
    await this.deleteBatch(
      url,
      messages.map((m) => m.receiptHandle),
    );
  }
}

/** Wraps every async method of `target`: counted as `requests` of `kind`, answered after one AWS call. */
const timed = <T extends object>(
  target: T,
  prefix: string,
  time: SimTime,
  count: (call: string, requests: number) => void,
  kindOf: (method: string) => 'ddbRead' | 'ddbWrite',
): T =>
  new Proxy(target, {
    get: (inner, property) => {
      const method = (inner as Record<PropertyKey, unknown>)[property];
      if (typeof method !== 'function') return method;
      const name = String(property);
      return async (...args: unknown[]) => {
        count(`${kindOf(name)}.${prefix}.${name}`, 1);
        const value: unknown = await (method as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
        await time.sleep(AWS);
        return value;
      };
    },
  });

const READS = new Set(['read', 'get', 'deliveredVersion', 'listActive', 'readCursor', 'scan']);

/**
 * Runs `spec` through the real ingest and worker code: a pool of `spec.workers` workers takes attentions
 * in order, up to the batch size per invocation (Lambda's event source), and runs handleAttention on all of
 * an invocation's at once (the worker handler's batch processor); the worker is held until the last ends.
 */
export const runRealCore = async (spec: CalibrationSpec, seed = 1234): Promise<RealCoreCounts> => {
  const time = new SimTime();
  const failures: string[] = [];
  const random = rng(seed);
  const counts: RealCoreCounts = {
    sqs: 0,
    ddbRead: 0,
    ddbWrite: 0,
    invocations: 0,
    slices: 0,
    workerBusyMs: 0,
    delivered: 0,
    byCall: new Map(),
  };
  const count = (call: string, requests: number): void => {
    counts.byCall.set(call, (counts.byCall.get(call) ?? 0) + requests);
    const bucket = call.slice(0, call.indexOf('.')) as 'sqs' | 'ddbRead' | 'ddbWrite';
    counts[bucket] += requests;
  };
  const kindOf = (method: string) => (READS.has(method) ? 'ddbRead' : 'ddbWrite');
  const memoryDispatch = new MemoryDispatchState();
  const dispatch = timed(memoryDispatch, 'dispatch', time, count, kindOf);
  const deliveries = timed(new MemoryDeliveryLog(), 'deliveries', time, count, kindOf);
  const records = new Map<string, StoreRecord>();
  const registry: StoreRegistry = {
    get: async (storeId) => records.get(storeId),
    create: async () => false,
    replace: async () => true,
    scan: async () => ({ stores: [] }),
  };
  const stores = timed(registry, 'stores', time, count, kindOf);
  const tasks = new Queues(time, count);

  // The attention queue and the worker pool (event source, up to batchSize attentions per invocation), and the
  // confirm queue, whose event source takes up to ATTENTION.confirm.batch once its oldest has waited the window.
  type Queued = { message: AttentionMessage; visibleAt: number };
  const attentionQueue: Queued[] = [];
  const confirmQueue: Queued[] = [];
  const batchSize = spec.batchSize ?? ATTENTION.batchSize;
  let free = spec.workers;
  const take = (queue: Queued[], max: number, now: number): AttentionMessage[] => {
    const batch: AttentionMessage[] = [];
    for (let i = 0; batch.length < max && i < queue.length;) {
      const entry = queue[i] as Queued;
      if (entry.visibleAt > now) i++;
      else batch.push((queue.splice(i, 1)[0] as Queued).message);
    }
    return batch;
  };
  const confirmReady = (now: number): boolean =>
    confirmQueue.length >= ATTENTION.confirm.batch ||
    (confirmQueue[0] !== undefined && now - confirmQueue[0].visibleAt >= ATTENTION.confirm.windowMs);
  /** The confirm queue's event source runs its own invocations (CONFIRM_EVENT_SOURCE.maxConcurrency), beside W. */
  let confirmFree: number = CONFIRM_EVENT_SOURCE.maxConcurrency;
  const kick = (): void => {
    const now = time.now();
    for (;;) {
      const fromConfirm = confirmFree > 0 && confirmReady(now);
      if (!fromConfirm && free <= 0) return;
      const batch = fromConfirm
        ? take(confirmQueue, ATTENTION.confirm.batch, now)
        : take(attentionQueue, batchSize, now);
      if (batch.length === 0) return;
      count('sqs.eventSource(receive+delete)', 2);
      counts.invocations++;
      if (fromConfirm) confirmFree--;
      else free--;
      const startedAt = now;
      time.at(now + MODEL.invokeMs, () => {
        void Promise.all(
          batch.map((message) =>
            handleAttention(workerDeps, message).then(
              (outcome) => {
                if (outcome.kind === 'sliced') counts.slices++;
              },
              (error: unknown) => {
                failures.push(`handleAttention threw: ${String(error)}`);
              },
            ),
          ),
        ).then(() => {
          counts.workerBusyMs += time.now() - startedAt;
          if (fromConfirm) confirmFree++;
          else free++;
          kick();
        });
      });
    }
  };
  const attention: AttentionPublisher = {
    publish: async (message, delaySeconds) => {
      count('sqs.attention.SendMessage', 1);
      await time.sleep(AWS);
      const visibleAt = time.now() + delaySeconds * 1000;
      const parsed = AttentionMessageSchema.parse(message);
      if (attentionRoute(parsed, true) === 'confirm') {
        confirmQueue.push({ message: parsed, visibleAt });
        time.at(visibleAt + ATTENTION.confirm.windowMs, kick);
        return;
      }
      attentionQueue.push({ message: parsed, visibleAt });
      time.at(visibleAt, kick);
    },
  };
  const marketplace: Marketplace = {
    deliver: async () => {
      await time.sleep(
        Math.round(MODEL.marketplaceMinMs + random() * (MODEL.marketplaceMaxMs - MODEL.marketplaceMinMs)),
      );
      counts.delivered++;
      return { kind: 'ok', status: 200 };
    },
  };
  let ids = 0;
  const common = {
    dispatch,
    attention,
    clock: time,
    ids: { next: () => `slot-${++ids}` },
    telemetry: quiet,
  };
  const workerDeps: WorkerDeps = {
    ...common,
    stores,
    tasks,
    deliveries,
    marketplace,
    random,
    settings: {
      emptyPollSeconds: ATTENTION.emptyPollMs / 1000,
      marketplaceTimeoutMs: 5_000,
      confirmQueue: true,
    },
  };
  const ingestDeps: IngestDeps = { ...common, stores, tasks, deliveries };

  for (const s of spec.stores) {
    records.set(s.storeId, {
      storeId: s.storeId,
      tenantId: 'tenant-1',
      marketplace: 'amazon',
      plan: s.plan,
      status: 'active',
      queueUrl: `queue-${s.storeId}`,
      // As every store created through the API (admin.ts createStoreQueues): the slice polls it first each batch.
      priorityQueueUrl: `high-${s.storeId}`,
      deadLetterQueueUrl: `dlq-${s.storeId}`,
      createdAt: 0,
      updatedAt: 0,
    });
    await memoryDispatch.ensure(s.storeId);
  }
  let total = 0;
  spec.requests.forEach((r, n) => {
    const storeId = (spec.stores[r.store] as { storeId: string }).storeId;
    const list = Array.from({ length: r.tasks }, (_, k) => ({
      eventId: `e${n}-${k}`,
      type: 'inventory.update',
      payload: { sku: 'SKU-1', quantity: k },
    }));
    total += r.tasks;
    const request: HttpRequest = {
      method: 'POST',
      resource: r.tasks === 1 ? '/v1/stores/{storeId}/tasks' : '/v1/stores/{storeId}/tasks/batch',
      pathParameters: { storeId },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(r.tasks === 1 ? list[0] : { tasks: list }),
      tenantId: 'tenant-1',
      requestId: `req-${n}`,
    };
    time.at(r.at, () => {
      void (r.tasks === 1 ? submitTask : submitBatch)(ingestDeps, request).then((res) => {
        if (res.status !== 202) failures.push(`request ${n}: ${res.status} ${JSON.stringify(res.body)}`);
      });
    });
  });
  await time.run(10 * 60_000);
  if (failures.length > 0) throw new Error(failures.join('; '));
  if (counts.delivered !== total || tasks.pending() > 0)
    throw new Error(`the real core delivered ${counts.delivered} of ${total} tasks`);
  return counts;
};

/** The real core's figures, defined as the model's (bench/sim/calibration.ts). */
export const realCoreFigures = (counts: RealCoreCounts): CalibrationFigures => {
  const tasks = counts.delivered;
  return {
    tasks,
    requestsPerTask: (counts.sqs + counts.ddbRead + counts.ddbWrite) / tasks,
    slicesPerTask: counts.slices / tasks,
    workerSecondsPerTask: counts.workerBusyMs / 1000 / tasks,
  };
};
