import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { DynamoDeliveryLog } from '../../../lambdas/adapters/dynamo-delivery-log.js';
import { DELIVERY_RECORD_TTL_SECONDS } from '../../../lambdas/config/topology.js';
import { UnsettledError, writeDelivered } from '../../../lambdas/core/delivered-settle.js';
import type { DeliveryRecord } from '../../../lambdas/core/ports.js';
import { conditionFailed, T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
let log: DynamoDeliveryLog;

const delivered: DeliveryRecord = {
  storeId: 'store-1',
  eventId: 'evt-1',
  status: 'delivered',
  attempts: 2,
  updatedAt: T0,
};

beforeEach(() => {
  ddb.reset();
  log = new DynamoDeliveryLog(createAwsClients({ region: 'us-east-1' }).doc, TABLES.deliveries);
});

const TTL = Math.floor(T0 / 1000) + DELIVERY_RECORD_TTL_SECONDS;

describe('DynamoDeliveryLog.claim', () => {
  it("claims the task with one conditional write: free, retrying (after a task-scope 429's retryAt), redriven, or a crashed attempt", async () => {
    ddb
      .on(UpdateCommand)
      .resolves({ Attributes: { deliveryKey: 'store-1:evt-1', ...delivered, status: 'processing' } });
    await log.claim('store-1', 'evt-1', { holder: 'h1', now: T0, until: T0 + 7_000, messageId: 'm1' });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.deliveries,
      Key: { deliveryKey: 'store-1:evt-1' },
      UpdateExpression:
        'SET storeId = :store, eventId = :event, #status = :processing, holder = :holder, claimUntil = :until, ' +
        'firstAttemptAt = if_not_exists(firstAttemptAt, :now), lastAttemptAt = :now, updatedAt = :now, #ttl = :ttl ' +
        'REMOVE deadMessageId, retryAt',
      ConditionExpression:
        'attribute_not_exists(#key) OR ' +
        '(#status = :pending AND (attribute_not_exists(retryAt) OR retryAt <= :now)) OR ' +
        '(#status = :dead AND (attribute_not_exists(deadMessageId) OR deadMessageId <> :message)) OR ' +
        '(#status = :processing AND claimUntil < :now)',
      ExpressionAttributeNames: { '#key': 'deliveryKey', '#status': 'status', '#ttl': 'expiresAt' },
      ExpressionAttributeValues: {
        ':store': 'store-1',
        ':event': 'evt-1',
        ':processing': 'processing',
        ':pending': 'pending',
        ':dead': 'dead_lettered',
        ':holder': 'h1',
        ':until': T0 + 7_000,
        ':message': 'm1',
        ':now': T0,
        ':ttl': TTL,
      },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('returns the record that refused the claim', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ deliveryKey: 'store-1:evt-1', ...delivered }));
    await expect(
      log.claim('store-1', 'evt-1', { holder: 'h1', now: T0, until: T0 + 1, messageId: 'm1' }),
    ).resolves.toEqual({
      ok: false,
      record: delivered,
    });
  });

  it('rethrows any other error', async () => {
    ddb.on(UpdateCommand).rejects(new Error('throttled'));
    await expect(
      log.claim('store-1', 'evt-1', { holder: 'h1', now: T0, until: T0 + 1, messageId: 'm1' }),
    ).rejects.toThrow('throttled');
  });
});

describe('DynamoDeliveryLog.settle', () => {
  it('settles only the holder’s claim, counting the attempt when a call was made', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', {
      status: 'pending',
      now: T0,
      countAttempt: true,
      lastError: 'x',
      lastStatus: 503,
    });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.deliveries,
      Key: { deliveryKey: 'store-1:evt-1' },
      UpdateExpression:
        'SET #status = :status, updatedAt = :now, #ttl = :ttl, lastError = :error, lastStatus = :lastStatus REMOVE holder, claimUntil ADD attempts :one',
      ConditionExpression: 'holder = :holder',
      ExpressionAttributeNames: { '#status': 'status', '#ttl': 'expiresAt' },
      ExpressionAttributeValues: {
        ':status': 'pending',
        ':now': T0,
        ':ttl': TTL,
        ':holder': 'h1',
        ':one': 1,
        ':error': 'x',
        ':lastStatus': 503,
      },
    });
  });

  it("writes a task-scope 429's retryAt with its pending settle, and only with a pending one", async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', {
      status: 'pending',
      now: T0,
      countAttempt: false,
      lastStatus: 429,
      retryAt: T0 + 3_000,
    });
    await log.settle('store-1', 'evt-1', 'h2', {
      status: 'stale',
      now: T0,
      countAttempt: false,
      retryAt: T0,
    });
    const [pending, stale] = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(pending?.UpdateExpression).toBe(
      'SET #status = :status, updatedAt = :now, #ttl = :ttl, lastStatus = :lastStatus, retryAt = :retryAt REMOVE holder, claimUntil',
    );
    expect(pending?.ExpressionAttributeValues).toMatchObject({ ':retryAt': T0 + 3_000 });
    expect(stale?.UpdateExpression).toBe(
      'SET #status = :status, updatedAt = :now, #ttl = :ttl REMOVE holder, claimUntil',
    );
    expect(stale?.ExpressionAttributeValues).not.toHaveProperty(':retryAt');
  });

  it('records the dead-lettered message only with a dead letter, never with another settle', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', {
      status: 'pending',
      now: T0,
      countAttempt: false,
      messageId: 'm9',
    });
    await log.settle('store-1', 'evt-1', 'h2', { status: 'dead_lettered', now: T0, countAttempt: false });
    for (const call of ddb.commandCalls(UpdateCommand))
      expect(call.args[0].input.UpdateExpression).not.toContain('deadMessageId');
  });

  it('does not count a call that was not made', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', { status: 'stale', now: T0, countAttempt: false });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toBe(
      'SET #status = :status, updatedAt = :now, #ttl = :ttl REMOVE holder, claimUntil',
    );
  });

  it('reports a claim that was taken over', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ deliveryKey: 'store-1:evt-1', ...delivered }));
    await expect(
      log.settle('store-1', 'evt-1', 'h1', { status: 'delivered', now: T0, countAttempt: true }),
    ).resolves.toBe(false);
  });

  it('keeps delivery records longer than the store queues keep messages', () => {
    expect(DELIVERY_RECORD_TTL_SECONDS).toBeGreaterThan(18 * 24 * 3600);
  });
});

describe('DynamoDeliveryLog entity versions', () => {
  it('reads the delivered version strongly consistently under its own key', async () => {
    ddb.on(GetCommand).resolves({ Item: { version: 4 } });
    await expect(log.deliveredVersion('store-1', 'sku-1')).resolves.toBe(4);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.deliveries,
      Key: { deliveryKey: 'v#store-1#sku-1' },
      ConsistentRead: true,
    });
  });

  const versionMark = {
    TableName: TABLES.deliveries,
    Key: { deliveryKey: 'v#store-1#sku-1' },
    UpdateExpression: 'SET version = :v, updatedAt = :now, #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(version) OR version <= :v',
    ExpressionAttributeNames: { '#ttl': 'expiresAt' },
    ExpressionAttributeValues: { ':v': 5, ':now': T0, ':ttl': TTL },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };

  it('marks a version with one conditional write that never lowers the mark', async () => {
    ddb.on(UpdateCommand).resolves({});
    await expect(log.markVersion('store-1', 'sku-1', 5, T0)).resolves.toEqual({ ok: true });
    expect(ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input)).toEqual([versionMark]);
  });

  it('refuses a lower version with the mark that stood in its way', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ version: 7 }));
    await expect(log.markVersion('store-1', 'sku-1', 5, T0)).resolves.toEqual({ ok: false, current: 7 });
  });

  it('settles delivered with one write on the record alone', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', { status: 'delivered', now: T0, countAttempt: true });
    expect(ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.Key)).toEqual([
      { deliveryKey: 'store-1:evt-1' },
    ]);
  });

  it('records the message a task was dead-lettered from', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', {
      status: 'dead_lettered',
      now: T0,
      countAttempt: true,
      messageId: 'm-7',
      deadAttempts: 4,
    });
    const input = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input).toMatchObject({
      UpdateExpression: expect.stringContaining('deadMessageId = :message'),
      ExpressionAttributeValues: expect.objectContaining({ ':message': 'm-7', ':deadAttempts': 4 }),
    });
    // Where a redrive's fresh attempt budget starts.
    expect(input?.UpdateExpression).toContain('deadAttempts = :deadAttempts');
  });

  it('leaves deadAttempts alone on a dead-letter settle that does not name it', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', { status: 'dead_lettered', now: T0, countAttempt: false });
    const input = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).not.toContain('deadAttempts');
    expect(input?.ExpressionAttributeValues).not.toHaveProperty(':deadAttempts');
  });

  it('writes no dead-letter fields on any other settle', async () => {
    ddb.on(UpdateCommand).resolves({});
    await log.settle('store-1', 'evt-1', 'h1', {
      status: 'pending',
      now: T0,
      countAttempt: true,
      messageId: 'm-7',
      deadAttempts: 4,
    });
    const input = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).not.toContain('deadAttempts');
    expect(input?.UpdateExpression).not.toContain('deadMessageId');
    expect(input?.ExpressionAttributeValues).not.toHaveProperty(':deadAttempts');
    expect(input?.ExpressionAttributeValues).not.toHaveProperty(':message');
  });
});

describe('DynamoDeliveryLog.get', () => {
  it('reads the record strongly consistently (the effect-once check)', async () => {
    ddb.on(GetCommand).resolves({});
    await log.get('store-1', 'evt-1');
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.deliveries,
      Key: { deliveryKey: 'store-1:evt-1' },
      ConsistentRead: true,
    });
  });

  it('returns the record without the table’s own fields', async () => {
    ddb.on(GetCommand).resolves({
      Item: { deliveryKey: 'store-1:evt-1', ...delivered, expiresAt: 123 },
    });
    await expect(log.get('store-1', 'evt-1')).resolves.toEqual(delivered);
  });

  it('returns undefined for a task never recorded', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(log.get('store-1', 'evt-1')).resolves.toBeUndefined();
  });

  it('rejects a record with an unknown status', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...delivered, status: 'lost' } });
    await expect(log.get('store-1', 'evt-1')).rejects.toThrow();
  });
});

describe('DynamoDeliveryLog.settleDelivered', () => {
  const claimed: DeliveryRecord = {
    storeId: 'store-1',
    eventId: 'evt-1',
    status: 'processing',
    attempts: 1,
    lastError: 'marketplace answered 503',
    lastStatus: 503,
    firstAttemptAt: T0 - 60_000,
    lastAttemptAt: T0 - 1_000,
    holder: 'h1',
    claimUntil: T0 + 10_000,
    updatedAt: T0 - 1_000,
  };
  const settle = (eventId: string) => ({
    storeId: 'store-1',
    eventId,
    claimed: { ...claimed, eventId },
    now: T0,
  });

  it('writes a batch of delivered records in one BatchWriteItem of whole items, the claim’s fields carried', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const left = await log.settleDelivered([settle('evt-1'), settle('evt-2')]);
    const item = (eventId: string) => ({
      PutRequest: {
        Item: {
          deliveryKey: `store-1:${eventId}`,
          storeId: 'store-1',
          eventId,
          status: 'delivered',
          attempts: 2,
          lastError: 'marketplace answered 503',
          lastStatus: 503,
          firstAttemptAt: T0 - 60_000,
          lastAttemptAt: T0 - 1_000,
          updatedAt: T0,
          expiresAt: TTL,
        },
      },
    });
    expect({ left, calls: ddb.commandCalls(BatchWriteCommand).map((c) => c.args[0].input) }).toEqual({
      left: [],
      calls: [{ RequestItems: { [TABLES.deliveries]: [item('evt-1'), item('evt-2')] } }],
    });
  });

  it('answers the items DynamoDB left unprocessed, for the caller to try again', async () => {
    ddb.on(BatchWriteCommand).resolves({
      UnprocessedItems: {
        [TABLES.deliveries]: [
          { PutRequest: { Item: { deliveryKey: 'store-1:evt-2', status: 'delivered' } } },
        ],
      },
    });
    const second = settle('evt-2');
    expect(await log.settleDelivered([settle('evt-1'), second])).toEqual([second]);
  });

  it('names one key once: two 2xx for one task are one item', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    await log.settleDelivered([settle('evt-1'), { ...settle('evt-1'), now: T0 + 5 }]);
    const items = ddb.commandCalls(BatchWriteCommand)[0]?.args[0].input.RequestItems?.[TABLES.deliveries];
    expect(items?.map((i) => i.PutRequest?.Item?.['updatedAt'])).toEqual([T0 + 5]);
  });
});

describe('writeDelivered over DynamoDB', () => {
  it('tries UnprocessedItems again with a growing wait until every item is written', async () => {
    ddb
      .on(BatchWriteCommand)
      .resolvesOnce({
        UnprocessedItems: {
          [TABLES.deliveries]: [{ PutRequest: { Item: { deliveryKey: 'store-1:evt-1' } } }],
        },
      })
      .resolves({});
    const sleeps: number[] = [];
    await writeDelivered({ deliveries: log, clock: { sleep: async (ms) => void sleeps.push(ms) } }, [
      { storeId: 'store-1', eventId: 'evt-1', claimed: { ...delivered, status: 'processing' }, now: T0 },
      { storeId: 'store-1', eventId: 'evt-2', claimed: { ...delivered, status: 'processing' }, now: T0 },
    ]);
    const sent = ddb
      .commandCalls(BatchWriteCommand)
      .map((c) =>
        c.args[0].input.RequestItems?.[TABLES.deliveries]?.map((i) => i.PutRequest?.Item?.['eventId']),
      );
    expect({ sent, sleeps }).toEqual({ sent: [['evt-1', 'evt-2'], ['evt-1']], sleeps: [200] });
  });

  it('splits more than 25 settles into requests of at most 25 (BatchWriteItem’s limit)', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const settles = Array.from({ length: 30 }, (_, i) => ({
      storeId: 'store-1',
      eventId: `evt-${i}`,
      claimed: delivered,
      now: T0,
    }));
    await writeDelivered({ deliveries: log, clock: { sleep: async () => undefined } }, settles);
    expect(
      ddb
        .commandCalls(BatchWriteCommand)
        .map((c) => c.args[0].input.RequestItems?.[TABLES.deliveries]?.length),
    ).toEqual([25, 5]);
  });

  it('gives up after three tries, naming the items still unwritten', async () => {
    ddb.on(BatchWriteCommand).rejects(new Error('ProvisionedThroughputExceededException'));
    const settles = [{ storeId: 'store-1', eventId: 'evt-1', claimed: delivered, now: T0 }];
    const failure = await writeDelivered(
      { deliveries: log, clock: { sleep: async () => undefined } },
      settles,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect({
      unsettled: (failure as UnsettledError).unsettled,
      calls: ddb.commandCalls(BatchWriteCommand).length,
    }).toEqual({ unsettled: settles, calls: 3 });
  });
});
