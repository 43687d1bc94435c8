import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AttentionMessage } from '../core/messages.js';
import type { AttentionPublisher } from '../core/ports.js';

export class SqsAttentionPublisher implements AttentionPublisher {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(message: AttentionMessage, delaySeconds: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
      }),
    );
  }
}
