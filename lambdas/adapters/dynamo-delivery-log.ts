import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { deliveryKey, Tables } from '../core/names.js';
import { DELIVERY_STATUSES, type DeliveryLog, type DeliveryRecord } from '../core/ports.js';
import { DELIVERY_RECORD_TTL_SECONDS } from '../config/topology.js';

const DeliveryRecordSchema = z.object({
  storeId: z.string(),
  eventId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().optional(),
  lastError: z.string().optional(),
  updatedAt: z.number(),
});

export class DynamoDeliveryLog implements DeliveryLog {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(storeId: string, eventId: string): Promise<DeliveryRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [Tables.deliveries.partitionKey]: deliveryKey(storeId, eventId) },
        ConsistentRead: true,
      }),
    );
    return out.Item ? DeliveryRecordSchema.parse(out.Item) : undefined;
  }

  async record(record: DeliveryRecord): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          [Tables.deliveries.partitionKey]: deliveryKey(record.storeId, record.eventId),
          ...record,
          [Tables.deliveries.ttlAttribute]: Math.floor(record.updatedAt / 1000) + DELIVERY_RECORD_TTL_SECONDS,
        },
      }),
    );
  }
}
