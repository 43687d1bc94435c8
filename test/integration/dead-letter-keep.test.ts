import { CreateQueueCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAwsClients } from '../../lambdas/adapters/aws-clients.js';
import { SqsTaskQueues } from '../../lambdas/adapters/sqs-task-queues.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { deadLetterTallyId, MetricNames } from '../../lambdas/core/names.js';
import { sleep, startTestStack, type TestStack } from '../support/harness.js';

/**
 * Dead-letter keep (issue #10) on fauxqs: a dead letter written as the worker writes it (SqsTaskQueues.deadLetter)
 * is re-sent into its DLQ by the real adapter — same body, same reason attributes, a new SentTimestamp — and
 * the reconciler's sweep does it for a store's DLQ whose letters' bound is a refresh age old, once.
 */
const COPY_DELAY_SECONDS = 2;
const REASON = {
  code: 'permanent',
  message: 'sku unknown',
  lastStatus: 422,
  attempts: 3,
  firstAttemptAt: 1_000,
};

const attributesOf = (m: Message | undefined) =>
  Object.fromEntries(
    Object.entries(m?.MessageAttributes ?? {}).map(([name, a]) => [name, [a.DataType, a.StringValue]]),
  );

describe('dead-letter keep: the adapter on fauxqs', () => {
  const { sqs } = createAwsClients({ region: 'us-east-1', sqsEndpoint: inject('sqsEndpoint') });
  const queues = new SqsTaskQueues(sqs);
  const receiveAll = (url: string) =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['SentTimestamp'],
        MessageAttributeNames: ['All'],
        VisibilityTimeout: 0,
      }),
    );

  it('re-sends a dead letter with its body and reason, as a fresh message with a new SentTimestamp', async () => {
    const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: `keep-${Date.now()}` }));
    if (!url) throw new Error('no queue url');
    await queues.deadLetter(url, '{"eventId":"e1"}', REASON);
    const [before] = (await receiveAll(url)).Messages ?? [];
    await sleep(20);
    const result = await queues.refreshDeadLetters(url, {
      maxMessages: 10,
      waitSeconds: 0,
      visibilitySeconds: 30,
      delaySeconds: 0,
    });
    const after = (await receiveAll(url)).Messages ?? [];
    expect({
      result,
      count: after.length,
      body: after[0]?.Body,
      attributes: attributesOf(after[0]),
      newMessage: after[0]?.MessageId !== before?.MessageId,
      later: Number(after[0]?.Attributes?.SentTimestamp) > Number(before?.Attributes?.SentTimestamp),
    }).toEqual({
      result: { received: 1, sentAt: [Number(before?.Attributes?.SentTimestamp)] },
      count: 1,
      body: '{"eventId":"e1"}',
      attributes: attributesOf(before),
      newMessage: true,
      later: true,
    });
    // The reason the worker wrote is what travels (not an empty set compared with an empty set).
    expect(Object.keys(attributesOf(after[0])).sort()).toEqual([
      'attempts',
      'deadLetteredAt',
      'errorCode',
      'errorMessage',
      'firstAttemptAt',
      'lastStatus',
    ]);
  });
});

describe('dead-letter keep: the reconciler’s sweep on the emulators', () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await startTestStack({
      reconcileIntervalMs: 3_600_000,
      settings: {
        [EnvNames.refreshAgeSeconds]: '60',
        [EnvNames.refreshCopyDelaySeconds]: String(COPY_DELAY_SECONDS),
      },
    });
    await t.createStore('kept', { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('re-sends the letters of a DLQ whose bound is a refresh age old, once, and keeps their reason', async () => {
    const store = await t.storeRecord('kept');
    if (!store) throw new Error('no store');
    const queues = new SqsTaskQueues(t.stack.clients.sqs);
    await queues.deadLetter(store.deadLetterQueueUrl, '{"eventId":"k1"}', REASON);
    // Its letters may be as old as the epoch (the refresh age here is a minute, not 7 days).
    await t.stack.clients.doc.send(
      new UpdateCommand({
        TableName: t.stack.resources.tables.dispatch,
        Key: { storeId: deadLetterTallyId('kept') },
        UpdateExpression: 'SET oldestAt = :epoch',
        ExpressionAttributeValues: { ':epoch': 0 },
      }),
    );
    const first = await t.stack.reconcileNow();
    // The copy is delayed; a second run sees the raised bound and leaves the DLQ alone.
    const second = await t.stack.reconcileNow();
    await sleep(COPY_DELAY_SECONDS * 1000 + 200);
    const letters =
      (
        await t.stack.clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: store.deadLetterQueueUrl,
            MaxNumberOfMessages: 10,
            MessageAttributeNames: ['All'],
          }),
        )
      ).Messages ?? [];
    expect({
      refreshed: [first.deadLettersRefreshed, second.deadLettersRefreshed],
      metric: t.stack.telemetry.total(MetricNames.deadLettersRefreshed, { age: 'recent' }),
      letters: letters.map((m) => [m.Body, attributesOf(m)['errorCode']]),
    }).toEqual({
      refreshed: [1, 0],
      metric: 1,
      letters: [['{"eventId":"k1"}', ['String', 'permanent']]],
    });
  });
});
