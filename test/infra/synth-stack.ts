import { readFileSync } from 'node:fs';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { AttentionQueueStack, type AttentionQueueStackProps } from '../../lib/attention-queue-stack.js';

export const MARKETPLACE_BASE_URL = 'https://marketplace.example.com';

/** The feature flags `cdk synth` uses, so tests see the template that gets deployed (read once per test file). */
const CDK_JSON_CONTEXT: Record<string, unknown> =
  (
    JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
      context?: Record<string, unknown>;
    }
  ).context ?? {};

/** A new app with bundling skipped: synth takes a few seconds and needs no esbuild run. */
const testApp = (): App => new App({ context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] } });

export const buildStack = (props: Partial<AttentionQueueStackProps> = {}): AttentionQueueStack =>
  new AttentionQueueStack(testApp(), 'Test', { marketplaceBaseUrl: MARKETPLACE_BASE_URL, ...props });

/** Synthesizes once; call it at module level or in beforeAll, never per test. */
export const synthStack = (
  props: Partial<AttentionQueueStackProps> = {},
): { stack: AttentionQueueStack; template: Template } => {
  const stack = buildStack(props);
  return { stack, template: Template.fromStack(stack) };
};

/** The logical id of an L2 construct's CloudFormation resource. */
export const logicalIdOf = (construct: IConstruct): string => {
  const resource = construct.node.defaultChild;
  if (!resource) throw new Error(`${construct.node.path} has no default child`);
  return Stack.of(construct).getLogicalId(resource as CfnElement);
};

/** `{ Fn::GetAtt: [id, 'Arn'] }` of a construct, as it appears in the template. */
export const arnOf = (construct: IConstruct): { 'Fn::GetAtt': [string, string] } => ({
  'Fn::GetAtt': [logicalIdOf(construct), 'Arn'],
});

export interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export const resourcesOfType = (template: Template, type: string): [string, TemplateResource][] =>
  Object.entries(template.toJSON().Resources as Record<string, TemplateResource>).filter(
    ([, resource]) => resource.Type === type,
  );

export const resourceById = (template: Template, logicalId: string): TemplateResource => {
  const resource = (template.toJSON().Resources as Record<string, TemplateResource | undefined>)[logicalId];
  if (!resource) throw new Error(`no resource ${logicalId} in the template`);
  return resource;
};

export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every statement of every AWS::IAM::Policy attached to `roleLogicalId`. */
export const statementsOfRole = (template: Template, roleLogicalId: string): PolicyStatement[] =>
  resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([, policy]) =>
      asArray(policy.Properties?.Roles as unknown).some(
        (role) => JSON.stringify(role) === JSON.stringify({ Ref: roleLogicalId }),
      ),
    )
    .flatMap(
      ([, policy]) => (policy.Properties?.PolicyDocument as { Statement: PolicyStatement[] }).Statement,
    );

/** The actions a role is allowed on exactly `resource` (compared as template JSON). */
export const actionsAllowedOn = (template: Template, roleLogicalId: string, resource: unknown): string[] => {
  const wanted = JSON.stringify(resource);
  return statementsOfRole(template, roleLogicalId)
    .filter((s) => s.Effect === 'Allow' && asArray(s.Resource).some((r) => JSON.stringify(r) === wanted))
    .flatMap((s) => asArray(s.Action));
};

/** Logical ids of the resources of `type` whose properties match `properties` (objectLike). */
export const idsMatching = (
  template: Template,
  type: string,
  properties: Record<string, unknown>,
): string[] => Object.keys(template.findResources(type, { Properties: Match.objectLike(properties) }));

/** The logical id of a function's execution role. */
export const roleIdOf = (fn: IFunction): string => {
  if (!fn.role) throw new Error(`${fn.node.path} has no role`);
  return logicalIdOf(fn.role);
};
