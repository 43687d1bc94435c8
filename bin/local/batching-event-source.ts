import { ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { deleteDone, invokeWithRecords, type EventSourceQueue, type SqsHandler } from './sqs-event-source.js';

/**
 * Local stand-in for an SQS event source with a batching window (the confirm queue's, issue #11): `maxConcurrency`
 * lanes, each waiting (long polls) for a first record, then gathering more until `batchSize` records or the window
 * has passed since the first one, and invoking the handler once with all of them. Records the handler reports in
 * batchItemFailures (or all, if it throws) reappear after the queue's visibility timeout; the others are deleted.
 */
export interface BatchingEventSourceOptions {
  queue: EventSourceQueue;
  batchSize: number;
  /** How long a lane gathers after its first record (Lambda's MaximumBatchingWindowInSeconds). */
  windowMs: number;
  maxConcurrency: number;
  /** Long-poll wait for a first record; short enough that stop() returns promptly. */
  waitSeconds?: number;
  onError?: (error: unknown) => void;
}

export class BatchingEventSource {
  private running = false;
  private lanes: Promise<void>[] = [];
  /** Invocations made, records and those that failed, time inside the handler (for status output and the bench). */
  readonly stats = { invocations: 0, records: 0, failedRecords: 0, busyMs: 0 };

  constructor(
    private readonly sqs: SQSClient,
    private readonly handler: SqsHandler,
    readonly options: BatchingEventSourceOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lanes = Array.from({ length: this.options.maxConcurrency }, () => this.lane());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }

  private async lane(): Promise<void> {
    while (this.running) {
      try {
        const batch = await this.gather();
        if (batch.length === 0) continue;
        this.stats.invocations++;
        this.stats.records += batch.length;
        const outcome = await invokeWithRecords(
          this.handler,
          this.options.queue,
          batch,
          this.options.onError,
        );
        this.stats.busyMs += outcome.busyMs;
        this.stats.failedRecords += outcome.failed;
        await deleteDone(this.sqs, this.options.queue, outcome.done);
      } catch (error) {
        this.options.onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /**
   * A first record (one long poll), then more until the batch is full or the window since the first has passed:
   * at once while answers come full (a backlog), else a 1 s long poll while a second is left, else short polls a
   * tenth of a second apart. A receive that fails ends the gathering: what was gathered is invoked, not dropped.
   */
  private async gather(): Promise<Message[]> {
    const batch = await this.receive(this.options.waitSeconds ?? 1, this.options.batchSize);
    if (batch.length === 0) return batch;
    const closesAt = Date.now() + this.options.windowMs;
    let full = batch.length === 10;
    while (batch.length < this.options.batchSize && this.running) {
      const left = closesAt - Date.now();
      if (left <= 0) break;
      if (!full && left < 1_000) await new Promise((r) => setTimeout(r, Math.min(left, 100)));
      let more: Message[];
      try {
        more = await this.receive(!full && left >= 1_000 ? 1 : 0, this.options.batchSize - batch.length);
      } catch (error) {
        this.options.onError?.(error);
        break;
      }
      batch.push(...more);
      full = more.length === 10;
    }
    return batch;
  }

  private async receive(waitSeconds: number, wanted: number): Promise<Message[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queue.url,
        MaxNumberOfMessages: Math.min(10, wanted),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    return out.Messages ?? [];
  }
}
