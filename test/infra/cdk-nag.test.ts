import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { buildStack } from './synth-stack.js';

/**
 * AwsSolutions findings the design accepts, each with its reason. Any other finding fails the test,
 * so a new kind of weakness has to be fixed or argued for here.
 */
const ACCEPTED: readonly { finding: RegExp; reason: string }[] = [
  {
    finding:
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:[a-z0-9]+-[sd]-\*\]$/,
    reason:
      'store queues and DLQs are created at run time; their name patterns are the narrowest grant possible',
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::<Tables\w+\.Arn>\/index\/\*\]$/,
    reason: "Table.grant* covers the table's GSIs; the tables have at most one",
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::<\w+\.Arn>:\*\]$/,
    reason: "the scheduler may invoke the reconciler's versions and aliases (CDK's LambdaInvoke target)",
  },
  {
    finding:
      /^AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy\/service-role\/AWSLambdaBasicExecutionRole\]$/,
    reason: 'log writing only; each function logs to its own explicit log group',
  },
  {
    finding:
      /^AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy\/service-role\/AmazonAPIGatewayPushToCloudWatchLogs\]$/,
    reason: "API Gateway's account-level logging role, as AWS documents it",
  },
  {
    finding: /^AwsSolutions-L1$/,
    reason: 'nodejs22.x is a supported runtime, pinned on purpose (local Node 20 compatible code)',
  },
  {
    finding: /^AwsSolutions-APIG2$/,
    reason: 'the functions validate every body with zod and answer 400 naming the field',
  },
  {
    finding: /^AwsSolutions-APIG6$/,
    reason: 'access logs are on; execution logs would copy request data into logs',
  },
  {
    finding: /^AwsSolutions-APIG4$/,
    reason:
      'the only method without authorization is the catch-all ANY /{proxy+}, which answers 404 route_not_found',
  },
  {
    finding: /^AwsSolutions-COG4$/,
    reason: 'integrators use a token authorizer and admins IAM, by design (no Cognito)',
  },
];

const stack = buildStack();
Aspects.of(stack).add(new AwsSolutionsChecks());
const annotations = Annotations.fromStack(stack);
// A message reads "AwsSolutions-IAM5[Resource::…]: The IAM entity …"; the finding is what precedes ': '.
const findingOf = (data: string): string => data.slice(0, data.indexOf(': '));
const findings = [
  ...annotations.findError('*', Match.stringLikeRegexp('^AwsSolutions-')),
  ...annotations.findWarning('*', Match.stringLikeRegexp('^AwsSolutions-')),
].map((message) => ({ path: message.id, finding: findingOf(String(message.entry.data)) }));

describe('cdk-nag AwsSolutions', () => {
  it('ran (the design accepts some findings, so some must appear)', () => {
    expect(findings.length).toBeGreaterThan(0);
  });

  it('finds nothing beyond the accepted, argued findings', () => {
    const unexpected = findings.filter(
      ({ finding }) => !ACCEPTED.some((accepted) => accepted.finding.test(finding)),
    );
    expect(unexpected).toEqual([]);
  });
});
