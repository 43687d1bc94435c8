import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { Tables } from '../core/names.js';
import type { TokenRecord, TokenStore } from '../core/ports.js';

const TokenRecordSchema = z.object({ tokenHash: z.string(), tenantId: z.string(), createdAt: z.number() });

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
}
