import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  PurgeQueueInProgress,
  QueueDoesNotExist,
  QueueNameExists,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SetQueueAttributesCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import {
  redriveAllowPolicy,
  SqsQueueAdmin,
  tlsOnlyPolicy,
} from '../../../lambdas/adapters/sqs-queue-admin.js';
import { DEPLOYMENT_TAG_KEY } from '../../../lambdas/core/names.js';
import { STORE_QUEUE } from '../../../lambdas/config/topology.js';
import {
  answerQueueAttributes,
  DLQ_ARN,
  DLQ_URL,
  HIGH_QUEUE_ARN,
  HIGH_QUEUE_URL,
  QUEUE_ARN,
  QUEUE_URL,
  type Depths,
} from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const store = { queueUrl: QUEUE_URL, deadLetterQueueUrl: DLQ_URL };
const client = () => createAwsClients({ region: 'us-east-1' }).sqs;

const attributes = (depths: Depths) => answerQueueAttributes(sqs, depths);
/** What counts and pending ask of the work queue, and no more. */
const WORK_QUEUE_DEPTHS = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
];

beforeEach(() => {
  sqs.reset();
});

describe('SqsQueueAdmin.createStoreQueues', () => {
  const tags = { storeId: 'store-1', tenantId: 'tenant-1' };
  /** What the queues are tagged with: the use case's tags and the deployment's. */
  const queueTags = { ...tags, [DEPLOYMENT_TAG_KEY]: 'aq' };
  const dlqAttributes = {
    MessageRetentionPeriod: String(STORE_QUEUE.deadLetterRetentionSeconds),
    SqsManagedSseEnabled: 'true',
  };
  const queueAttributes = {
    MessageRetentionPeriod: String(STORE_QUEUE.retentionSeconds),
    VisibilityTimeout: String(STORE_QUEUE.visibilityTimeoutSeconds),
    SqsManagedSseEnabled: 'true',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 100 }),
    Policy: tlsOnlyPolicy(QUEUE_ARN),
  };
  /** The high-priority queue: the work queue's attributes, its own policy, the same DLQ. */
  const highQueueAttributes = { ...queueAttributes, Policy: tlsOnlyPolicy(HIGH_QUEUE_ARN) };
  const dlqPolicy = {
    QueueUrl: DLQ_URL,
    Attributes: {
      Policy: tlsOnlyPolicy(DLQ_ARN),
      RedriveAllowPolicy: redriveAllowPolicy(QUEUE_ARN, HIGH_QUEUE_ARN),
    },
  };

  beforeEach(() => {
    sqs.on(CreateQueueCommand, { QueueName: 'aq-d-store-1' }).resolves({ QueueUrl: DLQ_URL });
    sqs.on(CreateQueueCommand, { QueueName: 'aq-s-store-1' }).resolves({ QueueUrl: QUEUE_URL });
    sqs.on(CreateQueueCommand, { QueueName: 'aq-h-store-1' }).resolves({ QueueUrl: HIGH_QUEUE_URL });
    attributes({});
  });

  it('creates the DLQ first, then the work queue and the high-priority queue redriving to it, all encrypted and tagged', async () => {
    await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
    expect(sqs.commandCalls(CreateQueueCommand).map((c) => c.args[0].input)).toEqual([
      { QueueName: 'aq-d-store-1', Attributes: dlqAttributes, tags: queueTags },
      { QueueName: 'aq-s-store-1', Attributes: queueAttributes, tags: queueTags },
      { QueueName: 'aq-h-store-1', Attributes: highQueueAttributes, tags: queueTags },
    ]);
  });

  it('makes both queues refuse requests without TLS (the DLQ once its ARN is known)', async () => {
    await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
    expect(sqs.commandCalls(SetQueueAttributesCommand).map((c) => c.args[0].input)).toEqual([dlqPolicy]);
    expect(JSON.parse(queueAttributes.Policy)).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'DenyInsecureTransport',
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 'sqs:*',
          Resource: QUEUE_ARN,
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ],
    });
  });

  it('lets the DLQ take dead letters from its own work queues only (RedriveAllowPolicy)', async () => {
    await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
    const dlqUpdate = sqs.commandCalls(SetQueueAttributesCommand)[0]?.args[0].input;
    expect(JSON.parse(dlqUpdate?.Attributes?.['RedriveAllowPolicy'] ?? '{}')).toEqual({
      redrivePermission: 'byQueue',
      sourceQueueArns: [QUEUE_ARN, HIGH_QUEUE_ARN],
    });
  });

  it('leaves RedriveAllowPolicy out against the emulator (manual redrive mode), which refuses it', async () => {
    await new SqsQueueAdmin(client(), 'aq', 'manual').createStoreQueues('store-1', {
      maxReceiveCount: 100,
      tags,
    });
    expect(sqs.commandCalls(SetQueueAttributesCommand)[0]?.args[0].input.Attributes).not.toHaveProperty(
      'RedriveAllowPolicy',
    );
  });

  it('tags every queue with the deployment (the queue prefix)', async () => {
    await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
    expect(
      sqs.commandCalls(CreateQueueCommand).map((c) => c.args[0].input.tags?.[DEPLOYMENT_TAG_KEY]),
    ).toEqual(['aq', 'aq', 'aq']);
  });

  it('asks the DLQ for its ARN', async () => {
    await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ_URL,
      AttributeNames: ['QueueArn'],
    });
  });

  it('returns the three queue URLs', async () => {
    await expect(
      new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags }),
    ).resolves.toEqual({
      queueUrl: QUEUE_URL,
      deadLetterQueueUrl: DLQ_URL,
      priorityQueueUrl: HIGH_QUEUE_URL,
    });
  });

  it.each([
    ['QueueNameExists', new QueueNameExists({ message: 'exists', $metadata: {} })],
    [
      'QueueAlreadyExists (older protocol)',
      Object.assign(new Error('exists'), { name: 'QueueAlreadyExists' }),
    ],
  ])(
    'keeps an existing queue with other attributes (%s) and updates its attributes',
    async (_name, error) => {
      sqs
        .on(CreateQueueCommand, { QueueName: 'aq-s-store-1', Attributes: queueAttributes })
        .rejects(error as Error);
      await new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags });
      expect(sqs.commandCalls(SetQueueAttributesCommand).map((c) => c.args[0].input)).toEqual([
        dlqPolicy,
        { QueueUrl: QUEUE_URL, Attributes: queueAttributes },
      ]);
    },
  );

  it('lets any other CreateQueue error through', async () => {
    sqs.on(CreateQueueCommand).rejects(new Error('AccessDenied'));
    await expect(
      new SqsQueueAdmin(client(), 'aq').createStoreQueues('store-1', { maxReceiveCount: 100, tags }),
    ).rejects.toThrow('AccessDenied');
  });
});

describe('SqsQueueAdmin.counts', () => {
  it('reads visible, in-flight and delayed counts of the queue and the DLQ depth', async () => {
    attributes({ backlog: 5, inFlight: 2, delayed: 1, deadLetters: 3 });
    await expect(new SqsQueueAdmin(client(), 'aq').counts(store)).resolves.toEqual({
      backlog: 5,
      inFlight: 2,
      delayed: 1,
      deadLetters: 3,
    });
  });

  it('adds the high-priority queue counts to the work queue counts, one request more', async () => {
    attributes({ backlog: 5, inFlight: 2, delayed: 1, deadLetters: 3 });
    await expect(
      new SqsQueueAdmin(client(), 'aq').counts({ ...store, priorityQueueUrl: HIGH_QUEUE_URL }),
    ).resolves.toEqual({ backlog: 10, inFlight: 4, delayed: 2, deadLetters: 3 });
    expect(
      sqs
        .commandCalls(GetQueueAttributesCommand)
        .map((c) => c.args[0].input.QueueUrl)
        .sort(),
    ).toEqual([DLQ_URL, HIGH_QUEUE_URL, QUEUE_URL].sort());
  });

  it('asks only for the attributes it reads', async () => {
    attributes({});
    await new SqsQueueAdmin(client(), 'aq').counts(store);
    expect(sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input)).toEqual([
      {
        QueueUrl: QUEUE_URL,
        AttributeNames: WORK_QUEUE_DEPTHS,
      },
      { QueueUrl: DLQ_URL, AttributeNames: ['ApproximateNumberOfMessages'] },
    ]);
  });

  it('counts missing attributes as zero', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({});
    await expect(new SqsQueueAdmin(client(), 'aq').counts(store)).resolves.toEqual({
      backlog: 0,
      inFlight: 0,
      delayed: 0,
      deadLetters: 0,
    });
  });

  it('lets a missing queue fail the call', async () => {
    sqs.on(GetQueueAttributesCommand).rejects(new QueueDoesNotExist({ message: 'no queue', $metadata: {} }));
    await expect(new SqsQueueAdmin(client(), 'aq').counts(store)).rejects.toThrow('no queue');
  });
});

describe('SqsQueueAdmin.pending', () => {
  it('adds up visible, in-flight and delayed messages of the work queue', async () => {
    attributes({ backlog: 5, inFlight: 2, delayed: 1, deadLetters: 9 });
    await expect(new SqsQueueAdmin(client(), 'aq').pending(QUEUE_URL)).resolves.toBe(8);
  });

  it('makes one request, to the work queue only', async () => {
    attributes({});
    await new SqsQueueAdmin(client(), 'aq').pending(QUEUE_URL);
    expect(sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input)).toEqual([
      {
        QueueUrl: QUEUE_URL,
        AttributeNames: WORK_QUEUE_DEPTHS,
      },
    ]);
  });

  it('counts missing attributes as zero', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({});
    await expect(new SqsQueueAdmin(client(), 'aq').pending(QUEUE_URL)).resolves.toBe(0);
  });
});

describe('SqsQueueAdmin.redrive', () => {
  it('does nothing when the DLQ is empty', async () => {
    attributes({ deadLetters: 0 });
    const result = await new SqsQueueAdmin(client(), 'aq').redrive(store, 5);
    expect({ result, moves: sqs.commandCalls(StartMessageMoveTaskCommand).length }).toEqual({
      result: { moving: 0 },
      moves: 0,
    });
  });

  it('starts an SQS move task from the DLQ to the queue at the store’s rate', async () => {
    attributes({ deadLetters: 4 });
    await new SqsQueueAdmin(client(), 'aq').redrive(store, 7.9);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({
      SourceArn: DLQ_ARN,
      DestinationArn: QUEUE_ARN,
      MaxNumberOfMessagesPerSecond: 7,
    });
  });

  it('never asks for less than one message per second', async () => {
    attributes({ deadLetters: 4 });
    await new SqsQueueAdmin(client(), 'aq').redrive(store, 0.5);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input.MaxNumberOfMessagesPerSecond).toBe(
      1,
    );
  });

  it('answers with how many dead letters are being moved', async () => {
    attributes({ deadLetters: 4 });
    await expect(new SqsQueueAdmin(client(), 'aq').redrive(store, 5)).resolves.toEqual({ moving: 4 });
  });

  describe('manual mode (emulator)', () => {
    /** Starts a redrive of 2 dead letters and waits until its move has ended. */
    const moved = async (admin: SqsQueueAdmin): Promise<void> => {
      await expect(admin.redrive(store, 1000)).resolves.toEqual({ moving: 2 });
      await vi.waitFor(async () => expect(await admin.redriveRunning(store)).toBe(false));
    };
    beforeEach(() => {
      attributes({ deadLetters: 2 });
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            { MessageId: 'a', ReceiptHandle: 'rh-a', Body: 'task-a' },
            { MessageId: 'b', ReceiptHandle: 'rh-b', Body: 'task-b' },
          ],
        })
        .resolves({});
      sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
      sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    });

    it('does not start a move task', async () => {
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    });

    it('sends the dead letters back to the work queue', async () => {
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: '0', MessageBody: 'task-a' },
          { Id: '1', MessageBody: 'task-b' },
        ],
      });
    });

    it('deletes them from the DLQ only after sending them', async () => {
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      const order = sqs.calls().map((c) => c.args[0].constructor.name);
      expect({
        delete: sqs.commandCalls(DeleteMessageBatchCommand)[0]?.args[0].input,
        sentFirst: order.indexOf('SendMessageBatchCommand') < order.indexOf('DeleteMessageBatchCommand'),
      }).toEqual({
        delete: {
          QueueUrl: DLQ_URL,
          Entries: [
            { Id: '0', ReceiptHandle: 'rh-a' },
            { Id: '1', ReceiptHandle: 'rh-b' },
          ],
        },
        sentFirst: true,
      });
    });

    it('moves the dead letters counted when it started, not until the DLQ is empty: one refused again stays', async () => {
      // Every receive finds a dead letter: the marketplace refuses each moved task again at once.
      let n = 0;
      sqs.on(ReceiveMessageCommand).callsFake(() => {
        n++;
        return { Messages: [{ MessageId: `m${n}`, ReceiptHandle: `rh-${n}`, Body: `task-${n}` }] };
      });
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      const sent = sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? []);
      expect({
        receives: n,
        asked: sqs.commandCalls(ReceiveMessageCommand).map((c) => c.args[0].input.MaxNumberOfMessages),
        sent: sent.map((e) => e.MessageBody),
      }).toEqual({ receives: 2, asked: [2, 1], sent: ['task-1', 'task-2'] });
    });

    it('asks each receive for no more than it still has to move', async () => {
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.MaxNumberOfMessages).toBe(2);
    });

    it('says so when it ends short of its count (a letter hidden or gone meanwhile)', async () => {
      const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      sqs
        .on(ReceiveMessageCommand)
        .callsFake((input: { MaxNumberOfMessages?: number }) =>
          input.MaxNumberOfMessages === 2
            ? { Messages: [{ MessageId: 'a', ReceiptHandle: 'rh-a', Body: 'task-a' }] }
            : {},
        );
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect(warn.mock.calls).toEqual([
        [`manual redrive of ${DLQ_URL} moved 1 of the 2 dead letters it counted; redrive again for the rest`],
      ]);
      warn.mockRestore();
    });

    it("keeps to the store's rate: the next receive waits until the batch's messages are a rate's worth apart", async () => {
      attributes({ deadLetters: 4 });
      const receivedAt: number[] = [];
      let n = 0;
      sqs.on(ReceiveMessageCommand).callsFake(() => {
        receivedAt.push(Date.now());
        n += 2;
        return {
          Messages: [n - 1, n].map((i) => ({ MessageId: `m${i}`, ReceiptHandle: `rh-${i}`, Body: `t${i}` })),
        };
      });
      const admin = new SqsQueueAdmin(client(), 'aq', 'manual');
      await expect(admin.redrive(store, 10)).resolves.toEqual({ moving: 4 });
      await vi.waitFor(async () => expect(await admin.redriveRunning(store)).toBe(false));
      // Two messages at 10/s: 200 ms from the first batch's send to the second receive (a lower bound only).
      expect({
        receives: receivedAt.length,
        apart: (receivedAt[1] ?? 0) - (receivedAt[0] ?? 0) >= 190,
      }).toEqual({
        receives: 2,
        apart: true,
      });
    });

    it('says nothing when it moved them all', async () => {
      const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect(warn).not.toHaveBeenCalled();
      warn.mockRestore();
    });

    it('gives up once it received three times the count when its sends keep failing', async () => {
      sqs
        .on(ReceiveMessageCommand)
        .resolves({ Messages: [{ MessageId: 'a', ReceiptHandle: 'rh-a', Body: 'task-a' }] });
      sqs
        .on(SendMessageBatchCommand)
        .resolves({ Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] });
      await moved(new SqsQueueAdmin(client(), 'aq', 'manual'));
      expect({
        receives: sqs.commandCalls(ReceiveMessageCommand).length,
        deletes: sqs.commandCalls(DeleteMessageBatchCommand).length,
      }).toEqual({ receives: 6, deletes: 0 });
    });
  });
});

describe('SqsQueueAdmin.purge', () => {
  it('purges the queue it is given', async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    await new SqsQueueAdmin(client(), 'aq').purge(QUEUE_URL);
    expect(sqs.commandCalls(PurgeQueueCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: QUEUE_URL },
    ]);
  });

  it("answers 'purged' when SQS accepted it", async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    await expect(new SqsQueueAdmin(client(), 'aq').purge(QUEUE_URL)).resolves.toBe('purged');
  });

  it("answers 'in_progress' when SQS refuses a second purge within 60 s", async () => {
    sqs.on(PurgeQueueCommand).rejects(new PurgeQueueInProgress({ message: 'in progress', $metadata: {} }));
    await expect(new SqsQueueAdmin(client(), 'aq').purge(QUEUE_URL)).resolves.toBe('in_progress');
  });

  it('rethrows any other failure', async () => {
    sqs.on(PurgeQueueCommand).rejects(new QueueDoesNotExist({ message: 'gone', $metadata: {} }));
    await expect(new SqsQueueAdmin(client(), 'aq').purge(QUEUE_URL)).rejects.toBeInstanceOf(
      QueueDoesNotExist,
    );
  });
});
