import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { DynamoDeliveryLog } from '../../../lambdas/adapters/dynamo-delivery-log.js';
import { DELIVERY_RECORD_TTL_SECONDS } from '../../../lambdas/config/topology.js';
import type { DeliveryRecord } from '../../../lambdas/core/ports.js';
import { T0, TABLES } from '../support/fixtures.js';

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

describe('DynamoDeliveryLog.record', () => {
  it('puts the record under the delivery key with a TTL past any redelivery', async () => {
    await log.record(delivered);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.deliveries,
      Item: {
        deliveryKey: 'store-1:evt-1',
        ...delivered,
        expiresAt: Math.floor(T0 / 1000) + DELIVERY_RECORD_TTL_SECONDS,
      },
    });
  });

  it('keeps the last error of a dead-lettered task', async () => {
    await log.record({ ...delivered, status: 'dead_lettered', lastError: 'marketplace_rejected: 422' });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      status: 'dead_lettered',
      lastError: 'marketplace_rejected: 422',
    });
  });

  it('keeps delivery records longer than the store queues keep messages', () => {
    expect(DELIVERY_RECORD_TTL_SECONDS).toBeGreaterThan(18 * 24 * 3600);
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
