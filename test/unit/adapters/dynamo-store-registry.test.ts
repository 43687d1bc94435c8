import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import { encodeCursor } from '../../../lambdas/adapters/dynamo-dispatch-state.js';
import { CachedStoreRegistry, DynamoStoreRegistry } from '../../../lambdas/adapters/dynamo-store-registry.js';
import type { StoreRegistry } from '../../../lambdas/core/ports.js';
import { conditionFailed, storeRecord, T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
const store = storeRecord();
let registry: DynamoStoreRegistry;

beforeEach(() => {
  ddb.reset();
  registry = new DynamoStoreRegistry(createAwsClients({ region: 'us-east-1' }).doc, TABLES.stores);
});

describe('DynamoStoreRegistry.get', () => {
  it('reads strongly consistently, so a pause takes effect on the next request', async () => {
    ddb.on(GetCommand).resolves({ Item: store });
    await registry.get('store-1');
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Key: { storeId: 'store-1' },
      ConsistentRead: true,
    });
  });

  it('returns the validated store', async () => {
    ddb.on(GetCommand).resolves({ Item: store });
    await expect(registry.get('store-1')).resolves.toEqual(store);
  });

  it('returns undefined for an unknown store', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(registry.get('nope')).resolves.toBeUndefined();
  });

  it('rejects an item that is not a store', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...store, plan: 'platinum' } });
    await expect(registry.get('store-1')).rejects.toThrow();
  });
});

describe('DynamoStoreRegistry.create', () => {
  it('puts the store only if its id is new', async () => {
    await registry.create(store);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Item: store,
      ConditionExpression: 'attribute_not_exists(#key)',
      ExpressionAttributeNames: { '#key': 'storeId' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('answers true when it created the store', async () => {
    await expect(registry.create(store)).resolves.toBe(true);
  });

  it('answers false when the store already exists', async () => {
    ddb.on(PutCommand).rejects(conditionFailed({ ...store, tenantId: 'other' }));
    await expect(registry.create(store)).resolves.toBe(false);
  });

  it('answers true when the store found is its own create, applied by an attempt whose answer was lost', async () => {
    ddb.on(PutCommand).rejects(conditionFailed(store));
    await expect(registry.create(store)).resolves.toBe(true);
  });

  it('lets other errors through', async () => {
    ddb.on(PutCommand).rejects(new Error('ResourceNotFoundException'));
    await expect(registry.create(store)).rejects.toThrow('ResourceNotFoundException');
  });
});

describe('DynamoStoreRegistry.replace', () => {
  const seen = { ...store, revision: 4 };
  const next = { ...store, status: 'paused' as const, revision: 5 };

  it('puts the store only if it still has the revision that was read', async () => {
    await registry.replace(next, seen);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Item: next,
      ConditionExpression: '#revision = :seen',
      ExpressionAttributeNames: { '#revision': 'revision' },
      ExpressionAttributeValues: { ':seen': 4 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('replaces a record from before revisions only while it still has none', async () => {
    await registry.replace({ ...next, revision: 1 }, store);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Item: { ...next, revision: 1 },
      ConditionExpression: 'attribute_exists(#key) AND attribute_not_exists(#revision)',
      ExpressionAttributeNames: { '#key': 'storeId', '#revision': 'revision' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('answers true when it wrote, false when another write came first', async () => {
    await expect(registry.replace(next, seen)).resolves.toBe(true);
    ddb.on(PutCommand).rejects(conditionFailed({ ...seen, revision: 5 }));
    await expect(registry.replace(next, seen)).resolves.toBe(false);
  });

  it('answers true when the record found is exactly its own write (an SDK retry after a lost answer)', async () => {
    ddb.on(PutCommand).rejects(conditionFailed(next));
    await expect(registry.replace(next, seen)).resolves.toBe(true);
    ddb.on(PutCommand).rejects(conditionFailed({ ...next, updatedAt: next.updatedAt + 1 }));
    await expect(registry.replace(next, seen)).resolves.toBe(false);
  });

  it('lets other errors through', async () => {
    ddb.on(PutCommand).rejects(new Error('ProvisionedThroughputExceededException'));
    await expect(registry.replace(next, seen)).rejects.toThrow('ProvisionedThroughputExceededException');
  });
});

describe('DynamoStoreRegistry.scan', () => {
  it('scans one page from the start', async () => {
    ddb.on(ScanCommand).resolves({ Items: [] });
    await registry.scan(undefined, 35);
    expect(ddb.commandCalls(ScanCommand)[0]?.args[0].input).toEqual({ TableName: TABLES.stores, Limit: 35 });
  });

  it('resumes after the key the cursor carries', async () => {
    ddb.on(ScanCommand).resolves({ Items: [] });
    await registry.scan(encodeCursor({ storeId: 'store-9' }), 35);
    expect(ddb.commandCalls(ScanCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Limit: 35,
      ExclusiveStartKey: { storeId: 'store-9' },
    });
  });

  it('returns the stores and the next cursor', async () => {
    ddb.on(ScanCommand).resolves({ Items: [store], LastEvaluatedKey: { storeId: 'store-1' } });
    await expect(registry.scan(undefined, 1)).resolves.toEqual({
      stores: [store],
      cursor: encodeCursor({ storeId: 'store-1' }),
    });
  });

  it('returns no cursor after the last page', async () => {
    ddb.on(ScanCommand).resolves({ Items: [store] });
    await expect(registry.scan(undefined, 10)).resolves.toEqual({ stores: [store] });
  });
});

describe('CachedStoreRegistry', () => {
  const fakeInner = () => {
    const inner = {
      get: vi.fn<StoreRegistry['get']>(async () => store),
      create: vi.fn<StoreRegistry['create']>(async () => true),
      replace: vi.fn<StoreRegistry['replace']>(async () => true),
      scan: vi.fn<StoreRegistry['scan']>(async () => ({ stores: [store] })),
    };
    return inner;
  };
  let now = T0;
  const clock = () => now;

  beforeEach(() => {
    now = T0;
  });

  it('serves a second read within the TTL from memory', async () => {
    const inner = fakeInner();
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await cached.get('store-1');
    now = T0 + 4_999;
    await cached.get('store-1');
    expect(inner.get).toHaveBeenCalledTimes(1);
  });

  it('returns the cached value', async () => {
    const cached = new CachedStoreRegistry(fakeInner(), 5_000, clock);
    await cached.get('store-1');
    await expect(cached.get('store-1')).resolves.toEqual(store);
  });

  it('reads again once the TTL has passed', async () => {
    const inner = fakeInner();
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await cached.get('store-1');
    now = T0 + 5_000;
    await cached.get('store-1');
    expect(inner.get).toHaveBeenCalledTimes(2);
  });

  it('caches each store separately', async () => {
    const inner = fakeInner();
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await cached.get('store-1');
    await cached.get('store-2');
    expect(inner.get.mock.calls).toEqual([['store-1'], ['store-2']]);
  });

  it('does not cache an unknown store: one created a moment later is usable at once', async () => {
    const inner = fakeInner();
    inner.get.mockResolvedValueOnce(undefined);
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await expect(cached.get('store-1')).resolves.toBeUndefined();
    await expect(cached.get('store-1')).resolves.toEqual(store);
    expect(inner.get).toHaveBeenCalledTimes(2);
  });

  it('does not cache a failed read', async () => {
    const inner = fakeInner();
    inner.get.mockRejectedValueOnce(new Error('unavailable'));
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await expect(cached.get('store-1')).rejects.toThrow('unavailable');
    await expect(cached.get('store-1')).resolves.toEqual(store);
  });

  it('passes create, replace and scan straight through', async () => {
    const inner = fakeInner();
    inner.replace.mockResolvedValueOnce(false);
    const cached = new CachedStoreRegistry(inner, 5_000, clock);
    await cached.create(store);
    const replaced = await cached.replace({ ...store, revision: 2 }, store);
    await cached.scan('c', 3);
    expect([inner.create.mock.calls, inner.replace.mock.calls, replaced, inner.scan.mock.calls]).toEqual([
      [[store]],
      [[{ ...store, revision: 2 }, store]],
      false,
      [['c', 3]],
    ]);
  });
});
