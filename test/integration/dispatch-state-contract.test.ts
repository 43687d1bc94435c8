import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createAwsClients, type AwsClients } from '../../lambdas/adapters/aws-clients.js';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { provision } from '../../bin/local/provision.js';
import { dispatchScenarios } from '../support/dispatch-scenarios.js';

/** The DynamoDB adapter's conditional writes, on DynamoDB Local, against the protocol's scenario table. */
describe('DynamoDispatchState on DynamoDB Local', () => {
  let clients: AwsClients;
  let state: DynamoDispatchState;

  beforeAll(async () => {
    clients = createAwsClients({
      region: 'us-east-1',
      dynamoEndpoint: inject('dynamoEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
    });
    const resources = await provision(clients.dynamo, clients.sqs, `c${randomBytes(4).toString('hex')}`);
    state = new DynamoDispatchState(clients.doc, resources.tables.dispatch);
  });
  afterAll(() => {
    clients?.dynamo.destroy();
    clients?.sqs.destroy();
  });

  it.each(dispatchScenarios)('%s', async (name, scenario, expected) => {
    const storeId = `s-${name.length}-${randomBytes(3).toString('hex')}`;
    expect(await scenario(state, storeId)).toEqual(expected);
  });
});
