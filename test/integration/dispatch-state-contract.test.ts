import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createAwsClients, type AwsClients } from '../../lambdas/adapters/aws-clients.js';
import { DynamoDeliveryLog } from '../../lambdas/adapters/dynamo-delivery-log.js';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { provision } from '../../bin/local/provision.js';
import { deliveryScenarios } from '../support/delivery-scenarios.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { backfillExpected, backfillScenario, dispatchScenarios } from '../support/dispatch-scenarios.js';
import { activeShardOf } from '../../lambdas/core/names.js';

/** The DynamoDB adapter's conditional writes, on DynamoDB Local, against the protocol's scenario table. */
describe('DynamoDispatchState and DynamoDeliveryLog on DynamoDB Local', () => {
  let clients: AwsClients;
  let state: DynamoDispatchState;
  let deliveries: DynamoDeliveryLog;
  let dispatchTable: string;

  beforeAll(async () => {
    clients = createAwsClients({
      region: 'us-east-1',
      dynamoEndpoint: inject('dynamoEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
    });
    const resources = await provision(clients.dynamo, clients.sqs, `c${randomBytes(4).toString('hex')}`);
    dispatchTable = resources.tables.dispatch;
    state = new DynamoDispatchState(clients.doc, dispatchTable);
    deliveries = new DynamoDeliveryLog(clients.doc, resources.tables.deliveries);
  });
  afterAll(() => {
    clients?.dynamo.destroy();
    clients?.sqs.destroy();
  });

  it.each(dispatchScenarios)('%s', async (name, scenario, expected) => {
    const storeId = `s-${name.length}-${randomBytes(3).toString('hex')}`;
    expect(await scenario(state, storeId)).toEqual(expected);
  });

  it('index backfill: lists the items marked active without headSentAt, page by page, and indexes them conditionally', async () => {
    // As the code before f267a90 wrote an active store: activeShard, activeSince, no headSentAt.
    const legacy = async (storeId: string) => {
      await clients.doc.send(
        new PutCommand({
          TableName: dispatchTable,
          Item: {
            storeId,
            enqSeq: 1,
            fence: 0,
            slots: {},
            activeShard: activeShardOf(storeId),
            activeSince: 0,
          },
        }),
      );
    };
    const prefix = `b${randomBytes(3).toString('hex')}`;
    expect(await backfillScenario(state, legacy, prefix)).toEqual(backfillExpected(prefix));
  });

  it.each(deliveryScenarios)('deliveries: %s', async (name, scenario, expected) => {
    const storeId = `d-${name.length}-${randomBytes(3).toString('hex')}`;
    expect(await scenario(deliveries, storeId)).toEqual(expected);
  });
});
