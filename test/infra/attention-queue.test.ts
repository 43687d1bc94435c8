import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ATTENTION_QUEUE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const { queue, deadLetterQueue } = stack.attention;
const queueProps = resourceById(template, logicalIdOf(queue)).Properties ?? {};

describe('attention queue', () => {
  it('is the only queue besides its DLQ', () => {
    template.resourceCountIs('AWS::SQS::Queue', 2);
  });

  it('encrypts every queue with SQS-managed keys', () => {
    template.allResourcesProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });

  it('lets CloudFormation name every queue', () => {
    template.allResourcesProperties('AWS::SQS::Queue', { QueueName: Match.absent() });
  });

  it.each([
    ['queue', queue],
    ['dead-letter queue', deadLetterQueue],
  ])('the %s refuses requests without TLS', (_name, q) => {
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalIdOf(q) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('dead-letters to its DLQ', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ deadLetterTargetArn: arnOf(deadLetterQueue) }),
    });
  });

  it(`dead-letters after ${ATTENTION_QUEUE.maxReceiveCount} receives`, () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount }),
    });
  });

  it(`hides a received attention for ${ATTENTION_QUEUE.visibilityTimeoutSeconds} s`, () => {
    expect(queueProps.VisibilityTimeout).toBe(ATTENTION_QUEUE.visibilityTimeoutSeconds);
  });

  it('hides a received attention for at least 6 × the worker timeout (AWS rule for SQS event sources)', () => {
    const workerTimeout = resourceById(template, logicalIdOf(stack.workers.function)).Properties?.Timeout;
    expect(queueProps.VisibilityTimeout).toBeGreaterThanOrEqual(6 * Number(workerTimeout));
  });

  it(`keeps attentions ${ATTENTION_QUEUE.retentionSeconds} s`, () => {
    expect(queueProps.MessageRetentionPeriod).toBe(ATTENTION_QUEUE.retentionSeconds);
  });

  it(`keeps dead letters ${ATTENTION_QUEUE.deadLetterRetentionSeconds} s`, () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.absent(),
      MessageRetentionPeriod: ATTENTION_QUEUE.deadLetterRetentionSeconds,
    });
  });
});
