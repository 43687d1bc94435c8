import type { ReceivedMessage, TaskQueues } from './ports.js';
import type { StoreQueues } from './store-queues.js';

/** A received message and the store queue it came from: its delete, re-timing or re-send goes back there. */
export interface SourcedMessage extends ReceivedMessage {
  queueUrl: string;
}

export interface ReceiveOptions {
  /** At most this many messages in all. */
  want: number;
  /** The long poll of the "empty" decision. */
  emptyPollSeconds: number;
  /** Visibility for a receive starting now (the lease's remaining time and a margin). */
  visibilitySeconds: () => number;
}

/**
 * One batch for a slice, the store's high-priority queue first (task priority within a store):
 * 1. a short poll of the high queue (when the store has one) — one request more per batch of up to 10;
 * 2. if it is empty, a short poll of the work queue: a backlog answers at once;
 * 3. if both are empty, the "empty" decision: long polls of both queues at once. A short poll samples SQS's
 *    servers and can miss what a small queue holds, so each queue gets a long poll; run side by side, they
 *    take no longer than the work queue's alone did, and share `want` (high first in the batch).
 * `trickled`: the messages only arrived during the empty check.
 */
export const receiveBatch = async (
  tasks: TaskQueues,
  store: StoreQueues,
  opts: ReceiveOptions,
): Promise<{ batch: SourcedMessage[]; trickled: boolean }> => {
  const high = store.priorityQueueUrl;
  const receive = async (url: string, maxMessages: number, waitSeconds: number) =>
    (await tasks.receive(url, { maxMessages, waitSeconds, visibilitySeconds: opts.visibilitySeconds() })).map(
      (m): SourcedMessage => ({ ...m, queueUrl: url }),
    );
  if (high !== undefined) {
    const first = await receive(high, opts.want, 0);
    if (first.length > 0) return { batch: first, trickled: false };
  }
  const backlog = await receive(store.queueUrl, opts.want, 0);
  if (backlog.length > 0) return { batch: backlog, trickled: false };
  if (high === undefined) {
    const batch = await receive(store.queueUrl, opts.want, opts.emptyPollSeconds);
    return { batch, trickled: batch.length > 0 };
  }
  if (opts.want < 2) {
    // One message left to take: the two long polls one after the other (rare: a slice's last message).
    const first = await receive(high, 1, opts.emptyPollSeconds);
    const batch = first.length > 0 ? first : await receive(store.queueUrl, 1, opts.emptyPollSeconds);
    return { batch, trickled: batch.length > 0 };
  }
  // Side by side, `want` split between them: the slice never takes more than it may handle.
  const forHigh = Math.ceil(opts.want / 2);
  // Both settle before either's error goes on: the other, still polling, could hide messages after an early
  // failure, past the guard the slice's error path counts from when the failure came back.
  const [fromHigh, fromWork] = await Promise.allSettled([
    receive(high, forHigh, opts.emptyPollSeconds),
    receive(store.queueUrl, opts.want - forHigh, opts.emptyPollSeconds),
  ]);
  if (fromHigh.status === 'rejected') throw fromHigh.reason;
  if (fromWork.status === 'rejected') throw fromWork.reason;
  const batch = [...fromHigh.value, ...fromWork.value];
  return { batch, trickled: batch.length > 0 };
};

/** Messages grouped by the queue they came from, in first-seen order (one SQS batch call per queue). */
export const bySource = <T extends { queueUrl: string }>(messages: T[]): [string, T[]][] => {
  const groups = new Map<string, T[]>();
  for (const m of messages) groups.set(m.queueUrl, [...(groups.get(m.queueUrl) ?? []), m]);
  return [...groups];
};
