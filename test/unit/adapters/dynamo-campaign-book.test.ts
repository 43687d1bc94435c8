import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { CachedCampaignBook, DynamoCampaignBook } from '../../../lambdas/adapters/dynamo-campaign-book.js';
import type { Campaign } from '../../../lambdas/core/campaigns.js';

const ddb = mockClient(DynamoDBDocumentClient);
const doc = createAwsClients({ region: 'us-east-1' }).doc;
const campaign: Campaign = {
  campaignId: 'bf',
  from: '2026-11-27T00:00:00.000Z',
  until: '2026-11-30T00:00:00.000Z',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
};

beforeEach(() => ddb.reset());

describe('DynamoCampaignBook', () => {
  const book = () => new DynamoCampaignBook(doc, 'dispatch-table');

  it('reads a list consistently under its reserved id, and none as revision 0', async () => {
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: { storeId: '#campaigns:tenant:t1', rev: 2, campaigns: [campaign] } });
    await expect(book().read({ scope: 'tenant', id: 't1' })).resolves.toEqual({
      rev: 2,
      campaigns: [campaign],
    });
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'dispatch-table',
      Key: { storeId: '#campaigns:tenant:t1' },
      ConsistentRead: true,
    });
    ddb.on(GetCommand).resolves({});
    await expect(book().read({ scope: 'store', id: 's1' })).resolves.toEqual({ rev: 0, campaigns: [] });
  });

  it('writes the first list only if none exists, the next only at the revision it read', async () => {
    ddb.on(UpdateCommand).resolves({});
    await expect(book().write({ scope: 'store', id: 's1' }, [campaign], 0)).resolves.toBe(true);
    await book().write({ scope: 'store', id: 's1' }, [], 4);
    const [first, second] = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(first).toEqual({
      TableName: 'dispatch-table',
      Key: { storeId: '#campaigns:store:s1' },
      UpdateExpression: 'SET campaigns = :campaigns, rev = :next',
      ConditionExpression: 'attribute_not_exists(rev)',
      ExpressionAttributeValues: { ':campaigns': [campaign], ':next': 1 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(second?.ConditionExpression).toBe('rev = :seen');
    expect(second?.ExpressionAttributeValues).toEqual({ ':campaigns': [], ':next': 5, ':seen': 4 });
  });

  it('answers true when the list found is exactly its own write (an SDK retry after a lost answer)', async () => {
    const found = (rev: number, campaigns: Campaign[]) =>
      new ConditionalCheckFailedException({
        message: 'no',
        $metadata: {},
        Item: marshall({ storeId: '#campaigns:store:s1', rev, campaigns }),
      });
    ddb.on(UpdateCommand).rejectsOnce(found(2, [campaign]));
    await expect(book().write({ scope: 'store', id: 's1' }, [campaign], 1)).resolves.toBe(true);
    // Another writer's list at that revision, or the same list at another: not this write.
    ddb.reset();
    ddb.on(UpdateCommand).rejectsOnce(found(2, []));
    await expect(book().write({ scope: 'store', id: 's1' }, [campaign], 1)).resolves.toBe(false);
    ddb.reset();
    ddb.on(UpdateCommand).rejectsOnce(found(3, [campaign]));
    await expect(book().write({ scope: 'store', id: 's1' }, [campaign], 1)).resolves.toBe(false);
  });

  it('answers false when another write came first, and rethrows anything else', async () => {
    ddb.on(UpdateCommand).rejectsOnce(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    await expect(book().write({ scope: 'store', id: 's1' }, [], 1)).resolves.toBe(false);
    ddb.reset();
    ddb.on(UpdateCommand).rejects(new Error('DynamoDB down'));
    await expect(book().write({ scope: 'store', id: 's1' }, [], 1)).rejects.toThrow('DynamoDB down');
  });
});

describe('CachedCampaignBook', () => {
  it('keeps each list (empty ones too) for its TTL, and forgets one it writes', async () => {
    let now = 0;
    let reads = 0;
    const inner = {
      read: async () => {
        reads++;
        return { rev: 0, campaigns: [] };
      },
      write: async () => true,
    };
    const cached = new CachedCampaignBook(inner, 30_000, () => now);
    const owner = { scope: 'tenant' as const, id: 't1' };
    await cached.read(owner);
    now = 29_999;
    await cached.read(owner);
    expect(reads).toBe(1);
    now = 30_000;
    await cached.read(owner);
    expect(reads).toBe(2);
    await cached.write(owner, [], 0);
    await cached.read(owner);
    expect(reads).toBe(3);
  });
});
