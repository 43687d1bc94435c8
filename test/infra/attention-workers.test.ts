import { describe, expect, it } from 'vitest';
import { FUNCTIONS, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, resourcesOfType, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const worker = stack.workers.function;
const workerProps = resourceById(template, logicalIdOf(worker)).Properties ?? {};

describe('attention workers', () => {
  it('have one event source mapping', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
  });

  it('consume the attention queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.queue),
      FunctionName: { Ref: logicalIdOf(worker) },
    });
  });

  it(`take ${WORKER_EVENT_SOURCE.batchSize} attention per invocation`, () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: WORKER_EVENT_SOURCE.batchSize,
    });
  });

  it('report batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it(`run at most the default pool of ${WORKER_EVENT_SOURCE.defaultPoolSize} at once`, () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: WORKER_EVENT_SOURCE.defaultPoolSize },
    });
  });

  it('reserve concurrency for the whole pool', () => {
    expect(workerProps.ReservedConcurrentExecutions).toBe(WORKER_EVENT_SOURCE.defaultPoolSize);
  });

  it('never poll more concurrently than the reserved concurrency (no throttled attentions)', () => {
    const [[, mapping] = []] = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping');
    const scaling = mapping?.Properties?.ScalingConfig as { MaximumConcurrency: number };
    expect(scaling.MaximumConcurrency).toBeLessThanOrEqual(Number(workerProps.ReservedConcurrentExecutions));
  });

  it(`time out after ${FUNCTIONS.worker.timeoutSeconds} s`, () => {
    expect(workerProps.Timeout).toBe(FUNCTIONS.worker.timeoutSeconds);
  });
});
