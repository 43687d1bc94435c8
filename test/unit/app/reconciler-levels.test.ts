import {
  GetEventSourceMappingCommand,
  LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import {
  GetQueueAttributesCommand,
  SQSClient,
  type GetQueueAttributesCommandInput,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createReconcilerHandler } from '../../../lambdas/app/reconciler-app.js';
import { EnvNames } from '../../../lambdas/config/env-names.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { INDEX_BACKFILL_CURSOR_ID, LEVEL_CAPS_STATE_ID, MetricNames } from '../../../lambdas/core/names.js';
import { appOverrides, ATTENTION_URL, FULL_ENV } from '../support/fixtures.js';

/** The reconciler's run with loans on (AWS): it balances the levels' caps beside its repairs. */
const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const lambda = mockClient(LambdaClient);
const HIGH = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-attention-high';
const LOW = 'https://sqs.us-east-1.amazonaws.com/123456789012/aq-attention-low';
const LOANS_ENV = {
  ...FULL_ENV,
  AQ_SWEEP_STORES_PER_RUN: '0',
  [EnvNames.attentionQueueUrlHigh]: HIGH,
  [EnvNames.attentionQueueUrlLow]: LOW,
  [EnvNames.levelFloors]: 'high=10,normal=6,low=4',
  [EnvNames.levelMappings]: 'high=m-high,normal=m-normal,low=m-low',
};

const handlerWith = (env: Record<string, string>) => {
  const { overrides, telemetry } = appOverrides();
  return { handler: createReconcilerHandler(loadConfig('reconciler', env), overrides), telemetry };
};

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  lambda.reset();
  // No store is active; the backfill is done; no level caps state yet.
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(ScanCommand).resolves({ Items: [] });
  ddb
    .on(GetCommand)
    .callsFake((input: { Key: { storeId: string } }) =>
      input.Key.storeId === INDEX_BACKFILL_CURSOR_ID
        ? { Item: { storeId: input.Key.storeId, cursor: 'done' } }
        : {},
    );
  ddb.on(PutCommand).resolves({});
  // Only low has attentions waiting.
  sqs.on(GetQueueAttributesCommand).callsFake((input: GetQueueAttributesCommandInput) => ({
    Attributes: {
      ApproximateNumberOfMessages: input.QueueUrl === LOW ? '40' : '0',
      ApproximateNumberOfMessagesNotVisible: input.QueueUrl === LOW ? '4' : '0',
    },
  }));
  lambda.on(GetEventSourceMappingCommand).callsFake((input: { UUID: string }) => ({
    ScalingConfig: { MaximumConcurrency: { 'm-high': 10, 'm-normal': 6, 'm-low': 4 }[input.UUID] },
  }));
  lambda.on(UpdateEventSourceMappingCommand).resolves({});
});

describe('the reconciler with loans on', () => {
  it('lends the waiting level the idle floors on its mapping, and keeps the state under its own id', async () => {
    const { handler } = handlerWith(LOANS_ENV);
    await handler();
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([
      { UUID: 'm-low', ScalingConfig: { MaximumConcurrency: 20 } },
    ]);
    const saved = ddb
      .commandCalls(PutCommand)
      .filter((c) => c.args[0].input.Item?.['storeId'] === LEVEL_CAPS_STATE_ID)
      .map((c) => JSON.parse(String(c.args[0].input.Item?.['cursor'])) as unknown);
    expect(saved.at(-1)).toEqual({ held: [], caps: { high: 10, normal: 6, low: 20 } });
    expect(
      sqs
        .commandCalls(GetQueueAttributesCommand)
        .map((c) => c.args[0].input.QueueUrl)
        .sort(),
    ).toEqual([ATTENTION_URL, HIGH, LOW].sort());
  });

  it('counts a failed balance and still returns the run’s report', async () => {
    lambda.on(UpdateEventSourceMappingCommand).rejects(new Error('ResourceInUseException'));
    const { handler, telemetry } = handlerWith(LOANS_ENV);
    const report = await handler();
    expect(report.checked).toBe(0);
    expect(telemetry.counters.get(MetricNames.levelCapsFailures)).toBe(1);
  });

  it('a failed repair run still waits for its balance before it fails (no balance left running)', async () => {
    ddb.on(QueryCommand).rejects(new Error('listActive failed'));
    // The mapping's update answers late: the run's last state write comes after it.
    lambda
      .on(UpdateEventSourceMappingCommand)
      .callsFake(() => new Promise((resolve) => setTimeout(() => resolve({}), 30)));
    const { handler } = handlerWith(LOANS_ENV);
    await expect(handler()).rejects.toThrow('listActive failed');
    const saved = ddb
      .commandCalls(PutCommand)
      .filter((c) => c.args[0].input.Item?.['storeId'] === LEVEL_CAPS_STATE_ID)
      .map((c) => JSON.parse(String(c.args[0].input.Item?.['cursor'])) as unknown);
    expect(saved.at(-1)).toEqual({ held: [], caps: { high: 10, normal: 6, low: 20 } });
  });

  it('touches no mapping without the floors and mappings (local mode)', async () => {
    const { [EnvNames.levelFloors]: _floors, ...withoutFloors } = LOANS_ENV;
    const { handler } = handlerWith(withoutFloors);
    await handler();
    expect(lambda.calls()).toHaveLength(0);
  });
});
