import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import { Tables } from '../core/names.js';
import type { TokenChange, TokenRecord, TokenStore } from '../core/ports.js';
import { conditional } from './dynamo-conditional.js';
import { decodeCursor, encodeCursor } from './dynamo-cursor.js';

const TokenRecordSchema = z.object({
  tokenHash: z.string(),
  tenantId: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().optional(),
  revokedAt: z.number().optional(),
  /** Absent on records written before per-tenant usage plans. */
  usageKey: z.string().min(1).optional(),
});

/** A scan cursor this store handed out (a token table key), or a 400 — never a DynamoDB error. */
const startKeyOf = (cursor: string | undefined): Record<string, unknown> | undefined => {
  if (cursor === undefined) return undefined;
  let key: unknown;
  try {
    key = decodeCursor(cursor);
  } catch {
    key = undefined;
  }
  const entries = key !== null && typeof key === 'object' ? Object.entries(key) : [];
  const [only] = entries;
  if (entries.length !== 1 || only?.[0] !== Tables.tokens.partitionKey || typeof only[1] !== 'string')
    throw new ValidationError('cursor: not a cursor this route returned');
  return key as Record<string, unknown>;
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
    return out.Item ? TokenRecordSchema.parse(out.Item) : undefined;
  }

  async tenantsPage(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tenantIds: string[]; cursor?: string }> {
    const start = startKeyOf(cursor);
    const out = await this.doc.send(
      new ScanCommand({
        TableName: this.tableName,
        ProjectionExpression: '#tenant',
        ExpressionAttributeNames: { '#tenant': Tables.tokens.tenantIndexPartitionKey },
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const tenantIds = [
      ...new Set((out.Items ?? []).map((item) => String(item[Tables.tokens.tenantIndexPartitionKey]))),
    ];
    const next = encodeCursor(out.LastEvaluatedKey);
    return { tenantIds, ...(next ? { cursor: next } : {}) };
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
      for (const item of out.Items ?? []) records.push(TokenRecordSchema.parse(item));
      cursor = out.LastEvaluatedKey;
    } while (cursor);
    return records;
  }

  async amend(tokenHash: string, change: TokenChange): Promise<boolean> {
    const sets = Object.entries(change).filter(([, v]) => v !== undefined);
    if (sets.length === 0) return (await this.get(tokenHash)) !== undefined;
    // A token's end only moves earlier: two rotations at once, or one that read the token from the
    // (eventually consistent) tenant index before another cut it short, never give it back time.
    const shortens = change.expiresAt !== undefined;
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [Tables.tokens.partitionKey]: tokenHash },
          UpdateExpression: `SET ${sets.map(([k]) => `#${k} = :${k}`).join(', ')}`,
          ConditionExpression: shortens
            ? 'attribute_exists(#key) AND (attribute_not_exists(#expiresAt) OR #expiresAt > :expiresAt)'
            : 'attribute_exists(#key)',
          ExpressionAttributeNames: {
            '#key': Tables.tokens.partitionKey,
            ...Object.fromEntries(sets.map(([k]) => [`#${k}`, k])),
          },
          ExpressionAttributeValues: Object.fromEntries(sets.map(([k, v]) => [`:${k}`, v])),
          ...(shortens ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
        }),
      ),
    );
    // Refused with the token there: it ends no later already, which is what the change asked.
    return result.ok || (shortens && result.current !== undefined);
  }
}
