import type { ReceivedMessage, TaskQueues } from './ports.js';
import type { StoreQueues } from './store-queues.js';

/** A received message and the store queue it came from: its delete, re-timing or re-send goes back there. */
export interface SourcedMessage extends ReceivedMessage {
  queueUrl: string;
}

export interface ReceiveOptions {
  /** The batch the slice wants: at most this many messages in it. */
  want: number;
  /**
   * At most this many messages received in all, batch and rest (≥ `want`): what the slice may still handle
   * (`maxMessagesPerSlice`), where `want` may be smaller by the time left at its share of the rate.
   */
  budget: number;
  /** The long poll of the "empty" decision. */
  emptyPollSeconds: number;
  /**
   * The short polls answer for the slice: both empty, the receive hands the empty decision on (`handoff`) instead
   * of long-polling (a slice that will hand its slot to the confirm queue).
   */
  handoff?: boolean;
  /** Straight to the empty decision's long polls (a confirm slice's first receive: its short polls came before). */
  longFirst?: boolean;
  /** Visibility for a receive starting now (the lease's remaining time and a margin). */
  visibilitySeconds: () => number;
}

/** A receive's answer, kept as a value: a poll left running must not reject unobserved. */
export type PollAnswer = PromiseSettledResult<SourcedMessage[]>;

export interface ReceivedBatch {
  batch: SourcedMessage[];
  /** The messages only arrived during the empty check. */
  trickled: boolean;
  /** The short polls came back empty and the empty decision is handed on (`ReceiveOptions.handoff`). */
  handoff?: true;
  /**
   * The empty check's other long poll, not waited for: the slice settles it, and hands back what it took,
   * before it ends (`RestRules`).
   */
  rest?: Promise<PollAnswer>;
}

/**
 * How a slice ends with the empty check's other long poll still running: it waits for the poll's answer and
 * hands its messages back (or fails, forbidding idle while they may stay hidden) before its lease goes, so
 * the next slice cannot mark the store idle with them hidden. The rules as one value, so the simulation can
 * run a broken variant (sim/variants-receive.ts); the worker always runs REST_RULES.
 */
export interface RestRules {
  settle: (rest: Promise<PollAnswer>, handBack: (answer: PollAnswer) => Promise<void>) => Promise<void>;
}

export const REST_RULES: RestRules = {
  settle: async (rest, handBack) => handBack(await rest),
};

const settled = (poll: Promise<SourcedMessage[]>): Promise<PollAnswer> =>
  poll.then(
    (value): PollAnswer => ({ status: 'fulfilled', value }),
    (reason: unknown): PollAnswer => ({ status: 'rejected', reason }),
  );

/**
 * One batch for a slice, the store's high-priority queue first (task priority within a store):
 * 1. a short poll of the high queue (when the store has one) — one request more per batch of up to 10;
 * 2. if it is empty, a short poll of the work queue: a backlog answers at once;
 * 3. if both are empty and the slice hands the decision on (`handoff`), an empty batch that says so; otherwise
 *    the "empty" decision: long polls of both queues at once, `want` shared between them.
 *    A short poll samples SQS's servers and can miss what a small queue holds, so each queue gets a long poll.
 *    The first to bring messages is the batch at once (with the other's, when that has answered too); the
 *    other, still running, is the batch's `rest`. Waiting for both would hold a task that arrives on one queue
 *    until the other's poll ends (up to `emptyPollSeconds`), past a 1 s slice's deadline.
 *    An empty or failed first answer waits for the other: the check is "empty" only when both are.
 */
export const receiveBatch = async (
  tasks: TaskQueues,
  store: StoreQueues,
  opts: ReceiveOptions,
): Promise<ReceivedBatch> => {
  const high = store.priorityQueueUrl;
  const receive = async (url: string, maxMessages: number, waitSeconds: number) =>
    (await tasks.receive(url, { maxMessages, waitSeconds, visibilitySeconds: opts.visibilitySeconds() })).map(
      (m): SourcedMessage => ({ ...m, queueUrl: url }),
    );
  if (opts.longFirst !== true) {
    if (high !== undefined) {
      const first = await receive(high, opts.want, 0);
      if (first.length > 0) return { batch: first, trickled: false };
    }
    const backlog = await receive(store.queueUrl, opts.want, 0);
    if (backlog.length > 0) return { batch: backlog, trickled: false };
    if (opts.handoff === true) return { batch: [], trickled: false, handoff: true };
  }
  if (high === undefined) {
    const batch = await receive(store.queueUrl, opts.want, opts.emptyPollSeconds);
    return { batch, trickled: batch.length > 0 };
  }
  if (opts.budget < 2) {
    // One message left to handle: the two long polls one after the other, so the slice never receives more than
    // it may handle (rare: a slice's last message).
    const first = await receive(high, 1, opts.emptyPollSeconds);
    const batch = first.length > 0 ? first : await receive(store.queueUrl, 1, opts.emptyPollSeconds);
    return { batch, trickled: batch.length > 0 };
  }
  // `want` split between them, at least one each (within the budget): one call left in the slice's time still
  // races both polls, so a task arriving on either is taken at once (a store whose share of the rate is longer
  // than its slice wants one a batch).
  const forHigh = Math.max(1, Math.ceil(opts.want / 2));
  const highPoll = settled(receive(high, forHigh, opts.emptyPollSeconds));
  const workPoll = settled(receive(store.queueUrl, Math.max(1, opts.want - forHigh), opts.emptyPollSeconds));
  let highAnswer: PollAnswer | undefined;
  let workAnswer: PollAnswer | undefined;
  void highPoll.then((answer) => (highAnswer = answer));
  void workPoll.then((answer) => (workAnswer = answer));
  const highFirst = await Promise.race([highPoll.then(() => true), workPoll.then(() => false)]);
  const [first, other, otherPoll] = highFirst
    ? [highAnswer as PollAnswer, workAnswer, workPoll]
    : [workAnswer as PollAnswer, highAnswer, highPoll];
  if (first.status === 'fulfilled' && first.value.length > 0) {
    // The other's answer in too and the two fit `want`: one batch, high first.
    if (other?.status === 'fulfilled' && first.value.length + other.value.length <= opts.want) {
      const batch = highFirst ? [...first.value, ...other.value] : [...other.value, ...first.value];
      return { batch, trickled: true };
    }
    return { batch: first.value, trickled: true, rest: otherPoll };
  }
  // Both settle before either's error goes on: the other, still polling, could hide messages after an early
  // failure, past the guard the slice's error path counts from when the failure came back.
  const second = await otherPoll;
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return { batch: second.value, trickled: second.value.length > 0 };
};

/** Messages grouped by the queue they came from, in first-seen order (one SQS batch call per queue). */
export const bySource = <T extends { queueUrl: string }>(messages: T[]): [string, T[]][] => {
  const groups = new Map<string, T[]>();
  for (const m of messages) groups.set(m.queueUrl, [...(groups.get(m.queueUrl) ?? []), m]);
  return [...groups];
};
