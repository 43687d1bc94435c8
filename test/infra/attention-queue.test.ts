import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ATTENTION_QUEUE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, resourcesOfType, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const { queue, deadLetterQueue, confirm } = stack.attention;
const queueProps = resourceById(template, logicalIdOf(queue)).Properties ?? {};
const confirmProps = resourceById(template, logicalIdOf(confirm)).Properties ?? {};

describe('attention queue', () => {
  it('is one queue per store priority level and the confirm queue, besides their one DLQ (5 in all)', () => {
    expect(
      resourcesOfType(template, 'AWS::SQS::Queue')
        .map(([id]) => id)
        .sort(),
    ).toEqual(
      [stack.attention.levels.high, queue, stack.attention.levels.low, confirm, deadLetterQueue]
        .map(logicalIdOf)
        .sort(),
    );
  });

  it('keeps the confirm queue apart from every level queue (issue #11)', () => {
    expect(Object.values(stack.attention.levels).map(logicalIdOf)).not.toContain(logicalIdOf(confirm));
    expect(logicalIdOf(confirm)).toMatch(/^AttentionConfirmQueue[0-9A-F]{8}$/);
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
    ['confirm queue', confirm],
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

  it('the confirm queue dead-letters to the same DLQ, after the same receives as the level queues', () => {
    expect(confirmProps.RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(deadLetterQueue),
      maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount,
    });
  });

  it.each([
    ['high', stack.attention.levels.high],
    ['low', stack.attention.levels.low],
    ['confirm', confirm],
  ])('the %s queue has the visibility and retention of the original', (_name, q) => {
    const props = resourceById(template, logicalIdOf(q)).Properties ?? {};
    expect([props.VisibilityTimeout, props.MessageRetentionPeriod]).toEqual([
      queueProps.VisibilityTimeout,
      queueProps.MessageRetentionPeriod,
    ]);
  });

  it('hides a received confirm attention for at least 6 × the worker timeout too (its event source is the worker)', () => {
    const workerTimeout = resourceById(template, logicalIdOf(stack.workers.function)).Properties?.Timeout;
    expect(confirmProps.VisibilityTimeout).toBeGreaterThanOrEqual(6 * Number(workerTimeout));
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
