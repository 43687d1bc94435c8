import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { CONFIRM_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, resourcesOfType, roleIdOf, synthStack } from './synth-stack.js';

// A dev-style stack: every optional prop set away from its default.
const { stack, template } = synthStack({
  queuePrefix: 'deveu',
  workerPoolSize: 50,
  removalPolicy: RemovalPolicy.DESTROY,
  apiThrottling: { rateLimit: 10, burstLimit: 20 },
  apiTenantThrottling: { rateLimit: 2.5, burstLimit: 7 },
  tracing: false,
  apiCloudWatchRole: false,
  logRetention: RetentionDays.ONE_WEEK,
  runtimeSettings: { marketplaceTimeoutMs: 8000, sweepStoresPerRun: 100 },
});
const variablesOf = (construct: Parameters<typeof logicalIdOf>[0]): Record<string, unknown> =>
  (
    resourceById(template, logicalIdOf(construct)).Properties?.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;

describe('stack props', () => {
  it.each([
    ['high', 25],
    ['normal', 15],
    ['low', 10],
  ] as const)('workerPoolSize sets the %s event source MaximumConcurrency to its share', (level, cap) => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.levels[level]),
      ScalingConfig: { MaximumConcurrency: cap },
    });
  });

  it(`workerPoolSize sets the worker's reserved concurrency: the pool, the largest loan (floors 25/15/10) and the confirm queue's ${CONFIRM_EVENT_SOURCE.maxConcurrency}`, () => {
    expect(
      resourceById(template, logicalIdOf(stack.workers.function)).Properties?.ReservedConcurrentExecutions,
    ).toBe(50 + 25 + 15 + CONFIRM_EVENT_SOURCE.maxConcurrency);
  });

  it("workerPoolSize leaves the confirm queue's event source at its own cap", () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.confirm),
      ScalingConfig: { MaximumConcurrency: CONFIRM_EVENT_SOURCE.maxConcurrency },
    });
  });

  it('queuePrefix reaches the admin function', () => {
    expect(variablesOf(stack.httpApi.adminFunction)[EnvNames.queuePrefix]).toBe('deveu');
  });

  it('queuePrefix scopes the store-queue grants', () => {
    const pattern = {
      'Fn::Join': ['', Match.arrayWith([':deveu-s-*'])],
    };
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleIdOf(stack.httpApi.adminFunction) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(['sqs:CreateQueue']),
            // The work kind names the work queues and the high-priority queues.
            Resource: Match.arrayWith([pattern]),
          }),
        ]),
      },
    });
  });

  it('queuePrefix replaces the default pattern entirely', () => {
    const json = JSON.stringify(template.toJSON());
    for (const pattern of ['aq-s-*', 'aq-d-*', 'aq-h-*'])
      expect(json).not.toContain(JSON.stringify(`:${pattern}`));
  });

  it('removalPolicy DESTROY deletes the tables with the stack', () => {
    const policies = resourcesOfType(template, 'AWS::DynamoDB::Table').map(
      ([, table]) => table.DeletionPolicy,
    );
    expect(new Set(policies)).toEqual(new Set(['Delete']));
  });

  it('removalPolicy DESTROY deletes the log groups with the stack', () => {
    const policies = resourcesOfType(template, 'AWS::Logs::LogGroup').map(
      ([, group]) => group.DeletionPolicy,
    );
    expect(new Set(policies)).toEqual(new Set(['Delete']));
  });

  it('apiThrottling sets the stage rate limit', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 10 })]),
    });
  });

  it('apiThrottling sets the stage burst limit', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingBurstLimit: 20 })]),
    });
  });

  it('apiTenantThrottling sets the usage plan throttle', () => {
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 2.5, BurstLimit: 7 },
    });
  });

  it('tracing false leaves the stage untraced', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: false });
  });

  it('tracing false leaves every function untraced', () => {
    expect(
      resourcesOfType(template, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties?.TracingConfig),
    ).toEqual([]);
  });

  it('tracing false turns Powertools Tracer off in every function', () => {
    expect(
      resourcesOfType(template, 'AWS::Lambda::Function').map(
        ([, fn]) =>
          (fn.Properties?.Environment as { Variables: Record<string, string> }).Variables[
            'POWERTOOLS_TRACE_ENABLED'
          ],
      ),
    ).toEqual(Array(5).fill('false'));
  });

  it('apiCloudWatchRole false leaves the account setting alone', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it('logRetention applies to every log group', () => {
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('runtimeSettings.marketplaceTimeoutMs reaches the worker', () => {
    expect(variablesOf(stack.workers.function)[EnvNames.marketplaceTimeoutMs]).toBe('8000');
  });

  it('runtimeSettings.sweepStoresPerRun reaches the reconciler', () => {
    expect(variablesOf(stack.reconciler.function)[EnvNames.sweepStoresPerRun]).toBe('100');
  });

  it('runtime settings reach only the functions that read them', () => {
    expect(variablesOf(stack.httpApi.ingestFunction)).not.toHaveProperty(EnvNames.marketplaceTimeoutMs);
  });
});
