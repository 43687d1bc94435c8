import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, RECONCILER_SCHEDULE } from '../../lambdas/config/topology.js';
import { arnOf, logicalIdOf, resourceById, resourcesOfType, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const reconciler = stack.reconciler.function;
const minutes = RECONCILER_SCHEDULE.rateMinutes;
const [[, schedule] = []] = resourcesOfType(template, 'AWS::Scheduler::Schedule');
const scheduleRole = (schedule?.Properties?.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } })
  .RoleArn;

describe('reconciler', () => {
  it('has one schedule', () => {
    template.resourceCountIs('AWS::Scheduler::Schedule', 1);
  });

  it(`runs every ${minutes} minute(s)`, () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: `rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`,
    });
  });

  it('is enabled', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', { State: 'ENABLED' });
  });

  it('invokes the reconciler function', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ Arn: arnOf(reconciler) }),
    });
  });

  it('does not retry a missed tick (the next tick is the retry)', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 0 }) }),
    });
  });

  it("gives the scheduler's role permission to invoke the reconciler", () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: scheduleRole['Fn::GetAtt'][0] }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'lambda:InvokeFunction',
            Resource: Match.arrayWith([arnOf(reconciler)]),
          }),
        ]),
      },
    });
  });

  it('is not retried by Lambda after a failed run', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalIdOf(reconciler) },
      MaximumRetryAttempts: 0,
    });
  });

  it('drops a tick Lambda could not start within one period', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalIdOf(reconciler) },
      MaximumEventAgeInSeconds: minutes * 60,
    });
  });

  it(`times out after ${FUNCTIONS.reconciler.timeoutSeconds} s`, () => {
    expect(resourceById(template, logicalIdOf(reconciler)).Properties?.Timeout).toBe(
      FUNCTIONS.reconciler.timeoutSeconds,
    );
  });

  it('runs one at a time (reserved concurrency 1)', () => {
    expect(resourceById(template, logicalIdOf(reconciler)).Properties?.ReservedConcurrentExecutions).toBe(1);
  });
});
