import { z } from 'zod';
import {
  AppError,
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
import { encodeWorkMessage } from './messages.js';
import { sqsSafeJson } from './sqs-text.js';
import { MetricNames } from './names.js';
import { INGEST_WINDOW_MS } from './timing.js';
import { TRACE_HEADER, traceIdOf } from './trace-header.js';
import type { DispatchItem } from './dispatch-model.js';
import type { DeliveryLog, SendFailure, StoreRegistry, TaskQueues } from './ports.js';
import { ENSURE_SLOT, issueAndPublish, publishAttention, signalStore, type SignalDeps } from './signal.js';
import { acceptsTasks, isConsumable, policyOf, type StoreRecord } from './store-model.js';
import { queueForPriority, workQueuesOf } from './store-queues.js';
import { BatchBodySchema, EVENT_ID_PATTERN, TaskSchema, taskPriorityOf, type Task } from './task-schemas.js';

export interface IngestDeps extends SignalDeps {
  stores: StoreRegistry;
  tasks: TaskQueues;
  deliveries: DeliveryLog;
}

export const EventIdParam = z.string().regex(EVENT_ID_PATTERN, 'must be 1–128 characters of [A-Za-z0-9._:-]');

/** A dependency's failure is a 503; an AppError (the queue refused the content itself) keeps its own status. */
const wrapDependency = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) throw error;
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

const toWorkMessage = (store: StoreRecord, task: Task, now: number, request: HttpRequest): string => {
  const traceId = traceIdOf(request.headers[TRACE_HEADER]);
  return encodeWorkMessage({
    v: 1,
    storeId: store.storeId,
    ...task,
    priority: taskPriorityOf(task),
    acceptedAt: now,
    correlationId: request.requestId,
    ...(traceId === undefined ? {} : { traceId }),
  });
};

/** The store queue a task goes to: its high queue for a `high` task, else its work queue (store-queues.ts). */
const queueOf = (store: StoreRecord, task: Task): string => queueForPriority(store, taskPriorityOf(task));

/** A task's size as it travels (escapes included), held to the contract's 64 KiB per task. */
const encodedTaskBytes = (task: Task): number => {
  const bytes = Buffer.byteLength(sqsSafeJson(task), 'utf8');
  if (bytes > MAX_TASK_BODY_BYTES) throw new PayloadTooLargeError(MAX_TASK_BODY_BYTES, 'task, once encoded,');
  return bytes;
};

/**
 * Write-ahead, before the send: bump the store's enqueue sequence (what makes a concurrent "mark idle"
 * fail), mark it active and count this request in flight, so no lease can mark the store idle until the
 * request ends or its Lambda's time is up. Whatever happens after this — the ingest dying right after its
 * send included — the store is in the active index, where the reconciler repairs it within a period. A
 * failure here accepts nothing (503).
 */
const enqueueAhead = (deps: IngestDeps, store: StoreRecord, count: number): Promise<DispatchItem> => {
  const now = deps.clock.now();
  return wrapDependency('the dispatch state', () =>
    deps.dispatch.beginEnqueue(store.storeId, count, now, now + INGEST_WINDOW_MS),
  );
};

/** The send failed: this request is no longer in flight (best effort: its window ends it anyway). */
const abandonEnqueue = (deps: IngestDeps, store: StoreRecord): Promise<unknown> =>
  deps.dispatch
    .endEnqueue(store.storeId)
    .catch((error: unknown) =>
      deps.telemetry.warn('ingest end not recorded; its window ends it', { error: String(error) }),
    );

/**
 * After tasks are durable: end this request's write-ahead, then make sure one attention exists. Never
 * throws: the tasks are already accepted, and a failure here is repaired by the nudge below, by the next
 * task, or by the reconciler (the write-ahead left the store in the active index).
 *
 * A store that held no slot when the write-ahead landed (`begun`: an idle store, most activations) ends it and
 * gets its slot in one write (`endEnqueueIssuing`), a request less and one write less before its attention
 * goes out; refused (a concurrent ingest issued the slot first), the ingest ends as for a store with a slot.
 */
const signalAfterEnqueue = async (
  deps: IngestDeps,
  store: StoreRecord,
  correlationId: string,
  begun: DispatchItem,
): Promise<void> => {
  try {
    const consumable = isConsumable(store.status);
    const signal = { reason: 'ingest', priority: policyOf(store).priority, correlationId } as const;
    const endIssuing = (slotId: string, dueAt: number, now: number) =>
      deps.dispatch.endEnqueueIssuing(store.storeId, slotId, dueAt, now);
    if (consumable && Object.keys(begun.slots).length === 0)
      if (await issueAndPublish(deps, store.storeId, signal, endIssuing)) return;
    const item = await deps.dispatch.endEnqueue(store.storeId);
    if (!consumable) return;
    if (Object.keys(item.slots).length > 0) {
      deps.telemetry.count(MetricNames.attentionsCoalesced, 1, { reason: 'ingest' });
      return;
    }
    await signalStore(deps, store.storeId, { ...signal, limit: 1 });
  } catch (error) {
    deps.telemetry.count(MetricNames.signalFailures);
    deps.telemetry.error('signal after enqueue failed; publishing a nudge', {
      storeId: store.storeId,
      error: String(error),
    });
    try {
      await publishAttention(
        deps,
        store.storeId,
        ENSURE_SLOT,
        'repair',
        policyOf(store).priority,
        deps.clock.now(),
        correlationId,
      );
    } catch (nudgeError) {
      deps.telemetry.error('nudge failed; the reconciler will repair the active store', {
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
  encodedTaskBytes(task);
  const now = deps.clock.now();
  const begun = await enqueueAhead(deps, store, 1);
  try {
    await wrapDependency('the store queue', () =>
      deps.tasks.send(queueOf(store, task), toWorkMessage(store, task, now, request)),
    );
  } catch (error) {
    await abandonEnqueue(deps, store);
    throw error;
  }
  deps.telemetry.count(MetricNames.tasksAccepted, 1);
  await signalAfterEnqueue(deps, store, request.requestId, begun);
  return json(202, { storeId: store.storeId, eventId: task.eventId, status: 'accepted' });
};

/** How one task of a batch that the store queue did not take is reported (see SendFailure). */
const rejectionOf = (failure: SendFailure, index: number): Rejection['error'] => {
  if (failure.refused === 'too_large') {
    return { code: 'payload_too_large', message: `tasks[${index}]: too large for the store queue` };
  }
  if (failure.refused === 'content') {
    return { code: 'invalid_request', message: `tasks[${index}]: the store queue refused its content` };
  }
  return { code: 'dependency_unavailable', message: 'the store queue did not accept this task; retry it' };
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
  let batchBytes = 0;
  rawTasks.forEach((raw, index) => {
    try {
      if (Buffer.byteLength(JSON.stringify(raw), 'utf8') > MAX_TASK_BODY_BYTES) {
        throw new PayloadTooLargeError(MAX_TASK_BODY_BYTES, 'task');
      }
      const task = validate(TaskSchema, raw, ['tasks', index]);
      const bytes = encodedTaskBytes(task);
      if (seen.has(task.eventId)) {
        throw new ValidationError(`tasks[${index}].eventId: duplicates an earlier task in this batch`);
      }
      seen.add(task.eventId);
      batchBytes += bytes;
      valid.push({ task, index });
    } catch (error) {
      const err = error as ValidationError | PayloadTooLargeError;
      rejected.push({ eventId: eventIdOf(raw, index), error: { code: err.code, message: err.message } });
    }
  });
  if (batchBytes > MAX_BATCH_BODY_BYTES) {
    throw new PayloadTooLargeError(MAX_BATCH_BODY_BYTES, 'batch, once encoded,');
  }
  let accepted: string[] = [];
  if (valid.length > 0) {
    // One send per queue the batch touches (high first), all under one write-ahead: no lease can mark the
    // store idle until the last send is over, whichever queue took the tasks.
    const byQueue = new Map<string, { id: string; body: string }[]>(
      workQueuesOf(store).map((url) => [url, []]),
    );
    for (const { task, index } of valid) {
      const entry = { id: String(index), body: toWorkMessage(store, task, now, request) };
      byQueue.get(queueOf(store, task))?.push(entry);
    }
    const sends = [...byQueue].filter(([, entries]) => entries.length > 0);
    const begun = await enqueueAhead(deps, store, valid.length);
    const failed: SendFailure[] = [];
    for (const [url, entries] of sends) {
      // A queue that throws after an earlier one took its tasks must not hide those: they are accepted.
      const out = await deps.tasks.sendBatch(url, entries).catch((error: unknown) => ({
        failed: entries.map((e) => ({ id: e.id, message: String(error) })),
      }));
      failed.push(...out.failed);
    }
    const failures = new Map(failed.map((f) => [f.id, f]));
    for (const { task, index } of valid) {
      const failure = failures.get(String(index));
      if (failure) rejected.push({ eventId: task.eventId, error: rejectionOf(failure, index) });
    }
    accepted = valid.filter(({ index }) => !failures.has(String(index))).map(({ task }) => task.eventId);
    // Only a queue that was unavailable for every task is a 503; a task the queue refused for its own
    // content is that task's 4xx, which retrying would never change.
    if (accepted.length === 0) {
      await abandonEnqueue(deps, store);
      if (failed.some((f) => f.refused === undefined)) {
        throw new DependencyError('the store queue is unavailable; nothing was accepted');
      }
    } else {
      deps.telemetry.count(MetricNames.tasksAccepted, accepted.length);
      await signalAfterEnqueue(deps, store, request.requestId, begun);
    }
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
    // A delivered task's last error is an earlier attempt's: it no longer describes the task.
    ...(record?.lastError === undefined || record.status === 'delivered'
      ? {}
      : { lastError: record.lastError }),
  });
};
