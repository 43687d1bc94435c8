import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { attentionRoute, type AttentionMessage } from '../core/messages.js';
import type { StorePriority } from '../core/plans.js';
import type { AttentionPublisher } from '../core/ports.js';

/** The attention queue of each store priority level (the `normal` one is the original attention queue). */
export type AttentionQueueUrls = Readonly<Record<StorePriority, string>>;

/** One URL for every level: a deployment without level queues, where every attention shares one queue. */
export const singleAttentionQueue = (url: string): AttentionQueueUrls => ({
  high: url,
  normal: url,
  low: url,
});

export class SqsAttentionPublisher implements AttentionPublisher {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrls: AttentionQueueUrls,
    /** The confirm queue, where a slice hands an empty look (`confirm` attentions); absent: their level's queue. */
    private readonly confirmUrl?: string,
  ) {}

  async publish(message: AttentionMessage, delaySeconds: number): Promise<void> {
    const route = attentionRoute(message, this.confirmUrl !== undefined);
    await this.sqs.send(
      new SendMessageCommand({
        // The store's level picks the queue (an older publisher's message without one: `normal`), or the confirm queue.
        QueueUrl: route === 'confirm' ? (this.confirmUrl as string) : this.queueUrls[route],
        MessageBody: JSON.stringify(message),
        ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
      }),
    );
  }
}
