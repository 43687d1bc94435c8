import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { applyNag } from '../../lib/nag.js';
import { buildStack, resourcesOfType } from './synth-stack.js';

/**
 * cdk-nag's AwsSolutions and ServerlessChecks, as bin/cdk.ts applies them at synth. Every accepted finding
 * is suppressed on its one resource in lib/nag.ts; anything else is an error or warning annotation, and
 * fails here.
 */
const nagged = (tracing: boolean) => {
  const stack = buildStack({ tracing });
  applyNag(stack);
  return stack;
};
const unsuppressed = (stack: ReturnType<typeof buildStack>): string[] => {
  const annotations = Annotations.fromStack(stack);
  return [
    ...annotations.findError('*', Match.stringLikeRegexp('^(AwsSolutions|Serverless)-')),
    ...annotations.findWarning('*', Match.stringLikeRegexp('^(AwsSolutions|Serverless)-')),
  ].map((message) => `${message.id}: ${String(message.entry.data).slice(0, 120)}`);
};

interface NagSuppression {
  id: string;
  reason: string;
  applies_to?: unknown[];
}

// Synthesized once each: the default stack, and one with tracing turned off (other suppressions). An
// unsuppressed finding is an error annotation, and synth itself fails on it (ValidationFailed, naming the
// rule and the resource) before the tests below would list it: either way this file fails.
const defaultStack = nagged(true);
const template = Template.fromStack(defaultStack);
const untracedStack = nagged(false);

/** The suppressions cdk-nag reads, from each resource's Metadata (what lib/nag.ts wrote). */
const suppressions: { resource: string; s: NagSuppression }[] = Object.entries(
  template.toJSON().Resources as Record<
    string,
    { Metadata?: { cdk_nag?: { rules_to_suppress?: NagSuppression[] } } }
  >,
).flatMap(([resource, r]) => (r.Metadata?.cdk_nag?.rules_to_suppress ?? []).map((s) => ({ resource, s })));

describe('cdk-nag (AwsSolutions and ServerlessChecks)', () => {
  it('finds nothing unsuppressed in the default stack', () => {
    expect(unsuppressed(defaultStack)).toEqual([]);
  });

  it('finds nothing unsuppressed with tracing turned off', () => {
    expect(unsuppressed(untracedStack)).toEqual([]);
  });

  it('suppresses per resource (some resources carry suppressions)', () => {
    expect(suppressions.length).toBeGreaterThan(0);
  });

  it('every suppression gives a reason of substance', () => {
    expect(suppressions.filter(({ s }) => s.reason.length < 40)).toEqual([]);
  });

  it('every wildcard (IAM5) suppression names the wildcards it accepts', () => {
    expect(suppressions.filter(({ s }) => s.id === 'AwsSolutions-IAM5' && !s.applies_to?.length)).toEqual([]);
  });

  it('every managed-policy (IAM4) suppression names the policy it accepts', () => {
    expect(suppressions.filter(({ s }) => s.id === 'AwsSolutions-IAM4' && !s.applies_to?.length)).toEqual([]);
  });

  it('no method without authorization is suppressed unless its integration is a MOCK', () => {
    const anonymous = resourcesOfType(template, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties?.AuthorizationType === 'NONE',
    );
    expect(
      anonymous
        .filter(([, m]) => (m.Properties?.Integration as { Type?: string } | undefined)?.Type !== 'MOCK')
        .map(([id]) => id),
    ).toEqual([]);
  });
});
