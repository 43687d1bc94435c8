import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { dispatchWriteClass } from '../../../bench/pipeline/request-counter.js';
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
    { write: 'a block reservation (advanceTat)', run: (s: DynamoDispatchState) => s.advanceTat(STORE, 500) },
    { write: 'a restart (restartTat)', run: (s: DynamoDispatchState) => s.restartTat(STORE, T0, 500) },
    {
      write: 'a give-back (returnTat)',
      run: (s: DynamoDispatchState) => s.returnTat(STORE, { tat: T0, seq: 1 }, 300),
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
