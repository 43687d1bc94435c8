import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import {
  BatchFailureError,
  chunk,
  packBatches,
  SqsTaskQueues,
} from '../../../lambdas/adapters/sqs-task-queues.js';
import { DLQ_URL, QUEUE_URL, T0 } from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
let queues: SqsTaskQueues;

beforeEach(() => {
  sqs.reset();
  queues = new SqsTaskQueues(createAwsClients({ region: 'us-east-1' }).sqs);
});

afterEach(() => {
  vi.useRealTimers();
});

const entries = (n: number, body = 'x') => Array.from({ length: n }, (_, i) => ({ id: String(i), body }));

describe('chunk', () => {
  it('splits into pieces of at most the size, in order', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('of nothing is no piece', () => {
    expect(chunk([], 10)).toEqual([]);
  });
});

describe('packBatches', () => {
  it('puts at most 10 entries in a batch', () => {
    expect(packBatches(entries(25)).map((b) => b.length)).toEqual([10, 10, 5]);
  });

  it('starts a new batch before the bodies would pass 250 KiB', () => {
    expect(packBatches(entries(5, 'x'.repeat(100 * 1024))).map((b) => b.length)).toEqual([2, 2, 1]);
  });

  it('sends an entry larger than the byte budget alone rather than dropping it', () => {
    const big = { id: 'big', body: 'x'.repeat(300 * 1024) };
    expect(
      packBatches([{ id: 'a', body: 'a' }, big, { id: 'b', body: 'b' }]).map((b) => b.map((e) => e.id)),
    ).toEqual([['a'], ['big'], ['b']]);
  });

  it('counts bytes, not characters', () => {
    // 'é' is 2 bytes in UTF-8: two 70 KiB-character bodies are 280 KiB.
    expect(packBatches(entries(2, 'é'.repeat(70 * 1024))).map((b) => b.length)).toEqual([1, 1]);
  });
});

describe('SqsTaskQueues.send', () => {
  it('sends the body to the queue', async () => {
    await queues.send(QUEUE_URL, '{"a":1}');
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: '{"a":1}',
    });
  });

  it('lets a send failure through', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('queue does not exist'));
    await expect(queues.send(QUEUE_URL, '{}')).rejects.toThrow('queue does not exist');
  });

  const sqsError = (name: string, message: string) => Object.assign(new Error(message), { name });

  it('answers a refused character as a 400 naming the body, not a retryable dependency error', async () => {
    sqs.on(SendMessageCommand).rejects(sqsError('InvalidMessageContents', 'Invalid characters found'));
    await expect(queues.send(QUEUE_URL, '{}')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request',
      retryable: false,
      message: expect.stringMatching(/^body: /),
    });
  });

  it('answers a message over SQS’s size limit as a 413', async () => {
    sqs
      .on(SendMessageCommand)
      .rejects(sqsError('InvalidParameterValue', 'Reason: Message must be shorter than 262144 bytes.'));
    await expect(queues.send(QUEUE_URL, '{}')).rejects.toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
  });
});

describe('SqsTaskQueues.sendBatch', () => {
  it('sends SQS batches with the caller ids', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queues.sendBatch(QUEUE_URL, [
      { id: '0', body: 'a' },
      { id: '3', body: 'b' },
    ]);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      Entries: [
        { Id: '0', MessageBody: 'a' },
        { Id: '3', MessageBody: 'b' },
      ],
    });
  });

  it('sends 25 entries as three batches', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queues.sendBatch(QUEUE_URL, entries(25));
    expect(sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries?.length)).toEqual([
      10, 10, 5,
    ]);
  });

  it('reports the entries SQS failed', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [
        { Id: '1', Code: 'InternalError', SenderFault: false, Message: 'try again' },
        { Id: '2', Code: 'InvalidMessageContents', SenderFault: true },
      ],
    });
    await expect(queues.sendBatch(QUEUE_URL, entries(3))).resolves.toEqual({
      failed: [
        { id: '1', message: 'try again' },
        { id: '2', message: 'InvalidMessageContents', refused: 'content' },
      ],
    });
  });

  it.each([
    ['AWS.SimpleQueueService.InvalidMessageContents', 'Invalid characters found', 'content'],
    ['InvalidParameterValue', 'Reason: Message must be shorter than 262144 bytes.', 'too_large'],
    ['AWS.SimpleQueueService.BatchRequestTooLong', 'Batch requests cannot be longer', 'too_large'],
    ['InvalidParameterValue', 'Value -1 for parameter DelaySeconds is invalid', undefined],
  ])('marks a sender-fault entry %s (%s) as refused: %s', async (code, message, refused) => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '0', Code: code, SenderFault: true, Message: message }],
    });
    const { failed } = await queues.sendBatch(QUEUE_URL, entries(1));
    expect(failed[0]?.refused).toBe(refused);
  });

  it('never marks a server-fault entry as refused, whatever its code', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '0', Code: 'InvalidMessageContents', SenderFault: false, Message: 'x' }],
    });
    const { failed } = await queues.sendBatch(QUEUE_URL, entries(1));
    expect(failed[0]?.refused).toBeUndefined();
  });

  it('reports every entry of a batch whose call failed, and still sends the next batch', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .rejectsOnce(new Error('service unavailable'))
      .resolves({ Successful: [], Failed: [] });
    const result = await queues.sendBatch(QUEUE_URL, entries(12));
    expect({ failed: result.failed, calls: sqs.commandCalls(SendMessageBatchCommand).length }).toEqual({
      failed: entries(10).map((e) => ({ id: e.id, message: 'service unavailable' })),
      calls: 2,
    });
  });
});

describe('SqsTaskQueues.receive', () => {
  it('long-polls with the caller’s limits and asks for the receive count and sent time', async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    await queues.receive(QUEUE_URL, { maxMessages: 7, waitSeconds: 2, visibilitySeconds: 45 });
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MaxNumberOfMessages: 7,
      WaitTimeSeconds: 2,
      VisibilityTimeout: 45,
      MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
    });
  });

  it('maps the messages', async () => {
    sqs.on(ReceiveMessageCommand).resolves({
      Messages: [
        {
          MessageId: 'm1',
          ReceiptHandle: 'rh1',
          Body: '{"v":1}',
          Attributes: { ApproximateReceiveCount: '3', SentTimestamp: String(T0 - 1000) },
        },
      ],
    });
    await expect(
      queues.receive(QUEUE_URL, { maxMessages: 1, waitSeconds: 1, visibilitySeconds: 30 }),
    ).resolves.toEqual([
      { messageId: 'm1', receiptHandle: 'rh1', body: '{"v":1}', receiveCount: 3, sentAt: T0 - 1000 },
    ]);
  });

  it('treats a message without attributes as a first receive sent now', async () => {
    vi.useFakeTimers({ now: T0, toFake: ['Date'] });
    sqs
      .on(ReceiveMessageCommand)
      .resolves({ Messages: [{ MessageId: 'm1', ReceiptHandle: 'rh1', Body: 'b' }] });
    const [message] = await queues.receive(QUEUE_URL, {
      maxMessages: 1,
      waitSeconds: 1,
      visibilitySeconds: 30,
    });
    expect(message).toMatchObject({ receiveCount: 1, sentAt: T0 });
  });

  it('returns nothing for an empty receive', async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    await expect(
      queues.receive(QUEUE_URL, { maxMessages: 10, waitSeconds: 1, visibilitySeconds: 30 }),
    ).resolves.toEqual([]);
  });
});

describe('SqsTaskQueues.deleteBatch', () => {
  it('deletes in batches of 10', async () => {
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const handles = Array.from({ length: 11 }, (_, i) => `rh${i}`);
    await queues.deleteBatch(QUEUE_URL, handles);
    expect(sqs.commandCalls(DeleteMessageBatchCommand).map((c) => c.args[0].input)).toEqual([
      {
        QueueUrl: QUEUE_URL,
        Entries: handles.slice(0, 10).map((h, i) => ({ Id: String(i), ReceiptHandle: h })),
      },
      { QueueUrl: QUEUE_URL, Entries: [{ Id: '0', ReceiptHandle: 'rh10' }] },
    ]);
  });

  it('sends nothing for no handles', async () => {
    await queues.deleteBatch(QUEUE_URL, []);
    expect(sqs.calls()).toHaveLength(0);
  });

  it('throws a BatchFailureError when SQS fails some entries', async () => {
    sqs.on(DeleteMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '0', Code: 'ReceiptHandleIsInvalid', SenderFault: true, Message: 'expired' }],
    });
    const deletion = queues.deleteBatch(QUEUE_URL, ['rh0']);
    await expect(deletion).rejects.toThrow(BatchFailureError);
    await expect(deletion).rejects.toMatchObject({
      action: 'DeleteMessageBatch',
      failures: [{ id: '0', message: 'expired' }],
    });
  });
});

describe('SqsTaskQueues.changeVisibility', () => {
  it('changes visibility in batches of 10 with each entry’s own timeout', async () => {
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
    const changes = Array.from({ length: 12 }, (_, i) => ({ receiptHandle: `rh${i}`, seconds: i }));
    await queues.changeVisibility(QUEUE_URL, changes);
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand).map((c) => c.args[0].input)).toEqual([
      {
        QueueUrl: QUEUE_URL,
        Entries: changes
          .slice(0, 10)
          .map((c, i) => ({ Id: String(i), ReceiptHandle: c.receiptHandle, VisibilityTimeout: c.seconds })),
      },
      {
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: '0', ReceiptHandle: 'rh10', VisibilityTimeout: 10 },
          { Id: '1', ReceiptHandle: 'rh11', VisibilityTimeout: 11 },
        ],
      },
    ]);
  });
});

describe('SqsTaskQueues.deadLetter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ['Date'] });
  });

  it('sends the original body to the DLQ with the reason as message attributes', async () => {
    await queues.deadLetter(DLQ_URL, '{"v":1}', {
      code: 'marketplace_rejected',
      message: 'marketplace answered 422',
      lastStatus: 422,
      attempts: 2,
    });
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ_URL,
      MessageBody: '{"v":1}',
      MessageAttributes: {
        errorCode: { DataType: 'String', StringValue: 'marketplace_rejected' },
        errorMessage: { DataType: 'String', StringValue: 'marketplace answered 422' },
        attempts: { DataType: 'Number', StringValue: '2' },
        deadLetteredAt: { DataType: 'String', StringValue: new Date(T0).toISOString() },
        lastStatus: { DataType: 'Number', StringValue: '422' },
      },
    });
  });

  it('omits lastStatus when there was no HTTP answer', async () => {
    await queues.deadLetter(DLQ_URL, 'b', { code: 'retries_exhausted', message: 'timed out', attempts: 10 });
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes).not.toHaveProperty(
      'lastStatus',
    );
  });

  it('never sends an empty attribute value (SQS rejects it)', async () => {
    await queues.deadLetter(DLQ_URL, 'b', { code: 'x', message: '', attempts: 1 });
    expect(
      sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes?.['errorMessage'],
    ).toEqual({
      DataType: 'String',
      StringValue: '-',
    });
  });

  it('replaces characters SQS refuses in an attribute (a marketplace error quoting an emoji)', async () => {
    await queues.deadLetter(DLQ_URL, 'b', { code: 'x', message: 'bad title 😀\uFFFF', attempts: 1 });
    expect(
      sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes?.['errorMessage']?.StringValue,
    ).toBe('bad title \uFFFD\uFFFD\uFFFD');
  });

  it('truncates long messages to 1024 characters', async () => {
    await queues.deadLetter(DLQ_URL, 'b', { code: 'x', message: 'y'.repeat(5000), attempts: 1 });
    expect(
      sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageAttributes?.['errorMessage']?.StringValue,
    ).toHaveLength(1024);
  });
});

describe('SqsTaskQueues.resend', () => {
  const held = (n: number, body: string) =>
    Array.from({ length: n }, (_, i) => ({ receiptHandle: `rh-${i}`, body: `${i}${body}` }));

  it('sends delayed copies, then deletes only the originals whose copy was sent', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: '1', SenderFault: false, Code: 'x' }] });
    sqs.on(DeleteMessageBatchCommand).resolves({});
    await queues.resend(QUEUE_URL, held(3, 'task'), 30);
    expect({
      sent: sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries,
      deleted: sqs
        .commandCalls(DeleteMessageBatchCommand)[0]
        ?.args[0].input.Entries?.map((e) => e.ReceiptHandle),
    }).toEqual({
      sent: [
        { Id: '0', MessageBody: '0task', DelaySeconds: 30 },
        { Id: '1', MessageBody: '1task', DelaySeconds: 30 },
        { Id: '2', MessageBody: '2task', DelaySeconds: 30 },
      ],
      deleted: ['rh-0', 'rh-2'],
    });
  });

  it('keeps every batch of copies within SQS’s byte limit (ten 64 KiB tasks do not fit one)', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});
    sqs.on(DeleteMessageBatchCommand).resolves({});
    await queues.resend(QUEUE_URL, held(10, 'x'.repeat(60 * 1024)), 5);
    const batches = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries ?? []);
    const deleted = sqs
      .commandCalls(DeleteMessageBatchCommand)
      .flatMap((c) => c.args[0].input.Entries?.map((e) => e.ReceiptHandle) ?? []);
    expect({
      sizes: batches.map((b) => b.length),
      largest: Math.max(...batches.map((b) => b.reduce((n, e) => n + (e.MessageBody ?? '').length, 0))),
      deleted,
    }).toEqual({
      sizes: [4, 4, 2],
      largest: 4 * (60 * 1024 + 1),
      deleted: Array.from({ length: 10 }, (_, i) => `rh-${i}`),
    });
  });
});
