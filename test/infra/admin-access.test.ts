import { describe, expect, it } from 'vitest';
import { adminAccessPolicy } from '../../lib/constructs/http-api.js';
import { buildStack, resourcesOfType, synthStack } from './synth-stack.js';

const OPS = 'arn:aws:iam::123456789012:role/ops';
const { template } = synthStack({ adminAccess: [OPS] });
const [[, api] = []] = resourcesOfType(template, 'AWS::ApiGateway::RestApi');
interface Statement {
  Effect: string;
  Action: string;
  Resource: string;
  Condition?: Record<string, Record<string, unknown>>;
}
const statements = (api?.Properties?.['Policy'] as { Statement: Statement[] } | undefined)?.Statement ?? [];
const deny = statements.find((s) => s.Effect === 'Deny');

describe('admin resource policy (adminAccess)', () => {
  it('is absent by default: IAM authorization alone decides', () => {
    expect(adminAccessPolicy(undefined)).toBeUndefined();
  });

  it('keeps every route open to API Gateway’s own authorization (an explicit allow of the API)', () => {
    expect(statements.filter((s) => s.Effect === 'Allow').map((s) => s.Resource)).toEqual(['execute-api:/*']);
  });

  it('denies the admin paths only', () => {
    expect(deny?.Resource).toBe('execute-api:/*/*/admin/*');
  });

  it('denies every caller but the named principals', () => {
    expect(deny?.Condition).toEqual({ ArnNotLike: { 'aws:PrincipalArn': [OPS] } });
  });

  it("'account' denies every caller outside the stack's account", () => {
    const policy = buildStack({ adminAccess: 'account' }).resolve(adminAccessPolicy('account')?.toJSON()) as {
      Statement: Statement[];
    };
    expect(policy.Statement.find((s) => s.Effect === 'Deny')?.Condition).toEqual({
      StringNotEquals: { 'aws:PrincipalAccount': { Ref: 'AWS::AccountId' } },
    });
  });

  it('refuses a principal that is not an IAM ARN', () => {
    expect(() => buildStack({ adminAccess: ['ops'] })).toThrow(
      /adminAccess: 'ops' is not an IAM principal ARN/,
    );
  });

  it('refuses an empty principal list', () => {
    expect(() => buildStack({ adminAccess: [] })).toThrow(/adminAccess must be 'account' or at least one/);
  });
});
