import type { RateAnswer } from './adaptive-rate.js';
import type { DeadLetterLedger } from './dead-letter-audit.js';
import { writeDelivered } from './delivered-settle.js';
import { WorkMessageSchema, type WorkMessage } from './messages.js';
import { deliveryKey, MetricNames } from './names.js';
import { MAX_RECEIVE_COUNT, type Policy } from './plans.js';
import type {
  Clock,
  DeliveredSettle,
  DeliveryLog,
  DeliveryRecord,
  IdGenerator,
  Marketplace,
  ReceivedMessage,
  TaskQueues,
  Telemetry,
} from './ports.js';
import type { StoreRecord } from './store-model.js';
import { CLOCK_SKEW_MS, EXPIRY_AGE_MS, MAX_DELAY_SECONDS } from './timing.js';

export interface DeliverDeps {
  tasks: TaskQueues;
  marketplace: Marketplace;
  deliveries: DeliveryLog;
  clock: Clock;
  ids: IdGenerator;
  telemetry: Telemetry;
  random: () => number;
  /** `expiryAgeMs`: a task accepted this long ago that is throttled again is dead-lettered (default EXPIRY_AGE_MS). */
  settings: { marketplaceTimeoutMs: number; expiryAgeMs?: number };
  /** Counts each dead letter the worker writes, so the reconciler can tell the ones SQS moved by itself. */
  deadLetterLedger?: Pick<DeadLetterLedger, 'noteWritten'>;
}

/** What the slice does with the message next. */
export type TaskResult =
  | { kind: 'done'; as: 'delivered' | 'duplicate' | 'dead_lettered' | 'stale' }
  /** The rate left no call slot before the slice deadline: the task was not tried (its claim is released). */
  | { kind: 'not_started' }
  /**
   * Back after `afterSeconds`: by its message's visibility (a transient failure, an attempt counted) or, with
   * `copy`, as a fresh copy delayed that long (a 429 under `throttleScope: 'task'`: its receive count must not
   * grow toward the DLQ's limit, as the store-wide throttle's re-sends do not).
   */
  | { kind: 'retry'; afterSeconds: number; copy?: true }
  /** `deadLettered`: this task itself was dead-lettered (`expiring`); the store is throttled all the same. */
  | { kind: 'throttled'; afterSeconds: number; deadLettered?: true };

/**
 * Delivered settles the caller writes together (one BatchWriteItem for a receive batch), before it deletes
 * their messages.
 */
export interface LaterSettles {
  add(settle: DeliveredSettle): void;
  /** Whether the 2xx of the attempt `holder` is among them (its claim still reads `processing`). */
  holds(holder: string): boolean;
}

/** Transient failures back off exponentially with full jitter, from 2 s up to SQS's 900 s visibility hop. */
const BACKOFF_BASE_SECONDS = 2;
export const DEFAULT_RETRY_AFTER_SECONDS = 10;
/**
 * A claim outlives the slice's last possible marketplace call by this much before another attempt may take
 * the task over: the clock skew between the two workers, plus slack for what may follow the receive batch's
 * last call before its delivered settles land (that task's own outcome writes — a dead letter, a retry's
 * hiding — then the batch's settle write and its retries). Below LEASE_MARGIN_MS: a claim still ends
 * before the lease, and so before its message can be received again.
 */
export const CLAIM_MARGIN_MS = CLOCK_SKEW_MS + 6_000;

export const backoffSeconds = (attempt: number, random: () => number): number => {
  const ceiling = Math.min(MAX_DELAY_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.max(0, attempt - 1));
  return Math.max(1, Math.ceil(random() * ceiling));
};

/**
 * A 429's Retry-After as honoured: whole seconds (an SQS delay is whole), at least 1 s, at most SQS's longest delay,
 * a default when absent.
 */
const retryAfterOf = (seconds: number | undefined): number =>
  Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(seconds ?? DEFAULT_RETRY_AFTER_SECONDS)));

const parseWork = (body: string): WorkMessage | undefined => {
  try {
    const parsed = WorkMessageSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

interface Reason {
  code: string;
  message: string;
  lastStatus?: number;
}

const deadLetter = async (
  deps: DeliverDeps,
  store: StoreRecord,
  message: ReceivedMessage,
  reason: Reason,
  attempt?: {
    eventId: string;
    holder: string;
    record: DeliveryRecord;
    attempts: number;
    correlationId?: string;
  },
  /** Whether this attempt made a marketplace call (false when the task is given up before one). */
  countAttempt = true,
): Promise<TaskResult> => {
  // Counted before the send, so the tally never lags the DLQ (a failed send over-counts one: that only hides
  // an SQS move within the same audit interval). A failed count must not stop the dead-lettering.
  await deps.deadLetterLedger?.noteWritten(store.storeId, deps.clock.now()).catch((error: unknown) => {
    deps.telemetry.warn('dead letter not counted', { storeId: store.storeId, error: String(error) });
  });
  // The DLQ message comes first: if the settle below is lost, a redrive still finds the task.
  await deps.tasks.deadLetter(store.deadLetterQueueUrl, message.body, {
    ...reason,
    attempts: attempt?.attempts ?? 0,
    ...(attempt?.record.firstAttemptAt === undefined
      ? {}
      : { firstAttemptAt: attempt.record.firstAttemptAt }),
    ...(attempt?.record.lastAttemptAt === undefined ? {} : { lastAttemptAt: attempt.record.lastAttemptAt }),
  });
  if (attempt) {
    await deps.deliveries.settle(store.storeId, attempt.eventId, attempt.holder, {
      status: 'dead_lettered',
      messageId: message.messageId,
      now: deps.clock.now(),
      lastError: `${reason.code}: ${reason.message}`,
      ...(reason.lastStatus === undefined ? {} : { lastStatus: reason.lastStatus }),
      countAttempt,
      deadAttempts: attempt.attempts,
    });
  }
  deps.telemetry.count(MetricNames.tasksDeadLettered, 1, { code: reason.code });
  deps.telemetry.warn('task dead-lettered', {
    eventId: attempt?.eventId,
    // The task's own correlation id (the request that submitted it), over the attention's.
    ...(attempt?.correlationId === undefined ? {} : { correlationId: attempt.correlationId }),
    ...reason,
  });
  return { kind: 'done', as: 'dead_lettered' };
};

/**
 * One task, effect once: claim it (refused if already delivered or stale, or while another attempt's
 * claim is live), wait for the store's rate, mark its entity's version (stale if a newer version was sent
 * already), call the marketplace with the Idempotency-Key, then settle the claim with the outcome
 * (contract classification): a 2xx unconditionally and batched (`settleLater`), the others conditioned on
 * still holding the claim, one write each.
 */
export const deliverTask = async (
  deps: DeliverDeps,
  store: StoreRecord,
  policy: Pick<Policy, 'maxAttempts'> & Partial<Pick<Policy, 'throttleScope'>>,
  message: ReceivedMessage,
  /** Waits for the store's rate to allow the call; false when no call may start before the slice deadline. */
  pace: () => Promise<boolean> = async () => true,
  /** The latest the call may start (the slice deadline): the claim must outlast any wait for the rate. */
  callDeadline?: number,
  /** Told each marketplace answer (the adaptive rate: its headers, or a bare 429). */
  observe: (answer: RateAnswer) => Promise<void> = async () => undefined,
  /** The caller's batch of delivered settles to come; absent: a 2xx is settled here, at once (with retries). */
  later?: LaterSettles,
): Promise<TaskResult> => {
  const work = parseWork(message.body);
  if (!work || work.storeId !== store.storeId) {
    return deadLetter(deps, store, message, { code: 'invalid_message', message: 'not a valid task message' });
  }
  const now = deps.clock.now();
  const holder = deps.ids.next();
  const claim = await deps.deliveries.claim(store.storeId, work.eventId, {
    holder,
    messageId: message.messageId,
    now,
    until: Math.max(now, callDeadline ?? now) + deps.settings.marketplaceTimeoutMs + CLAIM_MARGIN_MS,
  });
  if (!claim.ok) {
    const current = claim.record;
    // A task a 429 sent back, whose Retry-After has not ended (this copy is another one: an SQS duplicate, a
    // client's repeated POST): it waits as long, as a fresh copy, without a call. Only a
    // `pending` record carries `retryAt` (every claim removes it), and only one refused for it has it ahead.
    // (At most SQS's longest delay: `retryAt` is on the settler's clock, which may run ahead of this one.)
    if (current?.retryAt !== undefined && current.retryAt > now) {
      const afterSeconds = Math.min(MAX_DELAY_SECONDS, Math.ceil((current.retryAt - now) / 1000));
      return { kind: 'retry', afterSeconds, copy: true };
    }
    // A copy of a task this very batch delivered (a client's repeated POST, an SQS duplicate): its settle is
    // on its way, written before either message is deleted.
    const deliveredHere =
      current?.status === 'processing' && current.holder !== undefined && later?.holds(current.holder);
    if (!deliveredHere && current?.status === 'processing' && current.claimUntil !== undefined) {
      // Another attempt holds this task right now (a duplicate delivery): look again after its claim.
      return { kind: 'retry', afterSeconds: Math.max(1, Math.ceil((current.claimUntil - now) / 1000)) };
    }
    // Delivered, stale, or dead-lettered from this very message (its delete was lost): nothing to call.
    deps.telemetry.count(MetricNames.tasksDuplicate);
    return { kind: 'done', as: 'duplicate' };
  }
  const record = claim.record;
  /** Settles this attempt's claim (conditioned on still holding it); false when the claim was lost. */
  const settle = (
    status: 'pending' | 'stale',
    extra: { lastError?: string; lastStatus?: number; countAttempt: boolean; retryAt?: number },
  ) =>
    deps.deliveries.settle(store.storeId, work.eventId, holder, { status, now: deps.clock.now(), ...extra });
  /** What a dead-letter records of this attempt, but for its count of marketplace calls. */
  const claimed = {
    eventId: work.eventId,
    holder,
    record,
    ...(work.correlationId === undefined ? {} : { correlationId: work.correlationId }),
  };
  if (message.receiveCount >= MAX_RECEIVE_COUNT) {
    // SQS would move it to the DLQ by itself at its next receive, leaving the record `pending` for good:
    // a task received this often never reaches an outcome (it crashes its workers, or outlives them).
    // Dead-letter it here instead, so its status says so and a redrive can bring it back.
    return deadLetter(
      deps,
      store,
      message,
      {
        code: 'receive_limit',
        message: `received ${message.receiveCount} times without an outcome`,
        ...(record.lastStatus === undefined ? {} : { lastStatus: record.lastStatus }),
      },
      { ...claimed, attempts: record.attempts ?? 0 },
      false,
    );
  }
  const attempts = (record.attempts ?? 0) + 1;
  const attempt = { ...claimed, attempts };
  /** This attempt's place in the task's `maxAttempts` budget: a redrive starts a fresh one. */
  const budgetUsed = attempts - (record.deadAttempts ?? 0);

  if (work.entityId !== undefined && work.version !== undefined) {
    // The version mark goes up before the attempt, not with its outcome: a call that times out but applies,
    // or whose settle is lost to a crash, has still marked its version, so no older one follows it. (Before
    // the rate wait: a stale task spends no rate instant, and nothing stands between the wait and the call.)
    const marked = await deps.deliveries.markVersion(
      store.storeId,
      work.entityId,
      work.version,
      deps.clock.now(),
    );
    if (!marked.ok) {
      await settle('stale', {
        lastError: `version ${work.version} is older than version ${marked.current}, already sent`,
        countAttempt: false,
      });
      deps.telemetry.count(MetricNames.tasksStale);
      return { kind: 'done', as: 'stale' };
    }
  }
  // Paced right before the call, so the marketplace sees the store's calls spaced as reserved.
  if (!(await pace())) {
    await settle('pending', { countAttempt: false });
    return { kind: 'not_started' };
  }
  const started = deps.clock.now();
  const outcome = await deps.marketplace.deliver({
    marketplace: store.marketplace,
    storeId: store.storeId,
    idempotencyKey: deliveryKey(store.storeId, work.eventId),
    body: {
      eventId: work.eventId,
      type: work.type,
      payload: work.payload,
      ...(work.entityId === undefined ? {} : { entityId: work.entityId }),
      ...(work.version === undefined ? {} : { version: work.version }),
    },
    ...(work.traceId === undefined ? {} : { traceId: work.traceId }),
  });
  deps.telemetry.timing(MetricNames.marketplaceLatency, deps.clock.now() - started);
  // Best effort: the rate's own write failing must never keep this call's outcome from being settled.
  // A 429 under `throttleScope: 'task'` throttles that task alone: the store's rate and its other consumers do
  // not hear of it (a rate header on it still counts).
  const storeThrottled = outcome.kind === 'throttled' && policy.throttleScope !== 'task';
  await observe({
    throttled: storeThrottled,
    ...(storeThrottled ? { retryAfterSeconds: retryAfterOf(outcome.retryAfterSeconds) } : {}),
    startedAt: started,
    ...(outcome.limit === undefined ? {} : { limit: outcome.limit }),
  }).catch((error: unknown) => deps.telemetry.warn('rate not observed', { error: String(error) }));

  switch (outcome.kind) {
    case 'ok': {
      // Unconditional (docs/ARCHITECTURE.md, "Batched delivered settles"): the 2xx is the truth whoever
      // holds the claim, and `delivered` refuses every claim after it. The message is deleted only after.
      const delivered: DeliveredSettle = {
        storeId: store.storeId,
        eventId: work.eventId,
        claimed: record,
        now: deps.clock.now(),
      };
      if (later) later.add(delivered);
      else await writeDelivered(deps, [delivered]);
      deps.telemetry.count(MetricNames.tasksDelivered);
      return { kind: 'done', as: 'delivered' };
    }
    case 'permanent':
      return deadLetter(
        deps,
        store,
        message,
        { code: 'marketplace_rejected', message: outcome.error, lastStatus: outcome.status },
        attempt,
      );
    case 'throttled': {
      // Re-sent copies restart SQS's retention clock, so a marketplace answering 429 for ever would keep a
      // task for ever with nothing telling anyone: past the expiry age since acceptance it is dead-lettered
      // instead, with its reason (issue #10, "no silent expiry"); a redrive gives it another life.
      // The body's acceptedAt (set by ingest) travels with every copy: re-sends, dead letters, redrives.
      const accepted = work.acceptedAt;
      const expiryAgeMs = deps.settings.expiryAgeMs ?? EXPIRY_AGE_MS;
      const afterSeconds = retryAfterOf(outcome.retryAfterSeconds);
      deps.telemetry.count(
        storeThrottled ? MetricNames.marketplaceThrottled : MetricNames.marketplaceTaskThrottled,
      );
      if (deps.clock.now() - accepted >= expiryAgeMs) {
        deps.telemetry.count(MetricNames.tasksExpiring);
        await deadLetter(
          deps,
          store,
          message,
          {
            code: 'expiring',
            message: `throttled (429) ${Math.floor((deps.clock.now() - accepted) / 1000)} s after it was accepted`,
            lastStatus: outcome.status,
          },
          { ...claimed, attempts: record.attempts ?? 0 },
          false,
        );
        return storeThrottled
          ? { kind: 'throttled', afterSeconds, deadLettered: true }
          : { kind: 'done', as: 'dead_lettered' };
      }
      // Not an attempt against the task: the store was busy. The claim is released for the retry from the
      // Retry-After's end only, so no other copy of the task (an SQS duplicate, a client's repeated POST) is called
      // inside it — under either throttle scope: the store's hold (`holdTat`) does not stop a block another consumer
      // reserved before it, and until session 23 such a block called a duplicate copy of this very task 6 s inside
      // its Retry-After (simulation seed 3126243).
      await settle('pending', {
        lastError: 'throttled (429)',
        lastStatus: outcome.status,
        countAttempt: false,
        retryAt: deps.clock.now() + afterSeconds * 1000,
      });
      return storeThrottled
        ? { kind: 'throttled', afterSeconds }
        : { kind: 'retry', afterSeconds, copy: true };
    }
    case 'transient': {
      const statusClass = outcome.status === undefined ? 'network' : `${Math.floor(outcome.status / 100)}xx`;
      deps.telemetry.count(MetricNames.tasksFailed, 1, { statusClass });
      if (budgetUsed >= policy.maxAttempts) {
        return deadLetter(
          deps,
          store,
          message,
          {
            code: 'retries_exhausted',
            message: outcome.error,
            ...(outcome.status === undefined ? {} : { lastStatus: outcome.status }),
          },
          attempt,
        );
      }
      await settle('pending', {
        lastError: outcome.error,
        ...(outcome.status === undefined ? {} : { lastStatus: outcome.status }),
        countAttempt: true,
      });
      return { kind: 'retry', afterSeconds: backoffSeconds(budgetUsed, deps.random) };
    }
  }
};
