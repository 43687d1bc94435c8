import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../lambdas/app/ingest-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import {
  apiEvent,
  appOverrides,
  FULL_ENV,
  HIGH_QUEUE_URL,
  jsonCaller,
  QUEUE_URL,
  sequentialIds,
  storeRecord,
  TABLES,
} from '../support/fixtures.js';

/** Task priority within a store, at ingest: which queue each task goes to, and one bump after every send. */
const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);

const catalog = { eventId: 'cat-1', type: 'catalog.update', payload: { sku: 'SKU-1', title: 'Shoe' } };
const order = { eventId: 'ord-1', type: 'orders.sync', payload: { orderId: 'o-1' } };
const idleItem = { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {} };

const setup = (store: StoreRecord) => {
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: store });
  const { overrides } = appOverrides({ ids: sequentialIds('slot-1', 'slot-2') });
  return jsonCaller(createIngestHandler(loadConfig('ingest', FULL_ENV), overrides));
};
const withHighQueue = storeRecord({ priorityQueueUrl: HIGH_QUEUE_URL });

const one = (body: unknown) => apiEvent({ body: JSON.stringify(body) });
const batch = (tasks: unknown[], overrides: Partial<APIGatewayProxyEvent> = {}) =>
  apiEvent({
    body: JSON.stringify({ tasks }),
    resource: '/v1/stores/{storeId}/tasks/batch',
    path: '/v1/stores/store-1/tasks/batch',
    ...overrides,
  });
const queueOfSend = () => sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl;
const bodyOfSend = () => JSON.parse(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? '');

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(UpdateCommand).resolves({ Attributes: idleItem });
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
});

describe('one task', () => {
  it.each([
    ['orders.sync by its type’s default', order, HIGH_QUEUE_URL, 'high'],
    ['catalog.update by its type’s default', catalog, QUEUE_URL, 'normal'],
    ['catalog.update marked high', { ...catalog, priority: 'high' }, HIGH_QUEUE_URL, 'high'],
    ['orders.sync marked normal', { ...order, priority: 'normal' }, QUEUE_URL, 'normal'],
  ])('%s goes to its queue, carrying its priority', async (_name, task, queue, priority) => {
    await setup(withHighQueue)(one(task));
    expect({ queue: queueOfSend(), priority: bodyOfSend().priority }).toEqual({ queue, priority });
  });

  it('a store created before task priority (no high queue) takes a high task on its work queue', async () => {
    await setup(storeRecord())(one(order));
    expect(queueOfSend()).toBe(QUEUE_URL);
  });

  it('rejects a priority that is not high or normal, naming the field', async () => {
    const result = await setup(withHighQueue)(one({ ...order, priority: 'urgent' }));
    expect({ status: result.status, message: (result.body['error'] as { message: string }).message }).toEqual(
      {
        status: 400,
        message: expect.stringContaining('priority'),
      },
    );
  });
});

describe('a batch', () => {
  const tasks = [catalog, order, { ...catalog, eventId: 'cat-2' }];

  it('splits into one SendMessageBatch per queue, the high queue first, ids by position', async () => {
    await setup(withHighQueue)(batch(tasks));
    expect(
      sqs.commandCalls(SendMessageBatchCommand).map((c) => ({
        queue: c.args[0].input.QueueUrl,
        ids: c.args[0].input.Entries?.map((e) => e.Id),
      })),
    ).toEqual([
      { queue: HIGH_QUEUE_URL, ids: ['1'] },
      { queue: QUEUE_URL, ids: ['0', '2'] },
    ]);
  });

  it('writes ahead once for the whole batch, before the first send, and ends after the last', async () => {
    await setup(withHighQueue)(batch(tasks));
    const [ahead, end] = ddb.commandCalls(UpdateCommand);
    const sends = sqs.commandCalls(SendMessageBatchCommand);
    expect({
      n: ahead?.args[0].input.ExpressionAttributeValues?.[':n'],
      before: ahead?.calledBefore(sends[0]!),
      endAfter: end?.calledAfter(sends[1]!),
      end: end?.args[0].input.UpdateExpression,
    }).toEqual({ n: 3, before: true, endAfter: true, end: expect.stringContaining('ADD ingesting :minus') });
  });

  it('keeps the tasks one queue took when the other queue fails (they are accepted)', async () => {
    sqs.on(SendMessageBatchCommand, { QueueUrl: QUEUE_URL }).rejects(new Error('SQS unavailable'));
    const result = await setup(withHighQueue)(batch(tasks));
    expect({
      status: result.status,
      accepted: result.body['accepted'],
      rejected: (result.body['rejected'] as { eventId: string }[]).map((r) => r.eventId),
    }).toEqual({ status: 202, accepted: ['ord-1'], rejected: ['cat-1', 'cat-2'] });
  });

  it('sends a store without a high queue one batch, on its work queue', async () => {
    await setup(storeRecord())(batch(tasks));
    expect(sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([
      QUEUE_URL,
    ]);
  });
});
