import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { STORE_PRIORITIES, type StorePriority } from '../../lambdas/core/plans.js';
import { eligibleLevels, LevelPicker, type PriorityShares } from '../../lambdas/core/priority-shares.js';

/**
 * Local stand-in for Lambda's SQS event sources on the attention queues: a pool of `maxConcurrency`
 * workers, each invocation with up to `batchSize` records; records the handler reports in
 * batchItemFailures (or all of them, if it throws) are left to reappear after the queue's visibility
 * timeout, the others are deleted.
 *
 * Store priority: one queue per level. A free worker asks the LevelPicker for the order to try the levels
 * (weighted fair on worker time, `shares`), short-polls them in that order and takes the first attention it
 * finds, so it never idles while any level has one (unused share flows to the others). Only when every
 * level is empty does it long-poll, one level per turn in rotation, so an idle pool wakes at once for the
 * level it waits on and within one wait for the others.
 */
export interface EventSourceQueue {
  url: string;
  arn: string;
}

export interface EventSourceOptions {
  /** Every level's queue (levels may share one queue). */
  queues: Readonly<Record<StorePriority, EventSourceQueue>>;
  shares: PriorityShares;
  /** Workers kept for `high` while the lower levels saturate the pool (`headroomWorkers`); 0 keeps none. */
  highHeadroom?: number;
  batchSize: number;
  maxConcurrency: number;
  /** Long-poll wait per receive when every level is empty; short enough that stop() returns promptly. */
  waitSeconds?: number;
  onError?: (error: unknown) => void;
}

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

const toRecord = (message: Message, arn: string): SQSRecord => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: 'local',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: arn,
  awsRegion: 'us-east-1',
});

/** One invocation's outcome: its records, those the handler reported failed, and how long it ran. */
export interface Invoked {
  done: SQSRecord[];
  failed: number;
  /** Time inside the handler: what Lambda bills as duration. */
  busyMs: number;
}

/**
 * One invocation as Lambda's event source makes it: the handler gets the records; those it reports in
 * batchItemFailures (all of them, if it throws) are left to reappear after the queue's visibility timeout.
 */
export const invokeWithRecords = async (
  handler: SqsHandler,
  queue: EventSourceQueue,
  messages: Message[],
  onError?: (error: unknown) => void,
): Promise<Invoked> => {
  const records = messages.map((m) => toRecord(m, queue.arn));
  let failed: Set<string>;
  const started = performance.now();
  try {
    const response = await handler({ Records: records });
    failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch (error) {
    onError?.(error);
    failed = new Set(records.map((r) => r.messageId));
  }
  const busyMs = performance.now() - started;
  return { done: records.filter((r) => !failed.has(r.messageId)), failed: failed.size, busyMs };
};

/** The event source deletes the records that succeeded once the invocation returned (batches of ≤ 10). */
export const deleteDone = async (
  sqs: SQSClient,
  queue: EventSourceQueue,
  done: SQSRecord[],
): Promise<void> => {
  for (let i = 0; i < done.length; i += 10)
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: done.slice(i, i + 10).map((r, j) => ({ Id: String(j), ReceiptHandle: r.receiptHandle })),
      }),
    );
};

export class SqsEventSource {
  private running = false;
  private lanes: Promise<void>[] = [];
  private readonly picker: LevelPicker;
  /** Lanes inside the handler now with an attention of `normal` or `low`. */
  private lowerBusy = 0;
  /**
   * Invocations made and records that failed, for status output and tests; invocations per level too;
   * `busyMs`: time spent inside the handler (what Lambda bills as duration), for the benchmark's GB-s.
   */
  readonly stats = {
    invocations: 0,
    records: 0,
    failedRecords: 0,
    busyMs: 0,
    byLevel: { high: 0, normal: 0, low: 0 } as Record<StorePriority, number>,
  };

  constructor(
    private readonly sqs: SQSClient,
    private readonly handler: SqsHandler,
    readonly options: EventSourceOptions,
  ) {
    this.picker = new LevelPicker(options.shares);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lanes = Array.from({ length: this.options.maxConcurrency }, (_, lane) => this.lane(lane));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }

  private async lane(lane: number): Promise<void> {
    let turn = lane;
    while (this.running) {
      try {
        const levels = this.levelsOpen();
        if (!(await this.takeByShare(levels)))
          await this.waitForAny(
            levels.length === 1 ? 'high' : (STORE_PRIORITIES[turn++ % 3] as StorePriority),
          );
      } catch (error) {
        this.options.onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** The levels this lane may take now: the last free lanes are kept for `high` (the headroom). */
  private levelsOpen(): StorePriority[] {
    return eligibleLevels(STORE_PRIORITIES, {
      workers: this.options.maxConcurrency,
      lowerBusy: this.lowerBusy,
      headroom: this.options.highHeadroom ?? 0,
    });
  }

  /** Tries the open levels in the picker's order with short polls; runs the first attention found. */
  private async takeByShare(levels: readonly StorePriority[]): Promise<boolean> {
    for (const level of this.picker.order(levels)) {
      const messages = await this.receive(level, 0);
      if (messages.length > 0) {
        await this.invoke(level, messages);
        return true;
      }
    }
    return false;
  }

  /** Every level was empty: wait on one (long poll) and run what arrives there. */
  private async waitForAny(level: StorePriority): Promise<void> {
    const messages = await this.receive(level, this.options.waitSeconds ?? 1);
    if (messages.length > 0) await this.invoke(level, messages);
  }

  private async receive(level: StorePriority, waitSeconds: number): Promise<Message[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queues[level].url,
        MaxNumberOfMessages: this.options.batchSize,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    return out.Messages ?? [];
  }

  private async invoke(level: StorePriority, messages: Message[]): Promise<void> {
    this.stats.invocations++;
    this.stats.byLevel[level]++;
    this.stats.records += messages.length;
    const charge = this.picker.begin(level);
    const lower = level !== 'high';
    if (lower) this.lowerBusy++;
    const startedAt = Date.now();
    let outcome: Invoked;
    try {
      outcome = await invokeWithRecords(
        this.handler,
        this.options.queues[level],
        messages,
        this.options.onError,
      );
    } finally {
      if (lower) this.lowerBusy--;
      this.picker.end(charge, Date.now() - startedAt);
    }
    this.stats.busyMs += outcome.busyMs;
    this.stats.failedRecords += outcome.failed;
    await deleteDone(this.sqs, this.options.queues[level], outcome.done);
  }
}
