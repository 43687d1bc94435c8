import { WorkMessageSchema, type WorkMessage } from './messages.js';
import { deliveryKey, MetricNames } from './names.js';
import type { Clock, DeliveryLog, Marketplace, ReceivedMessage, TaskQueues, Telemetry } from './ports.js';
import { MAX_DELIVERY_ATTEMPTS } from './plans.js';
import type { StoreRecord } from './store-model.js';
import { MAX_DELAY_SECONDS } from './timing.js';

export interface DeliverDeps {
  tasks: TaskQueues;
  marketplace: Marketplace;
  deliveries: DeliveryLog;
  clock: Clock;
  telemetry: Telemetry;
  random: () => number;
}

/** What the slice does with the message next. */
export type TaskResult =
  | { kind: 'done'; as: 'delivered' | 'duplicate' | 'dead_lettered' }
  | { kind: 'retry'; afterSeconds: number }
  | { kind: 'throttled'; afterSeconds: number };

/** Transient failures back off exponentially with full jitter, from 2 s up to SQS's 900 s visibility hop. */
const BACKOFF_BASE_SECONDS = 2;
export const DEFAULT_RETRY_AFTER_SECONDS = 10;

export const backoffSeconds = (attempt: number, random: () => number): number => {
  const ceiling = Math.min(MAX_DELAY_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.max(0, attempt - 1));
  return Math.max(1, Math.ceil(random() * ceiling));
};

const deadLetter = async (
  deps: DeliverDeps,
  store: StoreRecord,
  message: ReceivedMessage,
  eventId: string | undefined,
  reason: { code: string; message: string; lastStatus?: number },
): Promise<TaskResult> => {
  await deps.tasks.deadLetter(store.deadLetterQueueUrl, message.body, {
    ...reason,
    attempts: message.receiveCount,
  });
  if (eventId !== undefined) {
    await deps.deliveries.record({
      storeId: store.storeId,
      eventId,
      status: 'dead_lettered',
      attempts: message.receiveCount,
      lastError: `${reason.code}: ${reason.message}`,
      updatedAt: deps.clock.now(),
    });
  }
  deps.telemetry.count(MetricNames.tasksDeadLettered, 1, { code: reason.code });
  deps.telemetry.warn('task dead-lettered', { storeId: store.storeId, eventId, ...reason });
  return { kind: 'done', as: 'dead_lettered' };
};

const parseWork = (body: string): WorkMessage | undefined => {
  try {
    const parsed = WorkMessageSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/** One task: check it was not already done, call the marketplace once, classify the answer (contract). */
export const deliverTask = async (
  deps: DeliverDeps,
  store: StoreRecord,
  message: ReceivedMessage,
): Promise<TaskResult> => {
  const work = parseWork(message.body);
  if (!work || work.storeId !== store.storeId) {
    return deadLetter(deps, store, message, work?.eventId, {
      code: 'invalid_message',
      message: 'not a valid task message',
    });
  }
  const previous = await deps.deliveries.get(store.storeId, work.eventId);
  // Only a completed effect is final: a dead-lettered task comes back through a redrive and must be tried again.
  if (previous?.status === 'delivered' || previous?.status === 'stale') {
    deps.telemetry.count(MetricNames.tasksDuplicate);
    return { kind: 'done', as: 'duplicate' };
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
  });
  const statusClass =
    outcome.kind === 'transient' && outcome.status === undefined
      ? 'network'
      : `${Math.floor((outcome.status ?? 0) / 100)}xx`;
  deps.telemetry.timing(MetricNames.marketplaceLatency, deps.clock.now() - started, { statusClass });
  switch (outcome.kind) {
    case 'ok':
      await deps.deliveries.record({
        storeId: store.storeId,
        eventId: work.eventId,
        status: 'delivered',
        attempts: message.receiveCount,
        updatedAt: deps.clock.now(),
      });
      deps.telemetry.count(MetricNames.tasksDelivered);
      return { kind: 'done', as: 'delivered' };
    case 'permanent':
      return deadLetter(deps, store, message, work.eventId, {
        code: 'marketplace_rejected',
        message: outcome.error,
        lastStatus: outcome.status,
      });
    case 'throttled':
      deps.telemetry.count(MetricNames.marketplaceThrottled);
      return {
        kind: 'throttled',
        afterSeconds: Math.min(
          MAX_DELAY_SECONDS,
          Math.max(1, outcome.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS),
        ),
      };
    case 'transient':
      deps.telemetry.count(MetricNames.tasksFailed, 1, { statusClass });
      if (message.receiveCount >= MAX_DELIVERY_ATTEMPTS) {
        return deadLetter(deps, store, message, work.eventId, {
          code: 'retries_exhausted',
          message: outcome.error,
          ...(outcome.status === undefined ? {} : { lastStatus: outcome.status }),
        });
      }
      return { kind: 'retry', afterSeconds: backoffSeconds(message.receiveCount, deps.random) };
  }
};
