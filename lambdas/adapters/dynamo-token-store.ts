import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { Tables } from '../core/names.js';
import type { TokenChange, TokenRecord, TokenStore } from '../core/ports.js';
import { conditional } from './dynamo-conditional.js';

const TokenRecordSchema = z.object({
  tokenHash: z.string(),
  tenantId: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().optional(),
  revokedAt: z.number().optional(),
  /** Absent on records written before per-tenant usage plans. */
  usageKey: z.string().min(1).optional(),
});

const parse = (item: Record<string, unknown>): TokenRecord => {
  const { expiresAt, revokedAt, usageKey, ...rest } = TokenRecordSchema.parse(item);
  return {
    ...rest,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(revokedAt === undefined ? {} : { revokedAt }),
    ...(usageKey === undefined ? {} : { usageKey }),
  };
};

export class DynamoTokenStore implements TokenStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(record: TokenRecord): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: record,
        ConditionExpression: 'attribute_not_exists(#key)',
        ExpressionAttributeNames: { '#key': Tables.tokens.partitionKey },
      }),
    );
  }

  async get(tokenHash: string): Promise<TokenRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { [Tables.tokens.partitionKey]: tokenHash } }),
    );
    return out.Item ? parse(out.Item) : undefined;
  }

  async listByTenant(tenantId: string): Promise<TokenRecord[]> {
    const records: TokenRecord[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: Tables.tokens.tenantIndex,
          KeyConditionExpression: '#tenant = :tenant',
          ExpressionAttributeNames: { '#tenant': Tables.tokens.tenantIndexPartitionKey },
          ExpressionAttributeValues: { ':tenant': tenantId },
          ...(cursor ? { ExclusiveStartKey: cursor } : {}),
        }),
      );
      for (const item of out.Items ?? []) records.push(parse(item));
      cursor = out.LastEvaluatedKey;
    } while (cursor);
    return records;
  }

  async amend(tokenHash: string, change: TokenChange): Promise<boolean> {
    const sets = Object.entries(change).filter(([, v]) => v !== undefined);
    if (sets.length === 0) return (await this.get(tokenHash)) !== undefined;
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [Tables.tokens.partitionKey]: tokenHash },
          UpdateExpression: `SET ${sets.map(([k]) => `#${k} = :${k}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(#key)',
          ExpressionAttributeNames: {
            '#key': Tables.tokens.partitionKey,
            ...Object.fromEntries(sets.map(([k]) => [`#${k}`, k])),
          },
          ExpressionAttributeValues: Object.fromEntries(sets.map(([k, v]) => [`:${k}`, v])),
        }),
      ),
    );
    return result.ok;
  }
}
