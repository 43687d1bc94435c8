import { describe, expect, it } from 'vitest';
import { FUNCTIONS, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { Template } from 'aws-cdk-lib/assertions';
import { arnOf, buildStack, logicalIdOf, resourceById, resourcesOfType, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const LEVELS = ['high', 'normal', 'low'] as const;
const worker = stack.workers.function;
const workerProps = resourceById(template, logicalIdOf(worker)).Properties ?? {};

describe('attention workers', () => {
  it('have one event source mapping per store priority level', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3);
  });

  it.each(LEVELS)('consume the %s attention queue', (level) => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.levels[level]),
      FunctionName: { Ref: logicalIdOf(worker) },
    });
  });

  it('keep the original mapping on the original queue (normal), so an upgrade updates it in place', () => {
    expect(stack.workers.eventSource).toBe(stack.workers.eventSources.normal);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.queue),
      ScalingConfig: { MaximumConcurrency: 6 },
    });
  });

  it(`take up to ${WORKER_EVENT_SOURCE.defaultBatchSize} attentions per invocation on every level, with no batching window`, () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(3);
    for (const mapping of mappings) {
      const props = mapping.Properties as { BatchSize?: number; MaximumBatchingWindowInSeconds?: number };
      expect(props.BatchSize).toBe(WORKER_EVENT_SOURCE.defaultBatchSize);
      expect(props.MaximumBatchingWindowInSeconds).toBeUndefined();
    }
  });

  it('take the batch size the stack is given', () => {
    const custom = Template.fromStack(buildStack({ workerBatchSize: 3 }));
    for (const mapping of Object.values(custom.findResources('AWS::Lambda::EventSourceMapping')))
      expect((mapping.Properties as { BatchSize: number }).BatchSize).toBe(3);
  });

  it('report batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it.each([
    ['high', 10],
    ['normal', 6],
    ['low', 4],
  ] as const)(
    `run at most the %s level's share of the default pool of ${WORKER_EVENT_SOURCE.defaultPoolSize} at once (%s)`,
    (level, cap) => {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: arnOf(stack.attention.levels[level]),
        ScalingConfig: { MaximumConcurrency: cap },
      });
    },
  );

  it('reserve concurrency for the whole pool and the largest loan (every floor but the smallest: 10 + 6)', () => {
    expect(WORKER_EVENT_SOURCE.defaultPoolSize).toBe(20);
    expect(workerProps.ReservedConcurrentExecutions).toBe(20 + 16);
  });

  it('never poll more concurrently, all mappings together, than the reserved concurrency (no throttled attentions)', () => {
    const caps = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(
      ([, mapping]) =>
        (mapping.Properties?.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency,
    );
    expect(caps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(
      Number(workerProps.ReservedConcurrentExecutions),
    );
  });

  it(`time out after ${FUNCTIONS.worker.timeoutSeconds} s`, () => {
    expect(workerProps.Timeout).toBe(FUNCTIONS.worker.timeoutSeconds);
  });
});
