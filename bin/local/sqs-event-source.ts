import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * Local stand-in for Lambda's SQS event source mapping: up to `maxConcurrency` concurrent invocations,
 * each with up to `batchSize` records; records the handler reports in batchItemFailures (or all of them,
 * if it throws) are left to reappear after the queue's visibility timeout, the others are deleted.
 */
export interface EventSourceOptions {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  maxConcurrency: number;
  /** Long-poll wait per receive; short enough that stop() returns promptly. */
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

export class SqsEventSource {
  private running = false;
  private lanes: Promise<void>[] = [];
  /**
   * Invocations made and records that failed, for status output and tests; `busyMs`: time spent inside
   * the handler (what Lambda bills as duration), for the benchmark's GB-s.
   */
  readonly stats = { invocations: 0, records: 0, failedRecords: 0, busyMs: 0 };

  constructor(
    private readonly sqs: SQSClient,
    private readonly handler: SqsHandler,
    readonly options: EventSourceOptions,
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
        await this.pollOnce();
      } catch (error) {
        this.options.onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async pollOnce(): Promise<void> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: this.options.batchSize,
        WaitTimeSeconds: this.options.waitSeconds ?? 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return;
    const records = messages.map((m) => toRecord(m, this.options.queueArn));
    this.stats.invocations++;
    this.stats.records += records.length;
    let failed: Set<string>;
    const started = performance.now();
    try {
      const response = await this.handler({ Records: records });
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      this.options.onError?.(error);
      failed = new Set(records.map((r) => r.messageId));
    }
    this.stats.busyMs += performance.now() - started;
    this.stats.failedRecords += failed.size;
    const done = records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0) {
      await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
  }
}
