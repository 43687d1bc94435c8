import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoDeadLetterLedger } from '../../../lambdas/adapters/dynamo-dead-letter-ledger.js';

const ddb = mockClient(DynamoDBDocumentClient);
const ledger = () =>
  new DynamoDeadLetterLedger(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'dispatch');
const KEY = { storeId: '#dead-letters:s1' };

beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({});
});

describe('DynamoDeadLetterLedger', () => {
  it('counts a dead letter with an ADD on the store’s tally item, never on its dispatch item', async () => {
    await ledger().noteWritten('s1', 1_000);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'dispatch',
      Key: KEY,
      UpdateExpression: 'ADD written :one SET writtenAt = :now',
      ExpressionAttributeValues: { ':one': 1, ':now': 1_000 },
    });
  });

  it('settles the baseline without touching the worker’s count', async () => {
    await ledger().settle('s1', 4, 3);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toBe(
      'SET seenDepth = :depth, seenWritten = :written',
    );
  });

  it('reads a tally back', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...KEY, written: 3, writtenAt: 9, seenDepth: 1, seenWritten: 1 } });
    await expect(ledger().read('s1')).resolves.toEqual({
      written: 3,
      writtenAt: 9,
      seenDepth: 1,
      seenWritten: 1,
    });
  });

  it('reads a store never tallied as none', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(ledger().read('s1')).resolves.toBeUndefined();
  });

  it('reads a tally only the audit wrote as zero written', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...KEY, seenDepth: 2, seenWritten: 0 } });
    await expect(ledger().read('s1')).resolves.toEqual({ written: 0, seenDepth: 2, seenWritten: 0 });
  });

  it('reads the DLQ’s oldest-letter bound back (dead-letter keep)', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...KEY, written: 1, oldestAt: 0 } });
    await expect(ledger().read('s1')).resolves.toEqual({ written: 1, oldestAt: 0 });
  });

  it('sets the bound on the store’s tally item alone', async () => {
    await ledger().markOldest('s1', 5_000);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'dispatch',
      Key: KEY,
      UpdateExpression: 'SET oldestAt = :oldest',
      ExpressionAttributeValues: { ':oldest': 5_000 },
    });
  });
});
