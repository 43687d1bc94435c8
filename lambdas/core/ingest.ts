import { z } from 'zod';
import {
  ConflictError,
  DependencyError,
  ForbiddenError,
  PayloadTooLargeError,
  ValidationError,
} from './errors.js';
import {
  json,
  MAX_BATCH_BODY_BYTES,
  MAX_TASK_BODY_BYTES,
  parseJsonBody,
  storeIdOf,
  validate,
  type HttpRequest,
  type HttpResponse,
} from './http.js';
import type { WorkMessage } from './messages.js';
import { MetricNames } from './names.js';
import type { DeliveryLog, StoreRegistry, TaskQueues } from './ports.js';
import { ENSURE_SLOT, publishAttention, signalStore, type SignalDeps } from './signal.js';
import { acceptsTasks, isConsumable, type StoreRecord } from './store-model.js';
import { BatchBodySchema, EVENT_ID_PATTERN, TaskSchema, type Task } from './task-schemas.js';

export interface IngestDeps extends SignalDeps {
  stores: StoreRegistry;
  tasks: TaskQueues;
  deliveries: DeliveryLog;
}

export const EventIdParam = z.string().regex(EVENT_ID_PATTERN, 'must be 1–128 characters of [A-Za-z0-9._:-]');

const wrapDependency = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (error) {
    throw new DependencyError(`${what} is unavailable; nothing was accepted`, error);
  }
};

/** The store, if the calling tenant owns it and it accepts tasks. */
const storeForTenant = async (deps: IngestDeps, request: HttpRequest): Promise<StoreRecord> => {
  const storeId = storeIdOf(request);
  const store = await wrapDependency('the store registry', () => deps.stores.get(storeId));
  // One answer for "unknown" and "another tenant's": a 404 would tell integrators which store ids exist.
  if (!store || store.tenantId !== request.tenantId) throw new ForbiddenError();
  return store;
};

const accepting = (store: StoreRecord): StoreRecord => {
  if (!acceptsTasks(store.status)) {
    throw new ConflictError(
      'store_not_accepting',
      `store ${store.storeId} is ${store.status} and accepts no tasks`,
    );
  }
  return store;
};

const toWorkMessage = (store: StoreRecord, task: Task, now: number, correlationId: string): string => {
  const message: WorkMessage = { v: 1, storeId: store.storeId, ...task, acceptedAt: now, correlationId };
  return JSON.stringify(message);
};

/**
 * After tasks are durable: bump the store's enqueue sequence (this is what makes a concurrent "mark idle"
 * fail), then make sure one attention exists. Never throws: the tasks are already accepted, and a failure
 * here is repaired by the nudge below, by the next task, or by the reconciler's sweep.
 */
const signalAfterEnqueue = async (
  deps: IngestDeps,
  store: StoreRecord,
  count: number,
  correlationId: string,
): Promise<void> => {
  try {
    const item = await deps.dispatch.recordEnqueued(store.storeId, count, deps.clock.now());
    if (!isConsumable(store.status)) return;
    if (Object.keys(item.slots).length > 0) {
      deps.telemetry.count(MetricNames.attentionsCoalesced, 1, { reason: 'ingest' });
      return;
    }
    await signalStore(deps, store.storeId, { limit: 1, reason: 'ingest', correlationId });
  } catch (error) {
    deps.telemetry.count(MetricNames.signalFailures);
    deps.telemetry.error('signal after enqueue failed; publishing a nudge', {
      storeId: store.storeId,
      error: String(error),
    });
    try {
      await publishAttention(deps, store.storeId, ENSURE_SLOT, 'repair', 0, correlationId);
    } catch (nudgeError) {
      deps.telemetry.error('nudge failed; the reconciler sweep will find the backlog', {
        storeId: store.storeId,
        error: String(nudgeError),
      });
    }
  }
};

export const submitTask = async (deps: IngestDeps, request: HttpRequest): Promise<HttpResponse> => {
  const body = parseJsonBody(request, MAX_TASK_BODY_BYTES);
  const store = accepting(await storeForTenant(deps, request));
  const task = validate(TaskSchema, body);
  const now = deps.clock.now();
  await wrapDependency('the store queue', () =>
    deps.tasks.send(store.queueUrl, toWorkMessage(store, task, now, request.requestId)),
  );
  deps.telemetry.count(MetricNames.tasksAccepted, 1);
  await signalAfterEnqueue(deps, store, 1, request.requestId);
  return json(202, { storeId: store.storeId, eventId: task.eventId, status: 'accepted' });
};

interface Rejection {
  eventId: string;
  error: { code: string; message: string };
}

const eventIdOf = (raw: unknown, index: number): string => {
  const candidate = (raw as { eventId?: unknown } | null)?.eventId;
  return typeof candidate === 'string' ? candidate : `#${index}`;
};

export const submitBatch = async (deps: IngestDeps, request: HttpRequest): Promise<HttpResponse> => {
  const body = parseJsonBody(request, MAX_BATCH_BODY_BYTES);
  const store = accepting(await storeForTenant(deps, request));
  const { tasks: rawTasks } = validate(BatchBodySchema, body);
  const now = deps.clock.now();
  const rejected: Rejection[] = [];
  const valid: { task: Task; index: number }[] = [];
  const seen = new Set<string>();
  rawTasks.forEach((raw, index) => {
    try {
      if (Buffer.byteLength(JSON.stringify(raw), 'utf8') > MAX_TASK_BODY_BYTES) {
        throw new PayloadTooLargeError(MAX_TASK_BODY_BYTES);
      }
      const task = validate(TaskSchema, raw, ['tasks', index]);
      if (seen.has(task.eventId)) {
        throw new ValidationError(`tasks[${index}].eventId: duplicates an earlier task in this batch`);
      }
      seen.add(task.eventId);
      valid.push({ task, index });
    } catch (error) {
      const err = error as ValidationError | PayloadTooLargeError;
      rejected.push({ eventId: eventIdOf(raw, index), error: { code: err.code, message: err.message } });
    }
  });
  let accepted: string[] = [];
  if (valid.length > 0) {
    const entries = valid.map(({ task, index }) => ({
      id: String(index),
      body: toWorkMessage(store, task, now, request.requestId),
    }));
    const { failed } = await wrapDependency('the store queue', () =>
      deps.tasks.sendBatch(store.queueUrl, entries),
    );
    const failedIds = new Set(failed.map((f) => f.id));
    for (const { task, index } of valid) {
      if (failedIds.has(String(index))) {
        rejected.push({
          eventId: task.eventId,
          error: {
            code: 'dependency_unavailable',
            message: 'the store queue did not accept this task; retry it',
          },
        });
      }
    }
    accepted = valid.filter(({ index }) => !failedIds.has(String(index))).map(({ task }) => task.eventId);
    if (accepted.length === 0 && failed.length > 0) {
      throw new DependencyError('the store queue is unavailable; nothing was accepted');
    }
  }
  if (accepted.length > 0) {
    deps.telemetry.count(MetricNames.tasksAccepted, accepted.length);
    await signalAfterEnqueue(deps, store, accepted.length, request.requestId);
  }
  if (rejected.length > 0) deps.telemetry.count(MetricNames.tasksRejected, rejected.length);
  return json(202, { accepted, rejected });
};

export const taskStatus = async (deps: IngestDeps, request: HttpRequest): Promise<HttpResponse> => {
  const store = await storeForTenant(deps, request);
  const eventId = validate(EventIdParam, request.pathParameters['eventId'], ['eventId']);
  const record = await wrapDependency('the delivery log', () => deps.deliveries.get(store.storeId, eventId));
  return json(200, {
    storeId: store.storeId,
    eventId,
    status: record?.status ?? 'pending',
    ...(record?.attempts === undefined ? {} : { attempts: record.attempts }),
    ...(record?.lastError === undefined ? {} : { lastError: record.lastError }),
  });
};
