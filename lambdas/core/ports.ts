/**
 * The ports the core protocol needs. Adapters implement them for AWS (and the emulators, which speak
 * the same APIs); the deterministic simulation implements them in memory.
 */
import type { MarketLimit, RateState } from './adaptive-rate.js';
import type { DispatchItem } from './dispatch-model.js';
import type { LevelLoad } from './level-caps.js';
import type { AttentionMessage } from './messages.js';
import type { MetricName } from './names.js';
import type { StorePriority } from './plans.js';
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

/** How a lease hands its slot back (`requeue`). */
export interface RequeueOptions {
  dueAt: number;
  max: number;
  nextCallAt: number;
  /**
   * A single-consumer lease's carried pace, written to the store's schedule too (`tat`, as markIdle and release
   * do): a cap raised meanwhile makes the slot's next lease a shared-schedule one, which must start after it.
   */
  tat?: number;
  headSentAt?: number;
  throttled?: boolean;
  /** Slices of this slot in a row that ended on an error, this one included (kept on the slot as `e`). */
  errorStreak?: number;
  /** A hand-off to the confirm queue (the slice ended `confirm`): not counted as a republished attention. */
  handoff?: boolean;
}

/** What `advanceTat` hands a call: its schedule position and the store's learnt rate. */
export interface TatReservation {
  tat: number;
  rate?: RateState;
  /** The schedule's write count after this reservation (`tatSeq`): `returnTat` gives it back only if unchanged. */
  seq?: number;
  /**
   * The store's calls reserved on the schedule so far, of all its consumers (`tatCalls`: instants handed out,
   * less those given back), after this reservation: the adaptive rate's sent-rate count.
   */
  calls?: number;
  /**
   * An `advanceTat` with a lateness refused (`TatLate`): nothing was written; `late` is the schedule's last
   * block's (absent on a schedule written before lateness was kept), `tat` and `seq` the schedule's as the refusal
   * found it (rate.ts `sharedPacer` places a lowering after the gap: `placeTat`).
   */
  refused?: { late?: number };
}

/** A block write's lateness, and what it asks of the schedule's last block (rate.ts `sharedPacer`). */
export interface TatLate {
  /**
   * How late after its instants the block's calls may start. Refused if the schedule's last block's (`tatLate`)
   * is larger: a block after a later-calling one needs a gap (rate.ts `BlockRules.gap`).
   */
  ms: number;
  /**
   * A raise (`ms` larger than the last block's) is refused if the schedule reaches past this: a store that
   * binds that deep keeps the lateness it was lowered to (the spacing pays for less), so its consumers do not
   * take turns raising and lowering it (each lowering costs a gap).
   */
  deepFrom?: number;
}

/** A lease as its fencing names it: the slot it holds and the token it took. */
export interface LeaseRef {
  slotId: string;
  fence: number;
}

/** Per-store dispatch state (Dispatch table). Every mutation is one conditional write on one item. */
export interface DispatchState {
  ensure(storeId: string): Promise<void>;
  read(storeId: string): Promise<DispatchItem | undefined>;
  /** Bump enqSeq by `count` and mark the store active; returns the item after (re-sent copies, repairs). */
  recordEnqueued(storeId: string, count: number, now: number): Promise<DispatchItem>;
  /**
   * Ingest's write-ahead, before its send: bump enqSeq by `count`, mark the store active, and count one
   * ingest in flight until `until` at the latest. While one is in flight, no lease may mark the store idle,
   * so its tasks cannot land in an idle store even if the ingest dies right after its send. Returns the item after
   * (whether the store held a slot then decides how the ingest ends: `endEnqueueIssuing` or `endEnqueue`).
   */
  beginEnqueue(storeId: string, count: number, now: number, until: number): Promise<DispatchItem>;
  /**
   * After ingest's send (or its failure): one ingest fewer in flight, and enqSeq bumped once more, so a
   * lease whose empty poll began before the send landed cannot mark the store idle on the value it read
   * while the ingest was in flight (simulation seed 8170). Returns the item after.
   */
  endEnqueue(storeId: string): Promise<DispatchItem>;
  /**
   * `endEnqueue` and `issueSlot(limit 1)` in one write, for a store that held no slot when its ingest began: only
   * if the store still holds none, the ingest ends (as `endEnqueue`) and queued slot `slotId` due at `dueAt` is
   * added (as `issueSlot`, the store marked active). Refused, nothing is written and the ingest ends with
   * `endEnqueue`.
   */
  endEnqueueIssuing(storeId: string, slotId: string, dueAt: number, now: number): Promise<Conditional>;
  /**
   * Add a queued slot if the store holds fewer than `limit` slots; marks the store active. `by`: the lease of
   * a fan-out, which issues the slot only while it still holds that lease (a zombie's fan-out is refused).
   */
  issueSlot(
    storeId: string,
    slotId: string,
    dueAt: number,
    limit: number,
    now: number,
    by?: LeaseRef,
  ): Promise<Conditional>;
  /** Turn queued slot `slotId` into a lease (next fencing token) if it is due and the store is within `max`. */
  acquire(
    storeId: string,
    slotId: string,
    opts: { now: number; expiresAt: number; max: number },
  ): Promise<Conditional>;
  /**
   * Turn this lease back into a queued slot due at `dueAt` (the store still has work); counts a republished
   * attention, and a rate-limit block when the slice ended on a marketplace 429 (`throttled`).
   */
  requeue(storeId: string, slotId: string, fence: number, opts: RequeueOptions): Promise<Conditional>;
  /**
   * Remove this lease's slot, unless it is the store's last (that one goes through markIdle); `tat`
   * (single-consumer stores) carries its rate pacing to the next slot.
   */
  release(storeId: string, slotId: string, fence: number, tat?: number): Promise<Conditional>;
  /**
   * Remove the last slot and the active mark, only if enqSeq is still `seenSeq`, no wake is pending and no
   * ingest is in flight (or the last one's window has passed: it died);
   * records when, and `drainMs` (how long the store was busy) as its last time to drain.
   */
  markIdle(
    storeId: string,
    slotId: string,
    fence: number,
    opts: { seenSeq: number; now: number; tat?: number; drainMs?: number },
  ): Promise<Conditional>;
  /**
   * Rate limiting: atomically push the store's theoretical arrival time on by `intervalMs` (k intervals for a
   * block of k instants, rate.ts); returns the new value, and the store's learnt rate (`rate`) as it stands, so
   * every consumer follows another's change at its next reservation. `calls`: the instants this write reserves
   * (a block's count; 0 for a write that only moves the schedule on), added to the store's call count.
   * `late`: the block's lateness (`TatLate`); given, the write is conditional and records it, and a refusal
   * says so (`refused`). Without it (a write that only moves the schedule on), unconditional.
   */
  advanceTat(storeId: string, intervalMs: number, calls: number, late?: TatLate): Promise<TatReservation>;
  /**
   * Rate limiting: a block of lateness `late` placed at `first` (its span `intervalMs`: the schedule ends at
   * `first + intervalMs`), if the schedule is still as `seen` (its `tat` and `tatSeq`) — the caller put `first`
   * at least the gap its lateness needs after that schedule's end; undefined if another write came first.
   */
  placeTat(
    storeId: string,
    seen: { tat: number; seq?: number },
    first: number,
    intervalMs: number,
    calls: number,
    late: number,
  ): Promise<TatReservation | undefined>;
  /**
   * Adaptive rate: set the store's learnt rate to `next` if it is still the one the caller saw (`seenAt`: the
   * `at` of the state it read, undefined for none). Refused (with the current item) when another consumer
   * changed it first; never creates the item.
   */
  noteRate(storeId: string, next: RateState, seenAt: number | undefined): Promise<Conditional>;
  /**
   * Rate limiting: no call of the store may start before `until` (a marketplace 429's Retry-After): raises
   * `tat` to it, never lowers it. Every consumer's next `advanceTat` then lands at or after `until`. It moves
   * `tatSeq` on even when the schedule already reached past `until`, so no give-back (`returnTat`) of a block
   * reserved before the hold lowers `tat` under it again.
   */
  holdTat(storeId: string, until: number): Promise<void>;
  /**
   * Rate limiting: give back the last `intervalMs` of a reservation the caller will not use (its slice
   * deadline came first: a block's unused tail), if no other write moved the schedule since (`tat` and
   * `tatSeq` as it left them); false otherwise — those instants then stay unused, never handed out twice.
   * Without it a store whose interval exceeds its slice would push its own schedule on at every slice and
   * never call (simulation seed 10392). `calls`: the instants given back, taken off the store's call count.
   */
  returnTat(
    storeId: string,
    reservation: { tat: number; seq: number },
    intervalMs: number,
    calls: number,
  ): Promise<boolean>;
  /**
   * Rate limiting: restart a schedule that lags the clock (`tat` ≤ `now`) at `now + intervalMs` (a block's
   * span), handing back the schedule as it left it (like `advanceTat`, `calls` added to the store's call
   * count); undefined if it does not lag. `late`: the block's lateness, recorded; the restart then also needs
   * the schedule's last block to call no later (`tatLate` ≤ `late`), or to have ended the gap before `now`
   * (`tat` ≤ `now` − (LATENESS_REACH_MS − `late`), the largest gap any lateness needs).
   */
  restartTat(
    storeId: string,
    now: number,
    intervalMs: number,
    calls: number,
    late?: number,
  ): Promise<TatReservation | undefined>;
  /**
   * Drop a queued slot (store paused or gone), counting a discarded attention; with `ifOver`, only while
   * the store holds more slots than that, counting a lease block too (the store is over its limit).
   */
  dropQueued(storeId: string, slotId: string, ifOver?: number): Promise<Conditional>;
  /** Count a discarded attention that changed nothing else (a duplicate, a coalesced nudge); never creates the item. */
  noteDiscarded(storeId: string): Promise<void>;
  /** Forbid marking the store idle before `until` (a task was deferred past the lease). */
  deferWake(storeId: string, until: number): Promise<void>;
  /** Reconciler: an expired lease becomes a queued slot due at `dueAt`. */
  reclaim(storeId: string, slotId: string, fence: number, dueAt: number): Promise<Conditional>;
  /**
   * Reconciler: note one more resend of a queued slot whose attention looks lost (counted per store), only
   * while the slot is as the caller read it: queued, due at `at`, at `resends` resends. A slot re-queued since
   * (a new `at`) has its own attention; a resend announcing the old time would be dropped as surplus.
   */
  noteResend(storeId: string, slotId: string, resends: number, at: number): Promise<Conditional>;
  /** Mark a store active (sweep found backlog; resume; redrive), optionally with a wake time. */
  markActive(storeId: string, now: number, wakeAt?: number): Promise<void>;
  /** Redrive: mark the store active and not to be idled until `endRedrive` (the move may run for hours). */
  beginRedrive(storeId: string, now: number): Promise<void>;
  /** Reconciler: the move that began at `startedAt` has ended; the store may go idle again. */
  endRedrive(storeId: string, startedAt: number): Promise<Conditional>;
  listActive(
    shard: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }>;
  /**
   * Index backfill (issue #10's upgrade path): one page of a full read of the table, `limit` items read, the
   * ids of those marked active (`activeShard`) without `headSentAt` — items the code before f267a90 activated,
   * which are in no index since `headSentAt` became the `active` index's sort key.
   */
  listUnindexed(cursor: string | undefined, limit: number): Promise<{ storeIds: string[]; cursor?: string }>;
  /**
   * Index backfill: give an item marked active without `headSentAt` that key (its `activeSince`, else `now`),
   * and so its index entry.
   */
  indexActive(storeId: string, now: number): Promise<Conditional>;
  readCursor(id: string): Promise<string | undefined>;
  writeCursor(id: string, cursor: string | undefined): Promise<void>;
}

/** A store's queues as `createStoreQueues` answers them (kept on its record). */
export interface StoreQueueUrls {
  queueUrl: string;
  deadLetterQueueUrl: string;
  priorityQueueUrl: string;
}

export interface StoreRegistry {
  get(storeId: string): Promise<StoreRecord | undefined>;
  /** Conditional create; false when the store already exists. */
  create(record: StoreRecord): Promise<boolean>;
  /**
   * Writes `record` in place of `seen` only if the stored record is still `seen` (the same `revision`, or none
   * on both); false when another write came first.
   */
  replace(record: StoreRecord, seen: StoreRecord): Promise<boolean>;
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

/**
 * The retention pass's bound (issue #10): `refreshedAt` says no message of the store's queues was sent before
 * it (conservatively); `activeSince` says the same until a pass sets it. Kept by the Dispatch table.
 */
export interface RetentionMarks {
  /**
   * A completed pass: set the bound to `at`, only while the store is active and its bound is still the one the
   * pass read (`seen`, undefined for none) — a lowering meanwhile (a sweep rescue) wins. False when refused.
   */
  raiseRefreshed(storeId: string, at: number, seen: number | undefined): Promise<boolean>;
  /** The queue may now hold messages of any age (a sweep rescue): the next reconciler run makes a pass. */
  lowerRefreshed(storeId: string): Promise<void>;
}

export interface DeadLetterReason {
  code: string;
  message: string;
  lastStatus?: number;
  attempts: number;
  firstAttemptAt?: number;
  lastAttemptAt?: number;
}

/**
 * One message a batch send did not deliver. `refused` says the queue refused the message itself (its
 * content, or its size): sending it again would fail again. Without it, the queue was unavailable.
 */
export interface SendFailure {
  id: string;
  message: string;
  refused?: 'content' | 'too_large';
}

/** The store work queues as the ingest and the worker use them. */
export interface TaskQueues {
  /** Throws ValidationError / PayloadTooLargeError when the queue refuses the message itself. */
  send(queueUrl: string, body: string): Promise<void>;
  /** Sends up to any number of messages in SQS batches; returns the ids that failed. */
  sendBatch(queueUrl: string, entries: { id: string; body: string }[]): Promise<{ failed: SendFailure[] }>;
  receive(
    queueUrl: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number },
  ): Promise<ReceivedMessage[]>;
  deleteBatch(queueUrl: string, receiptHandles: string[]): Promise<void>;
  changeVisibility(queueUrl: string, entries: { receiptHandle: string; seconds: number }[]): Promise<void>;
  deadLetter(deadLetterQueueUrl: string, body: string, reason: DeadLetterReason): Promise<void>;
  /**
   * Put messages back as fresh copies delayed by `delaySeconds`, then delete the originals: a throttled
   * task comes back later without its receive count growing toward the DLQ.
   */
  resend(
    queueUrl: string,
    messages: { receiptHandle: string; body: string }[],
    delaySeconds: number,
  ): Promise<void>;
}

/**
 * The store DLQs as the reconciler keeps them (issue #10, core/dead-letter-keep.ts). Its own port, not a
 * TaskQueues method: no ingest or worker path calls it, and the work-queue stand-ins need not know it.
 */
export interface DeadLetterQueues {
  /**
   * Dead-letter keep (issue #10, core/dead-letter-keep.ts): receive up to `maxMessages` (≤ 10) of a store's DLQ,
   * hidden `visibilitySeconds`; send each back to the same DLQ as a fresh copy (body and message attributes
   * kept, delayed `delaySeconds`), then delete the originals copied. Copies first: a crash leaves a duplicate
   * dead letter, never a loss. `sentAt`: the SentTimestamp of each original copied (a refused copy keeps its
   * original, which reappears when its visibility ends).
   */
  refreshDeadLetters(
    deadLetterQueueUrl: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number; delaySeconds: number },
  ): Promise<{ received: number; sentAt: number[] }>;
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
  ): Promise<StoreQueueUrls>;
  /** The counts of the store's work queues (its high queue's added in) and its DLQ. */
  counts(
    store: Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl' | 'priorityQueueUrl'>,
  ): Promise<QueueCounts>;
  /** Visible + in-flight + delayed messages of one queue: one request (the sweep's only SQS call per store). */
  pending(queueUrl: string): Promise<number>;
  /** Start moving the store's dead letters back to its queue; resolves with how many are being moved. */
  redrive(
    store: Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl'>,
    ratePerSecond: number,
  ): Promise<{ moving: number }>;
  /** Whether a dead-letter move into the store's queue is still running (SQS allows one per queue). */
  redriveRunning(store: Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl'>): Promise<boolean>;
  /** Delete every message of the store's work queue; 'in_progress' when SQS refuses a second purge within 60 s. */
  purge(queueUrl: string): Promise<'purged' | 'in_progress'>;
}

export interface ActiveEntry {
  storeId: string;
  /** The oldest-task estimate (`headSentAt`): the sent time of the oldest task the store is known to hold. */
  oldestAt: number;
}

/** The Dispatch table's sparse `active` index, read oldest task first (operator listing). */
export interface ActiveStoreIndex {
  /** One shard's active stores with oldestAt ≥ `from`, oldest first, one page (`cursor` continues it). */
  byOldest(
    shard: string,
    opts: { from: number; limit: number; cursor?: string },
  ): Promise<{ entries: ActiveEntry[]; cursor?: string }>;
}

/** Any answer may carry the marketplace's own limit for the store (`limit`, from its rate-limit headers). */
export type DeliveryOutcome = (
  | { kind: 'ok'; status: number }
  | { kind: 'throttled'; status: number; retryAfterSeconds?: number }
  | { kind: 'transient'; status?: number; error: string }
  | { kind: 'permanent'; status: number; error: string }
) & { limit?: MarketLimit };

export interface DeliveryRequest {
  marketplace: string;
  storeId: string;
  idempotencyKey: string;
  body: { eventId: string; type: string; payload: unknown; entityId?: string; version?: number };
  /** The X-Ray trace id of the request that submitted the task (core/trace-header.ts), when it had one. */
  traceId?: string;
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
  /** Marketplace calls made for this task (throttled receives and crashes before the call do not count). */
  attempts?: number;
  lastError?: string;
  lastStatus?: number;
  firstAttemptAt?: number;
  lastAttemptAt?: number;
  /** The attempt that holds the task while `processing`, and until when (a crashed attempt's claim expires). */
  holder?: string;
  claimUntil?: number;
  /**
   * While `dead_lettered`: the SQS message id of the copy that was dead-lettered. That same message seen
   * again is its original whose delete was lost, not a redrive: it must not be called a second time.
   */
  deadMessageId?: string;
  /**
   * While `pending` after a 429 under `throttleScope: 'task'`: the Retry-After's end (the settler's clock). No
   * claim before it, so no copy of the task (an SQS duplicate, a client's repeated POST) is called inside it.
   */
  retryAt?: number;
  /**
   * The attempts made when the task was last dead-lettered: a redriven copy's `maxAttempts` budget counts from
   * here (an operator's redrive starts a fresh budget; `attempts` keeps counting the task's calls).
   */
  deadAttempts?: number;
  updatedAt: number;
}

export type Claim = { ok: true; record: DeliveryRecord } | { ok: false; record: DeliveryRecord | undefined };

/**
 * A task whose marketplace call answered 2xx, to be recorded `delivered` together with others (one
 * BatchWriteItem): `claimed` is the record as this attempt's claim wrote it, whose fields the unconditional
 * whole-item write carries (attempts + 1, first/last attempt, last error); `now` is when the 2xx came.
 */
export interface DeliveredSettle {
  storeId: string;
  eventId: string;
  claimed: DeliveryRecord;
  now: number;
}

/**
 * Per-task effect-once records (and per-entity delivered versions): the integrator's status route reads
 * them; the worker claims a task before the marketplace call and settles the claim after it.
 */
export interface DeliveryLog {
  get(storeId: string, eventId: string): Promise<DeliveryRecord | undefined>;
  /**
   * Claim one attempt: granted unless the task is delivered or stale, or another attempt's claim is still
   * live, or it was dead-lettered from this very message (`messageId`; a redriven copy is another message).
   */
  claim(
    storeId: string,
    eventId: string,
    opts: { holder: string; now: number; until: number; messageId: string },
  ): Promise<Claim>;
  /**
   * Settle the attempt `holder` claimed; false when the claim was lost (it expired and was taken over).
   * `dead_lettered` records the `messageId` it was dead-lettered from.
   */
  settle(
    storeId: string,
    eventId: string,
    holder: string,
    outcome: {
      status: Exclude<DeliveryStatus, 'processing'>;
      now: number;
      /** A marketplace call was made (throttled calls and stale skips are not attempts against the task). */
      countAttempt: boolean;
      lastError?: string;
      lastStatus?: number;
      messageId?: string;
      /** `pending` only: no claim before this instant (a 429's Retry-After under `throttleScope: 'task'`). */
      retryAt?: number;
      /** `dead_lettered` only: the task's attempts so far, where a redrive's fresh budget starts. */
      deadAttempts?: number;
    },
  ): Promise<boolean>;
  /**
   * Record tasks `delivered` in one request, unconditionally (the 2xx is the truth whoever holds the claim
   * now, and `delivered` only ever refuses claims), not atomically: answers the ones not written this time
   * (DynamoDB's UnprocessedItems), for the caller to try again. At most 25 per call.
   */
  settleDelivered(settles: DeliveredSettle[]): Promise<DeliveredSettle[]>;
  /**
   * Right before a versioned task's marketplace call: raise the entity's version mark to `version`, never
   * lowering it. Refused, with the mark, when a higher version's call has started already (the task is
   * stale); the same version passes again (a retry of the task, or another task of that version). Written
   * before the call, so no crash, timeout or lost settle after it can leave a started version unmarked.
   */
  markVersion(
    storeId: string,
    entityId: string,
    version: number,
    now: number,
  ): Promise<{ ok: true } | { ok: false; current: number }>;
  /** The entity's version mark: the highest version whose marketplace call has started. */
  deliveredVersion(storeId: string, entityId: string): Promise<number | undefined>;
}

export interface TokenRecord {
  tokenHash: string;
  tenantId: string;
  createdAt: number;
  /** Epoch ms after which the token is refused (set by rotation; absent = no expiry). */
  expiresAt?: number;
  /** Epoch ms of revocation: refused from then on. */
  revokedAt?: number;
  /**
   * The tenant's usage-plan key (TenantUsageKeys), which the authorizer hands API Gateway so every token of
   * a tenant draws on one throttle bucket. Absent on records issued before per-tenant usage plans.
   */
  usageKey?: string;
}

/** What may change on an existing token record: its end (rotation, revocation) or its usage key (backfill). */
export type TokenChange = Partial<Pick<TokenRecord, 'expiresAt' | 'revokedAt' | 'usageKey'>>;

export interface TokenStore {
  put(record: TokenRecord): Promise<void>;
  get(tokenHash: string): Promise<TokenRecord | undefined>;
  /** Every token record of one tenant (the byTenant index), in no particular order. */
  listByTenant(tenantId: string): Promise<TokenRecord[]>;
  /**
   * Sets the given fields on an existing record; false if there is no such record. An `expiresAt` only ever
   * moves the token's end earlier: where the record ends no later already, nothing is written (true).
   */
  amend(tokenHash: string, change: TokenChange): Promise<boolean>;
  /** One page of a scan of every token record: the tenants it names (a tenant may recur across pages). */
  tenantsPage(cursor: string | undefined, limit: number): Promise<{ tenantIds: string[]; cursor?: string }>;
}

export type Fields = Record<string, unknown>;

/** Logs and metrics (Powertools on AWS). Metric dimensions stay low-cardinality: no store ids. */
export interface Telemetry {
  count(name: MetricName, value?: number, dimensions?: Record<string, string>): void;
  timing(name: MetricName, milliseconds: number, dimensions?: Record<string, string>): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /**
   * The same telemetry with `fields` (a store's, tenant's and correlation ids) on every log line and, as
   * EMF properties — never dimensions — on every metric record, for one attention or one request.
   */
  scoped(fields: Fields): ScopedTelemetry;
}

/** Telemetry for one unit of work; `end()` publishes the metrics it batched. */
export interface ScopedTelemetry extends Telemetry {
  end(): void;
}

// ---------------------------------------------------------------------------------------------------
// Per-tenant request throttling (issue #5)

/**
 * One throttle identity per tenant: on AWS an API Gateway API key in the stage's usage plan, whose value
 * the authorizer returns as `usageIdentifierKey` (the API's key source is AUTHORIZER, so the value is an
 * identifier for the throttle, not a credential); in local mode a value derived in process.
 */
export interface TenantUsageKeys {
  /**
   * The tenant's key value, creating the key and adding it to the usage plan when missing. Idempotent and
   * safe to retry after a partial failure (a key created but not yet in the plan is found and added).
   */
  ensure(tenantId: string): Promise<string>;
}

// ---------------------------------------------------------------------------------------------------
// Store priority on AWS (issue #13): the levels' event sources

/** Each level's attention queue and the SQS event source that feeds the workers from it (level-balance.ts). */
export interface LevelSources {
  /** The level's attentions waiting and in flight (SQS's approximate counts). */
  load(level: StorePriority): Promise<LevelLoad>;
  /** The event source's MaximumConcurrency now. */
  cap(level: StorePriority): Promise<number>;
  setCap(level: StorePriority, cap: number): Promise<void>;
}
