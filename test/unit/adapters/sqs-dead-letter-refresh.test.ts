import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { BatchFailureError, SqsTaskQueues } from '../../../lambdas/adapters/sqs-task-queues.js';
import { DLQ_URL, T0 } from '../support/fixtures.js';

/** SqsTaskQueues.refreshDeadLetters (dead-letter keep, issue #10) against a stubbed SQS. */
const sqs = mockClient(SQSClient);
let queues: SqsTaskQueues;
const OPTS = { maxMessages: 10, waitSeconds: 0, visibilitySeconds: 60, delaySeconds: 900 };

const letter = (i: number, extra: Partial<Message> = {}): Message => ({
  MessageId: `m${i}`,
  ReceiptHandle: `r${i}`,
  Body: `task-${i}`,
  Attributes: { SentTimestamp: String(T0 - i) },
  MessageAttributes: {
    errorCode: { DataType: 'String', StringValue: 'permanent', StringListValues: [], BinaryListValues: [] },
    attempts: { DataType: 'Number', StringValue: '3' },
  },
  ...extra,
});

beforeEach(() => {
  sqs.reset();
  sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  queues = new SqsTaskQueues(createAwsClients({ region: 'us-east-1' }).sqs);
});

describe('SqsTaskQueues.refreshDeadLetters', () => {
  it('receives with every message attribute and the SentTimestamp, hidden for the given visibility', async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    await queues.refreshDeadLetters(DLQ_URL, { ...OPTS, waitSeconds: 1 });
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ_URL,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      VisibilityTimeout: 60,
      MessageSystemAttributeNames: ['SentTimestamp'],
      MessageAttributeNames: ['All'],
    });
  });

  it('sends an empty DLQ’s answer back as nothing received, with no send', async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    expect(await queues.refreshDeadLetters(DLQ_URL, OPTS)).toEqual({ received: 0, sentAt: [] });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('copies each letter into the same DLQ with its body and attributes (type and value only), delayed', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [letter(1), letter(2, { MessageAttributes: {} })] });
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queues.refreshDeadLetters(DLQ_URL, OPTS);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ_URL,
      Entries: [
        {
          Id: '0',
          MessageBody: 'task-1',
          DelaySeconds: 900,
          MessageAttributes: {
            errorCode: { DataType: 'String', StringValue: 'permanent' },
            attempts: { DataType: 'Number', StringValue: '3' },
          },
        },
        { Id: '1', MessageBody: 'task-2', DelaySeconds: 900 },
      ],
    });
  });

  it('deletes the originals after their copies, and returns their SentTimestamps', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [letter(1), letter(2)] });
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const result = await queues.refreshDeadLetters(DLQ_URL, OPTS);
    expect({
      result,
      order: sqs.calls().map((c) => (c.args[0] as object).constructor.name),
      deleted: sqs
        .commandCalls(DeleteMessageBatchCommand)[0]
        ?.args[0].input.Entries?.map((e) => e.ReceiptHandle),
    }).toEqual({
      result: { received: 2, sentAt: [T0 - 1, T0 - 2] },
      order: ['ReceiveMessageCommand', 'SendMessageBatchCommand', 'DeleteMessageBatchCommand'],
      deleted: ['r1', 'r2'],
    });
  });

  it('keeps the original of a copy SQS refused (it reappears when its visibility ends)', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [letter(1), letter(2)] });
    sqs.on(SendMessageBatchCommand).resolves({
      Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false, Message: 'try again' }],
    });
    const result = await queues.refreshDeadLetters(DLQ_URL, OPTS);
    expect({
      result,
      deleted: sqs
        .commandCalls(DeleteMessageBatchCommand)[0]
        ?.args[0].input.Entries?.map((e) => e.ReceiptHandle),
    }).toEqual({ result: { received: 2, sentAt: [T0 - 2] }, deleted: ['r2'] });
  });

  it('deletes nothing when every copy was refused', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [letter(1)] });
    sqs.on(SendMessageBatchCommand).resolves({
      Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false, Message: 'try again' }],
    });
    expect(await queues.refreshDeadLetters(DLQ_URL, OPTS)).toEqual({ received: 1, sentAt: [] });
    expect(sqs.commandCalls(DeleteMessageBatchCommand)).toHaveLength(0);
  });

  it('splits the copies by body and attribute bytes under SQS’s 256 KiB batch limit', async () => {
    const big = 'x'.repeat(61 * 1024);
    const attrs = { errorMessage: { DataType: 'String', StringValue: 'e'.repeat(2 * 1024) } };
    sqs.on(ReceiveMessageCommand).resolves({
      Messages: [0, 1, 2, 3].map((i) => letter(i, { Body: big, MessageAttributes: attrs })),
    });
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queues.refreshDeadLetters(DLQ_URL, OPTS);
    // Four 61 KiB bodies fit 250 KiB; with their 2 KiB attributes they do not.
    expect(sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries?.length)).toEqual([
      3, 1,
    ]);
  });

  it('fails when an original cannot be deleted (its copy is sent: a duplicate, never a loss)', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [letter(1)] });
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    sqs.on(DeleteMessageBatchCommand).resolves({
      Failed: [{ Id: '0', Code: 'ReceiptHandleIsInvalid', SenderFault: true }],
    });
    await expect(queues.refreshDeadLetters(DLQ_URL, OPTS)).rejects.toBeInstanceOf(BatchFailureError);
  });
});
