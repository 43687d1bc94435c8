import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createAwsClients, type AwsClients } from '../../lambdas/adapters/aws-clients.js';
import { DynamoDeliveryLog } from '../../lambdas/adapters/dynamo-delivery-log.js';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { provision } from '../../bin/local/provision.js';
import { deliveryScenarios } from '../support/delivery-scenarios.js';
import { dispatchScenarios } from '../support/dispatch-scenarios.js';

/** The DynamoDB adapter's conditional writes, on DynamoDB Local, against the protocol's scenario table. */
describe('DynamoDispatchState and DynamoDeliveryLog on DynamoDB Local', () => {
  let clients: AwsClients;
  let state: DynamoDispatchState;
  let deliveries: DynamoDeliveryLog;

  beforeAll(async () => {
    clients = createAwsClients({
      region: 'us-east-1',
      dynamoEndpoint: inject('dynamoEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
    });
    const resources = await provision(clients.dynamo, clients.sqs, `c${randomBytes(4).toString('hex')}`);
    state = new DynamoDispatchState(clients.doc, resources.tables.dispatch);
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

  it.each(deliveryScenarios)('deliveries: %s', async (name, scenario, expected) => {
    const storeId = `d-${name.length}-${randomBytes(3).toString('hex')}`;
    expect(await scenario(deliveries, storeId)).toEqual(expected);
  });
});
