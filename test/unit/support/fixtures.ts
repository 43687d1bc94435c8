import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import {
  GetQueueAttributesCommand,
  type GetQueueAttributesCommandInput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import type { LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { RuntimeOverrides } from '../../../lambdas/app/runtime.js';
import type { Clock, IdGenerator } from '../../../lambdas/core/ports.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';

/** A pinned instant: every test that reads the clock reads this. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

export const fixedClock = (now = T0): Clock => ({ now: () => now, sleep: async () => {} });

/** Slot ids in the order a test will ask for them. */
export const sequentialIds = (...ids: string[]): IdGenerator => {
  let i = 0;
  return { next: () => ids[i++] ?? `id-${i}` };
};

/** Telemetry that keeps every log record (info and up) next to its counters. */
export const recordingTelemetry = (): { telemetry: RecordingTelemetry; logs: LogRecord[] } => {
  const logs: LogRecord[] = [];
  return { telemetry: new RecordingTelemetry((record) => logs.push(record), 'info'), logs };
};

/**
 * What a composition root (create*Handler) is handed in an app test: clients whose calls the file's
 * aws-sdk-client-mock stubs answer, recording telemetry and the pinned clock; `extra` adds or replaces any.
 */
export const appOverrides = (
  extra: RuntimeOverrides = {},
): { overrides: RuntimeOverrides; telemetry: RecordingTelemetry; logs: LogRecord[] } => {
  const { telemetry, logs } = recordingTelemetry();
  return {
    overrides: {
      clients: createAwsClients({ region: 'us-east-1' }),
      telemetry,
      clock: fixedClock(),
      ...extra,
    },
    telemetry,
    logs,
  };
};

/** Calls an API handler and reads its answer as the status and the parsed JSON body. */
export const jsonCaller =
  (handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>) =>
  async (event: APIGatewayProxyEvent): Promise<{ status: number; body: Record<string, unknown> }> => {
    const result = await handler(event);
    return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
  };

export const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-s-store-1';
export const DLQ_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-d-store-1';
export const HIGH_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-h-store-1';
export const ATTENTION_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-attention';

export const TABLES = {
  stores: 'stores-table',
  dispatch: 'dispatch-table',
  tokens: 'tokens-table',
  deliveries: 'deliveries-table',
} as const;

/** Every variable any function reads, valid. */
export const FULL_ENV: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  AQ_QUEUE_PREFIX: 'aq',
  AQ_STORES_TABLE: TABLES.stores,
  AQ_DISPATCH_TABLE: TABLES.dispatch,
  AQ_TOKENS_TABLE: TABLES.tokens,
  AQ_DELIVERIES_TABLE: TABLES.deliveries,
  AQ_ATTENTION_QUEUE_URL: ATTENTION_URL,
  MARKETPLACE_BASE_URL: 'https://marketplace.example.com',
};

export const storeRecord = (overrides: Partial<StoreRecord> = {}): StoreRecord => ({
  storeId: 'store-1',
  tenantId: 'tenant-1',
  marketplace: 'acme',
  plan: 'basic',
  status: 'active',
  queueUrl: QUEUE_URL,
  deadLetterQueueUrl: DLQ_URL,
  createdAt: T0 - 60_000,
  updatedAt: T0 - 60_000,
  ...overrides,
});

export const QUEUE_ARN = 'arn:aws:sqs:us-east-1:123456789012:aq-s-store-1';
export const DLQ_ARN = 'arn:aws:sqs:us-east-1:123456789012:aq-d-store-1';
export const HIGH_QUEUE_ARN = 'arn:aws:sqs:us-east-1:123456789012:aq-h-store-1';

export interface Depths {
  backlog?: number;
  inFlight?: number;
  delayed?: number;
  deadLetters?: number;
}

/** Answers GetQueueAttributes as SQS would for the store's queue and DLQ (ARNs and approximate counts). */
export const answerQueueAttributes = (sqs: AwsClientStub<SQSClient>, depths: Depths = {}): void => {
  sqs.on(GetQueueAttributesCommand).callsFake((input: GetQueueAttributesCommandInput) => {
    const dlq = input.QueueUrl === DLQ_URL;
    if (input.AttributeNames?.includes('QueueArn'))
      return { Attributes: { QueueArn: dlq ? DLQ_ARN : QUEUE_ARN } };
    return dlq
      ? { Attributes: { ApproximateNumberOfMessages: String(depths.deadLetters ?? 0) } }
      : {
          Attributes: {
            ApproximateNumberOfMessages: String(depths.backlog ?? 0),
            ApproximateNumberOfMessagesNotVisible: String(depths.inFlight ?? 0),
            ApproximateNumberOfMessagesDelayed: String(depths.delayed ?? 0),
          },
        };
  });
};

/** What DynamoDB throws for a lost condition with ReturnValuesOnConditionCheckFailure ALL_OLD. */
export const conditionFailed = (item?: Record<string, unknown>): ConditionalCheckFailedException =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(item ? { Item: marshall(item, { removeUndefinedValues: true }) } : {}),
  });

/** A REST API (v1) proxy event with only the fields the adapter reads. */
export const apiEvent = (overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent =>
  ({
    resource: '/v1/stores/{storeId}/tasks',
    path: '/v1/stores/store-1/tasks',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { storeId: 'store-1' },
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1', authorizer: { tenantId: 'tenant-1' } },
    ...overrides,
  }) as APIGatewayProxyEvent;
