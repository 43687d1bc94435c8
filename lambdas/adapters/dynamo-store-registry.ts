import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Tables } from '../core/names.js';
import type { StoreRegistry } from '../core/ports.js';
import { StoreRecordSchema, type StoreRecord } from '../core/store-model.js';
import { conditional, sameAsWritten } from './dynamo-conditional.js';
import { decodeCursor, encodeCursor } from './dynamo-cursor.js';

const KEY = Tables.stores.partitionKey;

export class DynamoStoreRegistry implements StoreRegistry {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(storeId: string): Promise<StoreRecord | undefined> {
    // Strongly consistent: a pause or a disable takes effect on the very next slice or request.
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { [KEY]: storeId }, ConsistentRead: true }),
    );
    return out.Item ? StoreRecordSchema.parse(out.Item) : undefined;
  }

  async create(record: StoreRecord): Promise<boolean> {
    const result = await conditional(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record,
          ConditionExpression: 'attribute_not_exists(#key)',
          ExpressionAttributeNames: { '#key': KEY },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return result.ok || sameAsWritten(result.current, record);
  }

  async replace(record: StoreRecord, seen: StoreRecord): Promise<boolean> {
    const result = await conditional(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record,
          // A record from before revisions has none: the first write that gives it one wins.
          ...(seen.revision === undefined
            ? {
                ConditionExpression: 'attribute_exists(#key) AND attribute_not_exists(#revision)',
                ExpressionAttributeNames: { '#key': KEY, '#revision': 'revision' },
              }
            : {
                ConditionExpression: '#revision = :seen',
                ExpressionAttributeNames: { '#revision': 'revision' },
                ExpressionAttributeValues: { ':seen': seen.revision },
              }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return result.ok || sameAsWritten(result.current, record);
  }

  async scan(cursor: string | undefined, limit: number): Promise<{ stores: StoreRecord[]; cursor?: string }> {
    const start = decodeCursor(cursor);
    const out = await this.doc.send(
      new ScanCommand({
        TableName: this.tableName,
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = encodeCursor(out.LastEvaluatedKey);
    return {
      stores: (out.Items ?? []).map((item) => StoreRecordSchema.parse(item)),
      ...(next ? { cursor: next } : {}),
    };
  }
}

/** Ingest reads the store on every request; a short cache (off by default) trades status freshness for reads. */
export class CachedStoreRegistry implements StoreRegistry {
  private readonly cache = new Map<string, { at: number; value: StoreRecord }>();
  constructor(
    private readonly inner: StoreRegistry,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(storeId: string): Promise<StoreRecord | undefined> {
    const hit = this.cache.get(storeId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.value;
    const value = await this.inner.get(storeId);
    if (this.cache.size > 10_000) this.cache.clear();
    // A miss is not cached: a store created a moment ago must be usable at once.
    if (value) this.cache.set(storeId, { at: this.now(), value });
    return value;
  }
  create(record: StoreRecord) {
    return this.inner.create(record);
  }
  replace(record: StoreRecord, seen: StoreRecord) {
    return this.inner.replace(record, seen);
  }
  scan(cursor: string | undefined, limit: number) {
    return this.inner.scan(cursor, limit);
  }
}
