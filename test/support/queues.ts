import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { AttentionMessage } from '../../lambdas/core/messages.js';

/** Exact counts (fauxqs counts exactly; on AWS these are approximate). */
export const queueDepth = async (
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ visible: number; inFlight: number; delayed: number }> => {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(out.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0),
  };
};

/** Receives and deletes every visible message of a queue; returns the attention bodies it removed. */
export const drainQueue = async (sqs: SQSClient, queueUrl: string): Promise<AttentionMessage[]> => {
  const removed: AttentionMessage[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return removed;
    removed.push(...messages.map((m) => JSON.parse(m.Body ?? '{}') as AttentionMessage));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
};

/** Drains every store priority level's attention queue (see drainQueue). */
export const drainAttentionQueues = async (
  sqs: SQSClient,
  urls: Readonly<Record<string, string>>,
): Promise<AttentionMessage[]> => {
  const removed: AttentionMessage[] = [];
  for (const url of new Set(Object.values(urls))) removed.push(...(await drainQueue(sqs, url)));
  return removed;
};
