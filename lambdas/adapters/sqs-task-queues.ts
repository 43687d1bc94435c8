import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type BatchResultErrorEntry,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  DeadLetterQueues,
  DeadLetterReason,
  ReceivedMessage,
  SendFailure,
  TaskQueues,
} from '../core/ports.js';
import { sqsSafeText } from '../core/sqs-text.js';
import { refusalError, refusalOf } from './sqs-refusals.js';

const SQS_BATCH_LIMIT = 10;
/** SendMessageBatch's payload ceiling (256 KiB), less room for attributes and the request's own framing. */
const SQS_BATCH_BYTES = 250 * 1024;

export const chunk = <T>(items: T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

const bodyBytes = (entry: { body: string }): number => Buffer.byteLength(entry.body, 'utf8');

/** Groups entries into SQS batches of at most 10 entries and SQS_BATCH_BYTES (of bodies, unless `sizeOf` says). */
export const packBatches = <T extends { body: string }>(
  entries: T[],
  sizeOf: (entry: T) => number = bodyBytes,
): T[][] => {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = sizeOf(entry);
    if (current.length > 0 && (current.length === SQS_BATCH_LIMIT || bytes + size > SQS_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
};

type EntryFailure = { id: string; message: string };

const failureOf = (f: BatchResultErrorEntry): EntryFailure => ({
  id: f.Id ?? '',
  message: f.Message ?? f.Code ?? 'failed',
});

export class BatchFailureError extends Error {
  constructor(
    readonly action: string,
    readonly failures: EntryFailure[],
  ) {
    super(`${action}: ${failures.length} entries failed (${failures[0]?.message ?? ''})`);
  }
}

/** The per-store work queues as ingest and the worker use them. */
export class SqsTaskQueues implements TaskQueues, DeadLetterQueues {
  constructor(private readonly sqs: SQSClient) {}

  async send(queueUrl: string, body: string): Promise<void> {
    try {
      await this.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    } catch (error) {
      const refused = refusalOf((error as Error).name, (error as Error).message);
      throw refused ? refusalError(refused) : error;
    }
  }

  async sendBatch(queueUrl: string, entries: { id: string; body: string }[]) {
    const failed: SendFailure[] = [];
    // Batches go out one after another: a failing queue fails fast instead of fanning out errors.
    for (const batch of packBatches(entries)) {
      try {
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((e) => ({ Id: e.id, MessageBody: e.body })),
          }),
        );
        for (const f of out.Failed ?? []) {
          const refused = f.SenderFault ? refusalOf(f.Code, f.Message) : undefined;
          failed.push({ ...failureOf(f), ...(refused ? { refused } : {}) });
        }
      } catch (error) {
        const refused = refusalOf((error as Error).name, (error as Error).message);
        for (const e of batch)
          failed.push({ id: e.id, message: (error as Error).message, ...(refused ? { refused } : {}) });
      }
    }
    return { failed };
  }

  async receive(
    queueUrl: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number },
  ): Promise<ReceivedMessage[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: opts.maxMessages,
        WaitTimeSeconds: opts.waitSeconds,
        VisibilityTimeout: opts.visibilitySeconds,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    return (out.Messages ?? []).map((m) => ({
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? '1'),
      sentAt: Number(m.Attributes?.SentTimestamp ?? Date.now()),
    }));
  }

  async deleteBatch(queueUrl: string, receiptHandles: string[]): Promise<void> {
    const failures: EntryFailure[] = [];
    for (const batch of chunk(receiptHandles, SQS_BATCH_LIMIT)) {
      const out = await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((handle, i) => ({ Id: String(i), ReceiptHandle: handle })),
        }),
      );
      failures.push(...(out.Failed ?? []).map(failureOf));
    }
    if (failures.length > 0) throw new BatchFailureError('DeleteMessageBatch', failures);
  }

  async changeVisibility(
    queueUrl: string,
    entries: { receiptHandle: string; seconds: number }[],
  ): Promise<void> {
    const failures: EntryFailure[] = [];
    for (const batch of chunk(entries, SQS_BATCH_LIMIT)) {
      const out = await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((e, i) => ({
            Id: String(i),
            ReceiptHandle: e.receiptHandle,
            VisibilityTimeout: e.seconds,
          })),
        }),
      );
      failures.push(...(out.Failed ?? []).map(failureOf));
    }
    // Like a failed delete: the slice must know, because those messages stay hidden until the lease ends.
    if (failures.length > 0) throw new BatchFailureError('ChangeMessageVisibilityBatch', failures);
  }

  async deadLetter(deadLetterQueueUrl: string, body: string, reason: DeadLetterReason): Promise<void> {
    // An error text can quote the marketplace's answer: characters SQS refuses must not fail the dead-letter.
    const attr = (value: string) => ({ DataType: 'String', StringValue: sqsSafeText(value.slice(0, 1024)) });
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MessageBody: body,
        MessageAttributes: {
          errorCode: attr(reason.code),
          errorMessage: attr(reason.message || '-'),
          attempts: { DataType: 'Number', StringValue: String(reason.attempts) },
          deadLetteredAt: attr(new Date().toISOString()),
          ...(reason.lastStatus === undefined
            ? {}
            : { lastStatus: { DataType: 'Number', StringValue: String(reason.lastStatus) } }),
          ...(reason.firstAttemptAt === undefined
            ? {}
            : { firstAttemptAt: attr(new Date(reason.firstAttemptAt).toISOString()) }),
          ...(reason.lastAttemptAt === undefined
            ? {}
            : { lastAttemptAt: attr(new Date(reason.lastAttemptAt).toISOString()) }),
        },
      }),
    );
  }

  async resend(
    queueUrl: string,
    messages: { receiptHandle: string; body: string }[],
    delaySeconds: number,
  ): Promise<void> {
    // Copies first, originals after: a crash in between leaves a duplicate (deduplicated), never a loss.
    // Packed by count and bytes: ten 64 KiB tasks would exceed SQS's 256 KiB batch limit.
    const entries = messages.map((m, i) => ({ id: String(i), body: m.body }));
    for (const batch of packBatches(entries)) {
      const out = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((e) => ({ Id: e.id, MessageBody: e.body, DelaySeconds: delaySeconds })),
        }),
      );
      const failed = new Set((out.Failed ?? []).map((f) => f.Id));
      // A copy that was not sent keeps its original, which reappears when its visibility ends.
      const sent = batch.filter((e) => !failed.has(e.id));
      if (sent.length > 0)
        await this.deleteBatch(
          queueUrl,
          sent.map((e) => (messages[Number(e.id)] as { receiptHandle: string }).receiptHandle),
        );
    }
  }
  async refreshDeadLetters(
    deadLetterQueueUrl: string,
    opts: { maxMessages: number; waitSeconds: number; visibilitySeconds: number; delaySeconds: number },
  ): Promise<{ received: number; sentAt: number[] }> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: opts.maxMessages,
        WaitTimeSeconds: opts.waitSeconds,
        VisibilityTimeout: opts.visibilitySeconds,
        MessageSystemAttributeNames: ['SentTimestamp'],
        // The dead letter's reason (errorCode, errorMessage, attempts, deadLetteredAt, …) travels with its copy.
        MessageAttributeNames: ['All'],
      }),
    );
    const received = out.Messages ?? [];
    const entries = received.map((m, i) => ({
      id: String(i),
      body: m.Body ?? '',
      attributes: copyableAttributes(m.MessageAttributes),
      receiptHandle: m.ReceiptHandle ?? '',
      sentAt: Number(m.Attributes?.SentTimestamp ?? 0),
    }));
    const sentAt: number[] = [];
    // Copies first, originals after (a crash leaves a duplicate dead letter, never a loss); packed by body
    // and attribute bytes: both count toward SQS's 256 KiB batch limit.
    for (const batch of packBatches(entries, (e) => bodyBytes(e) + attributeBytes(e.attributes))) {
      const sent = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: deadLetterQueueUrl,
          Entries: batch.map((e) => ({
            Id: e.id,
            MessageBody: e.body,
            DelaySeconds: opts.delaySeconds,
            ...(e.attributes ? { MessageAttributes: e.attributes } : {}),
          })),
        }),
      );
      const failed = new Set((sent.Failed ?? []).map((f) => f.Id));
      // A copy that was not sent keeps its original, which reappears when its visibility ends.
      const copied = batch.filter((e) => !failed.has(e.id));
      if (copied.length === 0) continue;
      await this.deleteBatch(
        deadLetterQueueUrl,
        copied.map((e) => e.receiptHandle),
      );
      sentAt.push(...copied.map((e) => e.sentAt));
    }
    return { received: received.length, sentAt };
  }
}

/** A received attribute as SendMessage takes it: its type and value only (the list fields are reserved). */
const copyableAttributes = (
  attributes: Record<string, MessageAttributeValue> | undefined,
): Record<string, MessageAttributeValue> | undefined => {
  if (!attributes || Object.keys(attributes).length === 0) return undefined;
  return Object.fromEntries(
    Object.entries(attributes).map(([name, a]) => [
      name,
      {
        DataType: a.DataType,
        ...(a.StringValue === undefined ? {} : { StringValue: a.StringValue }),
        ...(a.BinaryValue === undefined ? {} : { BinaryValue: a.BinaryValue }),
      },
    ]),
  );
};

/** What SQS counts of a message's attributes toward its size: each name, type and value. */
const attributeBytes = (attributes: Record<string, MessageAttributeValue> | undefined): number =>
  Object.entries(attributes ?? {}).reduce(
    (sum, [name, a]) =>
      sum +
      Buffer.byteLength(name, 'utf8') +
      Buffer.byteLength(a.DataType ?? '', 'utf8') +
      Buffer.byteLength(a.StringValue ?? '', 'utf8') +
      (a.BinaryValue?.byteLength ?? 0),
    0,
  );
