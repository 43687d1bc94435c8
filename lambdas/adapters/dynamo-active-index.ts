import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Tables } from '../core/names.js';
import type { ActiveEntry, ActiveStoreIndex } from '../core/ports.js';
import { decodeCursor, encodeCursor } from './dynamo-cursor.js';

/**
 * The Dispatch table's sparse, KEYS_ONLY `active` index read in sort-key order: the operator's listing of
 * busy stores, oldest task first. The index projects exactly storeId, activeShard and headSentAt.
 */
export class DynamoActiveIndex implements ActiveStoreIndex {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async byOldest(
    shard: string,
    opts: { from: number; limit: number; cursor?: string },
  ): Promise<{ entries: ActiveEntry[]; cursor?: string }> {
    const start = decodeCursor(opts.cursor);
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: Tables.dispatch.activeIndex,
        KeyConditionExpression: '#shard = :shard AND #oldest >= :from',
        ExpressionAttributeNames: {
          '#shard': Tables.dispatch.activeIndexPartitionKey,
          '#oldest': Tables.dispatch.activeIndexSortKey,
        },
        ExpressionAttributeValues: { ':shard': shard, ':from': opts.from },
        ScanIndexForward: true,
        Limit: opts.limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = encodeCursor(out.LastEvaluatedKey);
    return {
      entries: (out.Items ?? []).map((item) => ({
        storeId: String(item[Tables.dispatch.partitionKey]),
        oldestAt: Number(item[Tables.dispatch.activeIndexSortKey]),
      })),
      ...(next ? { cursor: next } : {}),
    };
  }
}
