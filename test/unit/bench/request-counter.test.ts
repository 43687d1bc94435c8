import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { dispatchWriteClass, instrument } from '../../../bench/pipeline/request-counter.js';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { DynamoDispatchState } from '../../../lambdas/adapters/dynamo-dispatch-state.js';
import { T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
const STORE = 'store-1';

/** The update expression the DynamoDB adapter sends for one write. */
const expressionOf = async (write: (state: DynamoDispatchState) => Promise<unknown>): Promise<string> => {
  ddb.reset();
  ddb
    .on(UpdateCommand)
    .resolves({ Attributes: { storeId: STORE, slots: {}, fence: 0, enqSeq: 0, tat: T0, tatSeq: 1 } });
  await write(new DynamoDispatchState(createAwsClients({ region: 'us-east-1' }).doc, TABLES.dispatch));
  return String(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression);
};

describe('the bench request counter', () => {
  it.each([
    {
      write: 'a block reservation (advanceTat)',
      run: (s: DynamoDispatchState) => s.advanceTat(STORE, 500, 5),
    },
    {
      write: 'a block reservation with its lateness',
      run: (s: DynamoDispatchState) => s.advanceTat(STORE, 500, 5, { ms: 500, deepFrom: T0 }),
    },
    { write: 'a restart (restartTat)', run: (s: DynamoDispatchState) => s.restartTat(STORE, T0, 500, 5) },
    {
      write: 'a restart with its lateness',
      run: (s: DynamoDispatchState) => s.restartTat(STORE, T0, 500, 5, 50),
    },
    {
      write: 'a lowering’s placement (placeTat)',
      run: (s: DynamoDispatchState) => s.placeTat(STORE, { tat: T0, seq: 1 }, T0 + 450, 500, 5, 50),
    },
    {
      write: 'a give-back (returnTat)',
      run: (s: DynamoDispatchState) => s.returnTat(STORE, { tat: T0, seq: 1 }, 300, 3),
    },
  ])('counts $write as a rate reservation', async ({ run }) => {
    expect(dispatchWriteClass(await expressionOf(run))).toBe('dispatch: rate reservations');
  });

  it.each([
    { write: 'a hold (holdTat)', run: (s: DynamoDispatchState) => s.holdTat(STORE, T0) },
    {
      write: 'an acquire',
      run: (s: DynamoDispatchState) => s.acquire(STORE, 'a', { now: T0, expiresAt: T0 + 1, max: 1 }),
    },
  ])('does not count $write as one', async ({ run }) => {
    expect(dispatchWriteClass(await expressionOf(run))).toBe('dispatch: leases and slots');
  });
});

describe('the bench request counter, on a BatchWriteItem', () => {
  it('counts one request and bills one write per item', async () => {
    const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
    const dynamo = new DynamoDBClient({ region: 'us-east-1', credentials });
    const sqs = new SQSClient({ region: 'us-east-1', credentials });
    const counter = instrument({ sqs, dynamo }, 'attention-url', { ...TABLES, tokens: 'tokens' });
    // Answers every request in place of the network, after the counter (initialize step) has seen it.
    dynamo.middlewareStack.add(
      () => async () => ({ output: { UnprocessedItems: {}, $metadata: {} }, response: {} }),
      {
        step: 'build',
      },
    );
    const put = (id: string) => ({ PutRequest: { Item: { deliveryKey: { S: id } } } });
    await dynamo.send(
      new BatchWriteItemCommand({ RequestItems: { [TABLES.deliveries]: [put('a'), put('b'), put('c')] } }),
    );
    const counts = counter.counts();
    expect([counts.dynamoWrites, counts.dynamoWriteUnits]).toEqual([1, 3]);
    expect(counts.byClass.get('delivery records')).toBe(1);
  });
});
