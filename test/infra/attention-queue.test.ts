import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ATTENTION_QUEUE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const { queue, deadLetterQueue } = stack.attention;
const queueProps = resourceById(template, logicalIdOf(queue)).Properties ?? {};

describe('attention queue', () => {
  it('is one queue per store priority level, besides their one DLQ', () => {
    template.resourceCountIs('AWS::SQS::Queue', 4);
  });

  it('keeps the original attention queue as the normal level (same logical id: in-flight attentions survive)', () => {
    expect(stack.attention.levels.normal).toBe(queue);
    expect(logicalIdOf(queue)).toMatch(/^AttentionQueue[0-9A-F]{8}$/);
  });

  it('encrypts every queue with SQS-managed keys', () => {
    template.allResourcesProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });

  it('lets CloudFormation name every queue', () => {
    template.allResourcesProperties('AWS::SQS::Queue', { QueueName: Match.absent() });
  });

  it.each([
    ['high queue', stack.attention.levels.high],
    ['normal queue', queue],
    ['low queue', stack.attention.levels.low],
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

  it.each(['high', 'normal', 'low'] as const)('the %s queue dead-letters to the one DLQ', (level) => {
    const props = resourceById(template, logicalIdOf(stack.attention.levels[level])).Properties ?? {};
    expect(props.RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(deadLetterQueue),
      maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount,
    });
  });

  it.each(['high', 'low'] as const)(
    'the %s queue has the visibility and retention of the original',
    (level) => {
      const props = resourceById(template, logicalIdOf(stack.attention.levels[level])).Properties ?? {};
      expect([props.VisibilityTimeout, props.MessageRetentionPeriod]).toEqual([
        queueProps.VisibilityTimeout,
        queueProps.MessageRetentionPeriod,
      ]);
    },
  );

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
