import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { localTableName, QueueNames, Tables, type TableKey } from '../../lambdas/core/names.js';
import { ATTENTION_QUEUE, TABLES } from '../../lambdas/config/topology.js';
import { STORE_PRIORITIES, type StorePriority } from '../../lambdas/core/plans.js';

/**
 * Creates, on the emulators, the same tables and attention queues the stack defines (both built from
 * lambdas/config/topology.ts). Idempotent: what exists is left as it is.
 */
export interface LocalResources {
  tables: Record<TableKey, string>;
  /** The `normal` level's attention queue (the original one). */
  attentionQueueUrl: string;
  /** Every store priority level's attention queue; all three dead-letter to the one attention DLQ. */
  attentionQueueUrls: Record<StorePriority, string>;
  attentionDeadLetterQueueUrl: string;
  /** The confirm queue (issue #11); dead-letters to the attention DLQ like the level queues. */
  confirmQueueUrl: string;
}

const createTable = async (dynamo: DynamoDBClient, key: TableKey, name: string): Promise<void> => {
  const spec = TABLES[key];
  const attributes = new Map<string, 'S' | 'N'>([[spec.partitionKey.name, spec.partitionKey.type]]);
  for (const index of spec.globalIndexes) {
    attributes.set(index.partitionKey.name, index.partitionKey.type);
    if (index.sortKey) attributes.set(index.sortKey.name, index.sortKey.type);
  }
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
          AttributeName,
          AttributeType,
        })),
        KeySchema: [{ AttributeName: spec.partitionKey.name, KeyType: 'HASH' }],
        ...(spec.globalIndexes.length > 0
          ? {
              GlobalSecondaryIndexes: spec.globalIndexes.map((index) => ({
                IndexName: index.name,
                KeySchema: [
                  { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
                  ...(index.sortKey
                    ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' as const }]
                    : []),
                ],
                Projection: { ProjectionType: index.projection },
              })),
            }
          : {}),
      }),
    );
    if (spec.ttlAttribute) {
      await dynamo.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: spec.ttlAttribute, Enabled: true },
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof ResourceInUseException) && (error as Error).name !== 'ResourceInUseException')
      throw error;
  }
  await dynamo.send(new DescribeTableCommand({ TableName: name }));
};

export const provision = async (
  dynamo: DynamoDBClient,
  sqs: SQSClient,
  prefix: string,
): Promise<LocalResources> => {
  const keys = Object.keys(Tables) as TableKey[];
  const tables = Object.fromEntries(keys.map((key) => [key, localTableName(prefix, key)])) as Record<
    TableKey,
    string
  >;
  await Promise.all(keys.map((key) => createTable(dynamo, key, tables[key])));
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: QueueNames.attentionDeadLetterQueue(prefix),
      Attributes: { MessageRetentionPeriod: String(ATTENTION_QUEUE.deadLetterRetentionSeconds) },
    }),
  );
  const dlqArn = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const attentionQueue = async (queueName: string): Promise<string> => {
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: queueName,
        Attributes: {
          VisibilityTimeout: String(ATTENTION_QUEUE.visibilityTimeoutSeconds),
          MessageRetentionPeriod: String(ATTENTION_QUEUE.retentionSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
            maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount,
          }),
        },
      }),
    );
    return created.QueueUrl as string;
  };
  const attentionQueueUrls = Object.fromEntries(
    await Promise.all(
      STORE_PRIORITIES.map(async (level) => [
        level,
        await attentionQueue(QueueNames.levelAttentionQueue(prefix, level)),
      ]),
    ),
  ) as Record<StorePriority, string>;
  return {
    tables,
    attentionQueueUrl: attentionQueueUrls.normal,
    attentionQueueUrls,
    attentionDeadLetterQueueUrl: dlq.QueueUrl as string,
    confirmQueueUrl: await attentionQueue(QueueNames.confirmQueue(prefix)),
  };
};
