import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../lambdas/app/ingest-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { apiEvent, appOverrides, FULL_ENV, storeRecord, TABLES } from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const task = { eventId: 'evt-1', type: 'inventory.update', payload: { sku: 'SKU-1', quantity: 4 } };

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord() });
  sqs.on(SendMessageCommand).resolves({});
  // The write-ahead lands (the store idle), the task is durable, then DynamoDB fails: this request cannot signal the
  // store.
  ddb
    .on(UpdateCommand)
    .resolvesOnce({ Attributes: { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {}, ingesting: 1 } })
    .rejects(Object.assign(new Error('throttled'), { $metadata: {} }));
});

/** SignalFailures (issue #4's metric list): counted when ingest cannot signal after the task is durable. */
describe('ingest signal failure', () => {
  const setup = () => {
    const { overrides, telemetry } = appOverrides();
    return { handler: createIngestHandler(loadConfig('ingest', FULL_ENV), overrides), telemetry };
  };

  it('still answers 202: the task is durable', async () => {
    const { handler } = setup();
    const result = await handler(apiEvent({ body: JSON.stringify(task) }));
    expect(result.statusCode).toBe(202);
  });

  it('counts SignalFailures once, for the failed end-and-issue write', async () => {
    const { handler, telemetry } = setup();
    await handler(apiEvent({ body: JSON.stringify(task) }));
    expect({
      failures: telemetry.total(MetricNames.signalFailures),
      writes: ddb.commandCalls(UpdateCommand).length,
    }).toEqual({ failures: 1, writes: 2 });
  });
});
