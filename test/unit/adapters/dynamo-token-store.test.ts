import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { encodeCursor } from '../../../lambdas/adapters/dynamo-dispatch-state.js';
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

  it('puts and reads back the usage key with the record', async () => {
    const withKey = { ...record, usageKey: 'k'.repeat(40) };
    await tokens.put(withKey);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toEqual(withKey);
    ddb.on(GetCommand).resolves({ Item: withKey });
    await expect(tokens.get(record.tokenHash)).resolves.toEqual(withKey);
  });

  it('reads a record written before usage keys as one without a usageKey field', async () => {
    ddb.on(GetCommand).resolves({ Item: record });
    const read = await tokens.get(record.tokenHash);
    expect(read && 'usageKey' in read).toBe(false);
  });

  it('rejects an empty usage key', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...record, usageKey: '' } });
    await expect(tokens.get(record.tokenHash)).rejects.toThrow();
  });

  it('returns undefined for an unknown hash', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(tokens.get('unknown')).resolves.toBeUndefined();
  });

  it('rejects a malformed record', async () => {
    ddb.on(GetCommand).resolves({ Item: { tokenHash: 'x', tenantId: 7 } });
    await expect(tokens.get('x')).rejects.toThrow();
  });

  it('reads back expiry and revocation times', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...record, expiresAt: T0 + 1, revokedAt: T0 + 2 } });
    await expect(tokens.get(record.tokenHash)).resolves.toEqual({
      ...record,
      expiresAt: T0 + 1,
      revokedAt: T0 + 2,
    });
  });

  it('lists a tenant’s tokens through the byTenant index, following pages', async () => {
    const second = { ...record, tokenHash: 'cd'.repeat(32) };
    ddb
      .on(QueryCommand)
      .resolvesOnce({
        Items: [record],
        LastEvaluatedKey: { tokenHash: record.tokenHash, tenantId: 'tenant-1' },
      })
      .resolvesOnce({ Items: [second] });
    await expect(tokens.listByTenant('tenant-1')).resolves.toEqual([record, second]);
    expect(ddb.commandCalls(QueryCommand).map((c) => c.args[0].input)).toEqual([
      {
        TableName: TABLES.tokens,
        IndexName: 'byTenant',
        KeyConditionExpression: '#tenant = :tenant',
        ExpressionAttributeNames: { '#tenant': 'tenantId' },
        ExpressionAttributeValues: { ':tenant': 'tenant-1' },
      },
      {
        TableName: TABLES.tokens,
        IndexName: 'byTenant',
        KeyConditionExpression: '#tenant = :tenant',
        ExpressionAttributeNames: { '#tenant': 'tenantId' },
        ExpressionAttributeValues: { ':tenant': 'tenant-1' },
        ExclusiveStartKey: { tokenHash: record.tokenHash, tenantId: 'tenant-1' },
      },
    ]);
  });

  it('moves an existing token’s end only earlier, with a conditional update', async () => {
    ddb.on(UpdateCommand).resolves({});
    await expect(tokens.amend(record.tokenHash, { expiresAt: T0 + 1000 })).resolves.toBe(true);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Key: { tokenHash: record.tokenHash },
      UpdateExpression: 'SET #expiresAt = :expiresAt',
      ConditionExpression:
        'attribute_exists(#key) AND (attribute_not_exists(#expiresAt) OR #expiresAt > :expiresAt)',
      ExpressionAttributeNames: { '#key': 'tokenHash', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: { ':expiresAt': T0 + 1000 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('revokes an existing token with a conditional update', async () => {
    ddb.on(UpdateCommand).resolves({});
    await expect(tokens.amend(record.tokenHash, { revokedAt: T0 })).resolves.toBe(true);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Key: { tokenHash: record.tokenHash },
      UpdateExpression: 'SET #revokedAt = :revokedAt',
      ConditionExpression: 'attribute_exists(#key)',
      ExpressionAttributeNames: { '#key': 'tokenHash', '#revokedAt': 'revokedAt' },
      ExpressionAttributeValues: { ':revokedAt': T0 },
    });
  });

  it('answers true, writing nothing, when the token already ends no later', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ ...record, expiresAt: T0 }));
    await expect(tokens.amend(record.tokenHash, { expiresAt: T0 + 3_600_000 })).resolves.toBe(true);
  });

  it('answers false when the token does not exist', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());
    await expect(tokens.amend(record.tokenHash, { revokedAt: T0 })).resolves.toBe(false);
    await expect(tokens.amend(record.tokenHash, { expiresAt: T0 })).resolves.toBe(false);
  });
});

describe('DynamoTokenStore.tenantsPage', () => {
  it('scans one page of the table for tenant ids only, each once, and hands back where to go on', async () => {
    ddb.on(ScanCommand).resolves({
      Items: [{ tenantId: 'a' }, { tenantId: 'b' }, { tenantId: 'a' }],
      LastEvaluatedKey: { tokenHash: 'cd'.repeat(32) },
    });
    const page = await tokens.tenantsPage(undefined, 50);
    expect({ page, input: ddb.commandCalls(ScanCommand)[0]?.args[0].input }).toEqual({
      page: { tenantIds: ['a', 'b'], cursor: encodeCursor({ tokenHash: 'cd'.repeat(32) }) },
      input: {
        TableName: TABLES.tokens,
        ProjectionExpression: '#tenant',
        ExpressionAttributeNames: { '#tenant': 'tenantId' },
        Limit: 50,
      },
    });
  });

  it('starts after the cursor it handed out, and ends without one', async () => {
    ddb.on(ScanCommand).resolves({ Items: [] });
    const page = await tokens.tenantsPage(encodeCursor({ tokenHash: 'cd'.repeat(32) }), 50);
    expect({ page, start: ddb.commandCalls(ScanCommand)[0]?.args[0].input.ExclusiveStartKey }).toEqual({
      page: { tenantIds: [] },
      start: { tokenHash: 'cd'.repeat(32) },
    });
  });

  it.each([
    ['not base64 JSON', '%%%'],
    ['another key', encodeCursor({ storeId: 's' })],
    ['an extra attribute', encodeCursor({ tokenHash: 'x', tenantId: 'y' })],
  ])('refuses a cursor that is %s with a 400, without scanning', async (_, cursor) => {
    await expect(tokens.tenantsPage(cursor, 50)).rejects.toMatchObject({ status: 400 });
    expect(ddb.commandCalls(ScanCommand)).toHaveLength(0);
  });
});
