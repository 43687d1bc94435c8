/**
 * The ports the core protocol needs. Adapters implement them for AWS (and the emulators, which speak
 * the same APIs); the deterministic simulation implements them in memory.
 */
import type { DispatchItem } from './dispatch-model.js';
import type { AttentionMessage } from './messages.js';
import type { MetricName } from './names.js';
import type { StoreRecord } from './store-model.js';

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface IdGenerator {
  next(): string;
}

/** Outcome of a conditional write: the item after it, or what stood in its way. */
export type Conditional = { ok: true; item: DispatchItem } | { ok: false; current: DispatchItem | undefined };

/** Per-store dispatch state (Dispatch table). Every mutation is one conditional write on one item. */
export interface DispatchState {
  ensure(storeId: string): Promise<void>;
  read(storeId: string): Promise<DispatchItem | undefined>;
  /** After tasks are durable: bump enqSeq by `count`, mark the store active; returns the item after. */
  recordEnqueued(storeId: string, count: number, now: number): Promise<DispatchItem>;
  /** Add a queued slot if the store holds fewer than `limit` slots; marks the store active. */
  issueSlot(storeId: string, slotId: string, dueAt: number, limit: number, now: number): Promise<Conditional>;
  /** Turn queued slot `slotId` into a lease (next fencing token) if it is due and the store is within `max`. */
  acquire(
    storeId: string,
    slotId: string,
    opts: { now: number; expiresAt: number; max: number },
  ): Promise<Conditional>;
  /** Turn this lease back into a queued slot due at `dueAt` (the store still has work). */
  requeue(
    storeId: string,
    slotId: string,
    fence: number,
    opts: { dueAt: number; max: number; nextCallAt: number; headSentAt?: number },
  ): Promise<Conditional>;
  release(storeId: string, slotId: string, fence: number): Promise<Conditional>;
  /** Remove the last slot and the active mark, only if enqSeq is still `seenSeq` and no wake is pending. */
  markIdle(
    storeId: string,
    slotId: string,
    fence: number,
    opts: { seenSeq: number; now: number },
  ): Promise<Conditional>;
  /** Drop a queued slot (store paused or gone); with `ifOver`, only while the store holds more slots than that. */
  dropQueued(storeId: string, slotId: string, ifOver?: number): Promise<Conditional>;
  /** Forbid marking the store idle before `until` (a task was deferred past the lease). */
  deferWake(storeId: string, until: number): Promise<void>;
  /** Reconciler: an expired lease becomes a queued slot due at `dueAt`. */
  reclaim(storeId: string, slotId: string, fence: number, dueAt: number): Promise<Conditional>;
  /** Reconciler: note one more resend of a queued slot whose attention looks lost. */
  noteResend(storeId: string, slotId: string, resends: number): Promise<Conditional>;
  /** Mark a store active (sweep found backlog; resume; redrive), optionally with a wake time. */
  markActive(storeId: string, now: number, wakeAt?: number): Promise<void>;
  listActive(
    shard: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }>;
  readCursor(id: string): Promise<string | undefined>;
  writeCursor(id: string, cursor: string | undefined): Promise<void>;
}

export interface StoreRegistry {
  get(storeId: string): Promise<StoreRecord | undefined>;
  /** Conditional create; false when the store already exists. */
  create(record: StoreRecord): Promise<boolean>;
  put(record: StoreRecord): Promise<void>;
  scan(cursor: string | undefined, limit: number): Promise<{ stores: StoreRecord[]; cursor?: string }>;
}

export interface AttentionPublisher {
  publish(message: AttentionMessage, delaySeconds: number): Promise<void>;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  sentAt: number;
}

export interface DeadLetterReason {
  code: string;
  message: string;
  lastStatus?: number;
  attempts: number;
}

/** The store work queues as the ingest and the worker use them. */
export interface TaskQueues {
  send(queueUrl: string, body: string): Promise<void>;
  /** Sends up to any number of messages in SQS batches; returns the ids that failed. */
  sendBatch(
    queueUrl: string,
    entries: { id: string; body: string }[],
  ): Promise<{ failed: { id: string; message: string }[] }>;
  receive(
    queueUrl: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number },
  ): Promise<ReceivedMessage[]>;
  deleteBatch(queueUrl: string, receiptHandles: string[]): Promise<void>;
  changeVisibility(queueUrl: string, entries: { receiptHandle: string; seconds: number }[]): Promise<void>;
  deadLetter(deadLetterQueueUrl: string, body: string, reason: DeadLetterReason): Promise<void>;
}

export interface QueueCounts {
  backlog: number;
  inFlight: number;
  delayed: number;
  deadLetters: number;
}

/** Creating and inspecting store queues (admin and reconciler). */
export interface QueueAdmin {
  createStoreQueues(
    storeId: string,
    opts: { maxReceiveCount: number; tags: Record<string, string> },
  ): Promise<{ queueUrl: string; deadLetterQueueUrl: string }>;
  counts(store: Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl'>): Promise<QueueCounts>;
  /** Visible + in-flight + delayed messages of one queue: one request (the sweep's only SQS call per store). */
  pending(queueUrl: string): Promise<number>;
  /** Start moving the store's dead letters back to its queue; resolves with how many are being moved. */
  redrive(
    store: Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl'>,
    ratePerSecond: number,
  ): Promise<{ moving: number }>;
}

export type DeliveryOutcome =
  | { kind: 'ok'; status: number }
  | { kind: 'throttled'; status: number; retryAfterSeconds?: number }
  | { kind: 'transient'; status?: number; error: string }
  | { kind: 'permanent'; status: number; error: string };

export interface DeliveryRequest {
  marketplace: string;
  storeId: string;
  idempotencyKey: string;
  body: { eventId: string; type: string; payload: unknown; entityId?: string; version?: number };
}

export interface Marketplace {
  deliver(request: DeliveryRequest): Promise<DeliveryOutcome>;
}

export const DELIVERY_STATUSES = ['pending', 'processing', 'delivered', 'stale', 'dead_lettered'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRecord {
  storeId: string;
  eventId: string;
  status: DeliveryStatus;
  attempts?: number;
  lastError?: string;
  updatedAt: number;
}

/** Per-task outcome records: the effect-once check and the integrator's status route. */
export interface DeliveryLog {
  get(storeId: string, eventId: string): Promise<DeliveryRecord | undefined>;
  record(record: DeliveryRecord): Promise<void>;
}

export interface TokenRecord {
  tokenHash: string;
  tenantId: string;
  createdAt: number;
}

export interface TokenStore {
  put(record: TokenRecord): Promise<void>;
  get(tokenHash: string): Promise<TokenRecord | undefined>;
}

export type Fields = Record<string, unknown>;

/** Logs and metrics (Powertools on AWS). Metric dimensions stay low-cardinality: no store ids. */
export interface Telemetry {
  count(name: MetricName, value?: number, dimensions?: Record<string, string>): void;
  timing(name: MetricName, milliseconds: number, dimensions?: Record<string, string>): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}
