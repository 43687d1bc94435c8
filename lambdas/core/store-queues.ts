import type { StoreRecord } from './store-model.js';
import type { TaskPriority } from './task-schemas.js';

/**
 * Which of a store's work queues a task goes to, and which ones hold its pending tasks (task priority
 * within a store). A store created before task priority has no high queue until its next PUT or PATCH:
 * its high tasks go to its work queue meanwhile, in arrival order with the others.
 */
export type StoreQueues = Pick<StoreRecord, 'queueUrl' | 'priorityQueueUrl'>;

export const queueForPriority = (store: StoreQueues, priority: TaskPriority): string =>
  priority === 'high' && store.priorityQueueUrl !== undefined ? store.priorityQueueUrl : store.queueUrl;

/** The store's work queues, the high one first (the order a slice drains them in). */
export const workQueuesOf = (store: StoreQueues): string[] =>
  store.priorityQueueUrl === undefined ? [store.queueUrl] : [store.priorityQueueUrl, store.queueUrl];
