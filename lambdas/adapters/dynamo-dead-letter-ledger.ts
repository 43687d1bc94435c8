import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { DeadLetterLedger, DeadLetterTally } from '../core/dead-letter-audit.js';
import { deadLetterTallyId, Tables } from '../core/names.js';

const KEY = Tables.dispatch.partitionKey;
const TallySchema = z.object({
  written: z.number().int().min(0).default(0),
  writtenAt: z.number().optional(),
  seenDepth: z.number().int().min(0).optional(),
  seenWritten: z.number().int().min(0).optional(),
  oldestAt: z.number().min(0).optional(),
});

/**
 * Dead-letter tallies in the dispatch table, one item per store under a reserved id (not the store's dispatch
 * item: no conditional write of the protocol ever reads or races these counters). The worker's ADD and the
 * reconciler's SET touch different attributes, so neither loses the other's write.
 */
export class DynamoDeadLetterLedger implements DeadLetterLedger {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async noteWritten(storeId: string, now: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [KEY]: deadLetterTallyId(storeId) },
        UpdateExpression: 'ADD written :one SET writtenAt = :now',
        ExpressionAttributeValues: { ':one': 1, ':now': now },
      }),
    );
  }

  async read(storeId: string): Promise<DeadLetterTally | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [KEY]: deadLetterTallyId(storeId) },
        ConsistentRead: true,
      }),
    );
    if (!out.Item) return undefined;
    const tally = TallySchema.parse(out.Item);
    return {
      written: tally.written,
      ...(tally.writtenAt === undefined ? {} : { writtenAt: tally.writtenAt }),
      ...(tally.seenDepth === undefined ? {} : { seenDepth: tally.seenDepth }),
      ...(tally.seenWritten === undefined ? {} : { seenWritten: tally.seenWritten }),
      ...(tally.oldestAt === undefined ? {} : { oldestAt: tally.oldestAt }),
    };
  }

  async settle(storeId: string, seenDepth: number, seenWritten: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [KEY]: deadLetterTallyId(storeId) },
        UpdateExpression: 'SET seenDepth = :depth, seenWritten = :written',
        ExpressionAttributeValues: { ':depth': seenDepth, ':written': seenWritten },
      }),
    );
  }

  async markOldest(storeId: string, oldestAt: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [KEY]: deadLetterTallyId(storeId) },
        UpdateExpression: 'SET oldestAt = :oldest',
        ExpressionAttributeValues: { ':oldest': oldestAt },
      }),
    );
  }
}
