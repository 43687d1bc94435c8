import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { DynamoTokenStore } from '../../../lambdas/adapters/dynamo-token-store.js';
import { conditionFailed, T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
const record = { tokenHash: 'ab'.repeat(32), tenantId: 'tenant-1', createdAt: T0 };
let tokens: DynamoTokenStore;

beforeEach(() => {
  ddb.reset();
  tokens = new DynamoTokenStore(createAwsClients({ region: 'us-east-1' }).doc, TABLES.tokens);
});

describe('DynamoTokenStore', () => {
  it('puts a token record only if its hash is new', async () => {
    await tokens.put(record);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Item: record,
      ConditionExpression: 'attribute_not_exists(#key)',
      ExpressionAttributeNames: { '#key': 'tokenHash' },
    });
  });

  it('refuses to overwrite an existing hash', async () => {
    ddb.on(PutCommand).rejects(conditionFailed());
    await expect(tokens.put(record)).rejects.toThrow(ConditionalCheckFailedException);
  });

  it('gets a record by hash', async () => {
    ddb.on(GetCommand).resolves({ Item: record });
    await tokens.get(record.tokenHash);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Key: { tokenHash: record.tokenHash },
    });
  });

  it('returns the stored record', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...record, extra: 'ignored' } });
    await expect(tokens.get(record.tokenHash)).resolves.toEqual(record);
  });

  it('returns undefined for an unknown hash', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(tokens.get('unknown')).resolves.toBeUndefined();
  });

  it('rejects a malformed record', async () => {
    ddb.on(GetCommand).resolves({ Item: { tokenHash: 'x', tenantId: 7 } });
    await expect(tokens.get('x')).rejects.toThrow();
  });
});
