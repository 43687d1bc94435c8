import { describe, expect, it } from 'vitest';
import { CONFIRM_EVENT_SOURCE, FUNCTIONS, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { Template } from 'aws-cdk-lib/assertions';
import {
  arnOf,
  buildStack,
  logicalIdOf,
  resourceById,
  resourcesOfType,
  synthStack,
  type TemplateResource,
} from './synth-stack.js';

const { stack, template } = synthStack();
const LEVELS = ['high', 'normal', 'low'] as const;
const worker = stack.workers.function;
const workerProps = resourceById(template, logicalIdOf(worker)).Properties ?? {};

interface MappingProps {
  BatchSize?: number;
  MaximumBatchingWindowInSeconds?: number;
  FunctionResponseTypes?: string[];
  ScalingConfig?: { MaximumConcurrency?: number };
}
const confirmArn = JSON.stringify(arnOf(stack.attention.confirm));
const isConfirm = ([, m]: [string, TemplateResource]): boolean =>
  JSON.stringify(m.Properties?.['EventSourceArn']) === confirmArn;
/** The mappings of a template split into the level queues' and the confirm queue's. */
const mappingsOf = (t: Template): { levels: MappingProps[]; confirm: MappingProps[] } => {
  const all = resourcesOfType(t, 'AWS::Lambda::EventSourceMapping');
  const props = (list: [string, TemplateResource][]): MappingProps[] =>
    list.map(([, m]) => (m.Properties ?? {}) as MappingProps);
  return { levels: props(all.filter((m) => !isConfirm(m))), confirm: props(all.filter(isConfirm)) };
};
const mappings = mappingsOf(template);
/** A stack given its own pool and batch size: the levels' mappings follow them, the confirm queue's does not. */
const custom = mappingsOf(Template.fromStack(buildStack({ workerPoolSize: 50, workerBatchSize: 3 })));

describe('attention workers', () => {
  it('have one event source mapping per store priority level, and one on the confirm queue', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', LEVELS.length + 1);
    expect([mappings.levels.length, mappings.confirm.length]).toEqual([LEVELS.length, 1]);
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
    expect(mappings.levels.map((props) => [props.BatchSize, props.MaximumBatchingWindowInSeconds])).toEqual(
      LEVELS.map(() => [WORKER_EVENT_SOURCE.defaultBatchSize, undefined]),
    );
  });

  it(`take the batch size the stack is given on every level; the confirm queue keeps its ${CONFIRM_EVENT_SOURCE.batchSize}`, () => {
    expect(custom.levels.map((props) => props.BatchSize)).toEqual([3, 3, 3]);
    expect(custom.confirm.map((props) => props.BatchSize)).toEqual([CONFIRM_EVENT_SOURCE.batchSize]);
  });

  it("report batch item failures on every mapping, the confirm queue's included", () => {
    expect([...mappings.levels, ...mappings.confirm].map((props) => props.FunctionResponseTypes)).toEqual(
      Array(LEVELS.length + 1).fill(['ReportBatchItemFailures']),
    );
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

  it(`reserve concurrency for the whole pool, the largest loan (every floor but the smallest: 10 + 6) and the confirm queue's ${CONFIRM_EVENT_SOURCE.maxConcurrency}`, () => {
    expect(WORKER_EVENT_SOURCE.defaultPoolSize).toBe(20);
    expect(workerProps.ReservedConcurrentExecutions).toBe(20 + 16 + CONFIRM_EVENT_SOURCE.maxConcurrency);
    expect(stack.workers.reservedConcurrency).toBe(workerProps.ReservedConcurrentExecutions);
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

describe("the confirm queue's event source (issue #11)", () => {
  const [confirm] = mappings.confirm;

  it('runs the worker function on the confirm queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.confirm),
      FunctionName: { Ref: logicalIdOf(worker) },
    });
  });

  it('is none of the levels’ sources: the reconciler is neither handed its mapping nor allowed to update it', () => {
    const all = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping');
    const [[confirmId] = []] = all.filter(isConfirm);
    const [[levelId] = []] = all.filter((m) => !isConfirm(m));
    if (!confirmId || !levelId) throw new Error('no confirm or level mapping');
    const reconciler = JSON.stringify(resourceById(template, logicalIdOf(stack.reconciler.function)));
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(Object.values(stack.workers.eventSources)).not.toContain(stack.workers.confirmEventSource);
    // A level's mapping is named in both places; the confirm queue's in neither.
    expect([reconciler.includes(levelId), policies.includes(`"Ref":"${levelId}"`)]).toEqual([true, true]);
    expect([reconciler.includes(confirmId), policies.includes(`"Ref":"${confirmId}"`)]).toEqual([
      false,
      false,
    ]);
  });

  it(`takes up to ${CONFIRM_EVENT_SOURCE.batchSize} attentions per invocation (the levels take ${WORKER_EVENT_SOURCE.defaultBatchSize})`, () => {
    expect(CONFIRM_EVENT_SOURCE.batchSize).toBe(100);
    expect(confirm?.BatchSize).toBe(CONFIRM_EVENT_SOURCE.batchSize);
  });

  it(`gathers its batch over a ${CONFIRM_EVENT_SOURCE.batchingWindowSeconds} s batching window (Lambda needs one above a batch of 10)`, () => {
    expect(CONFIRM_EVENT_SOURCE.batchingWindowSeconds).toBe(1);
    expect(confirm?.MaximumBatchingWindowInSeconds).toBe(CONFIRM_EVENT_SOURCE.batchingWindowSeconds);
  });

  it(`runs at most ${CONFIRM_EVENT_SOURCE.maxConcurrency} invocations at once`, () => {
    expect(CONFIRM_EVENT_SOURCE.maxConcurrency).toBe(5);
    expect(confirm?.ScalingConfig).toEqual({ MaximumConcurrency: CONFIRM_EVENT_SOURCE.maxConcurrency });
  });

  it('reports batch item failures (one store’s failed decision does not return the other 99)', () => {
    expect(confirm?.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it("keeps its batch, window and cap whatever the pool and the batch size (it is not a level's share)", () => {
    expect(
      custom.confirm.map((props) => [
        props.BatchSize,
        props.MaximumBatchingWindowInSeconds,
        props.ScalingConfig?.MaximumConcurrency,
      ]),
    ).toEqual([
      [
        CONFIRM_EVENT_SOURCE.batchSize,
        CONFIRM_EVENT_SOURCE.batchingWindowSeconds,
        CONFIRM_EVENT_SOURCE.maxConcurrency,
      ],
    ]);
  });
});
