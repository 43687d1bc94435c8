import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import {
  singleAttentionQueue,
  SqsAttentionPublisher,
} from '../../../lambdas/adapters/sqs-attention-publisher.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { ATTENTION_URL, T0 } from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const message: AttentionMessage = {
  v: 1,
  storeId: 'store-1',
  slotId: 'slot-a',
  reason: 'ingest',
  issuedAt: T0,
};
let publisher: SqsAttentionPublisher;

beforeEach(() => {
  sqs.reset();
  publisher = new SqsAttentionPublisher(
    createAwsClients({ region: 'us-east-1' }).sqs,
    singleAttentionQueue(ATTENTION_URL),
  );
});

describe('SqsAttentionPublisher', () => {
  it('sends the attention as JSON to the attention queue', async () => {
    await publisher.publish(message, 0);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: ATTENTION_URL,
      MessageBody: JSON.stringify(message),
    });
  });

  it('delays the attention when asked', async () => {
    await publisher.publish(message, 120);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: ATTENTION_URL,
      MessageBody: JSON.stringify(message),
      DelaySeconds: 120,
    });
  });

  it.each([
    ['high', 'https://sqs/high'],
    ['normal', 'https://sqs/normal'],
    ['low', 'https://sqs/low'],
  ] as const)('sends a %s attention to that level’s queue', async (priority, url) => {
    const levels = new SqsAttentionPublisher(createAwsClients({ region: 'us-east-1' }).sqs, {
      high: 'https://sqs/high',
      normal: 'https://sqs/normal',
      low: 'https://sqs/low',
    });
    await levels.publish({ ...message, priority }, 0);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe(url);
  });

  it('sends an attention without a level (an older publisher’s) to the normal queue', async () => {
    const levels = new SqsAttentionPublisher(createAwsClients({ region: 'us-east-1' }).sqs, {
      high: 'https://sqs/high',
      normal: 'https://sqs/normal',
      low: 'https://sqs/low',
    });
    await levels.publish(message, 0);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe('https://sqs/normal');
  });

  it.each([
    ['a `confirm` attention goes to the confirm queue, whatever its level', 'confirm', 'https://sqs/confirm'],
    ['any other reason goes to its level’s queue', 'requeue', 'https://sqs/high'],
  ] as const)('%s', async (_, reason, url) => {
    const withConfirm = new SqsAttentionPublisher(
      createAwsClients({ region: 'us-east-1' }).sqs,
      { high: 'https://sqs/high', normal: 'https://sqs/normal', low: 'https://sqs/low' },
      'https://sqs/confirm',
    );
    await withConfirm.publish({ ...message, reason, priority: 'high' }, 0);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe(url);
  });

  it('sends a `confirm` attention to its level’s queue where no confirm queue is deployed', async () => {
    await publisher.publish({ ...message, reason: 'confirm' }, 0);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe(ATTENTION_URL);
  });

  it('lets a send failure through (the caller decides how to repair)', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('throttled'));
    await expect(publisher.publish(message, 0)).rejects.toThrow('throttled');
  });
});
