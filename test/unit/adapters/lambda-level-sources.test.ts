import {
  GetEventSourceMappingCommand,
  LambdaClient,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { LambdaLevelSources } from '../../../lambdas/adapters/lambda-level-sources.js';

const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
const URLS = { high: 'https://q/high', normal: 'https://q/normal', low: 'https://q/low' };
const MAPPINGS = { high: 'uuid-high', normal: 'uuid-normal', low: 'uuid-low' };
const sources = () => new LambdaLevelSources(new SQSClient({}), new LambdaClient({}), URLS, MAPPINGS);

beforeEach(() => {
  sqs.reset();
  lambda.reset();
});

describe('LambdaLevelSources', () => {
  it("reads a level's waiting and in-flight attentions from its own queue, in one call", async () => {
    sqs.on(GetQueueAttributesCommand, { QueueUrl: URLS.low }).resolves({
      Attributes: { ApproximateNumberOfMessages: '12', ApproximateNumberOfMessagesNotVisible: '3' },
    });
    expect(await sources().load('low')).toEqual({ waiting: 12, inFlight: 3 });
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0]?.args[0].input).toEqual({
      QueueUrl: URLS.low,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    });
  });

  it('reads missing or odd counts as 0', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: 'x' } });
    expect(await sources().load('high')).toEqual({ waiting: 0, inFlight: 0 });
    sqs.on(GetQueueAttributesCommand).resolves({});
    expect(await sources().load('high')).toEqual({ waiting: 0, inFlight: 0 });
  });

  it("reads a level's cap from its mapping's ScalingConfig", async () => {
    lambda
      .on(GetEventSourceMappingCommand, { UUID: 'uuid-normal' })
      .resolves({ ScalingConfig: { MaximumConcurrency: 7 } });
    expect(await sources().cap('normal')).toBe(7);
  });

  it('fails on a mapping without a MaximumConcurrency (not one the stack made)', async () => {
    lambda.on(GetEventSourceMappingCommand).resolves({});
    await expect(sources().cap('high')).rejects.toThrow(
      "the high level's event source has no MaximumConcurrency (UUID uuid-high)",
    );
  });

  it("sets a level's cap on its own mapping", async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({});
    await sources().setCap('low', 21);
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)[0]?.args[0].input).toEqual({
      UUID: 'uuid-low',
      ScalingConfig: { MaximumConcurrency: 21 },
    });
  });
});
