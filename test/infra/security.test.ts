import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { INTEGRATOR_API, NO_USAGE_KEY_MESSAGE } from '../../lambdas/config/topology.js';
import { ROUTES } from '../../lambdas/core/routes.js';
import {
  API_STAGE_NAME,
  AUTHORIZER_CACHE_SECONDS,
  gatewayErrorTemplate,
} from '../../lib/constructs/http-api.js';
import { THROTTLED_BODY } from '../../lib/constructs/tenant-rate-limit.js';
import {
  asArray,
  logicalIdOf,
  resourcesOfType,
  roleIdOf,
  statementsOfRole,
  synthStack,
  type PolicyStatement,
} from './synth-stack.js';

/**
 * The stack's security properties, one per assertion: throttling per tenant (usage plan) behind a
 * per-credential flood rule, both with Retry-After,
 * the authorizer cache bound, TLS-only queues, encryption at rest, log retention, and no secret in
 * any function's environment or in any parameter.
 */
const { stack, template } = synthStack();
const http = stack.httpApi;
const templateJson = JSON.stringify(template.toJSON());

describe('per-tenant throttling (one usage plan, one API key per tenant, supplied by the authorizer)', () => {
  const plans = resourcesOfType(template, 'AWS::ApiGateway::UsagePlan');
  const plan = plans[0]?.[1].Properties ?? {};
  const apiRef = { Ref: logicalIdOf(http.api) };
  /** `arn:{partition}:apigateway:{region}::{path}` as CDK joins it (the path's first part follows '::'). */
  const apigatewayArn = (path: string, ...rest: unknown[]) => ({
    'Fn::Join': [
      '',
      ['arn:', { Ref: 'AWS::Partition' }, ':apigateway:', { Ref: 'AWS::Region' }, `::${path}`, ...rest],
    ],
  });

  it('reads API keys from the authorizer (usageIdentifierKey), never from a client header', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it('has one usage plan, bound to the API stage', () => {
    expect(plans).toHaveLength(1);
    expect(plan['ApiStages']).toEqual([
      { ApiId: apiRef, Stage: { Ref: logicalIdOf(http.api.deploymentStage) }, Throttle: {} },
    ]);
  });

  it(`throttles each key at ${INTEGRATOR_API.tenantRatePerSecond} rps with bursts of ${INTEGRATOR_API.tenantBurst}`, () => {
    expect(plan['Throttle']).toEqual({
      RateLimit: INTEGRATOR_API.tenantRatePerSecond,
      BurstLimit: INTEGRATOR_API.tenantBurst,
    });
  });

  it('sets no quota (the contract throttles; it has no monthly allowance)', () => {
    expect(plan).not.toHaveProperty('Quota');
  });

  it('creates no API key at deploy time (the admin function makes one per tenant)', () => {
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
  });

  it.each(ROUTES.map((r) => [r.id, r] as const))(
    '%s requires an API key exactly when it is an integrator route',
    (id, route) => {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: route.method,
        ResourceId: { Ref: logicalIdOf(http.methods[id].resource) },
        ApiKeyRequired: route.auth === 'tenant' ? true : Match.absent(),
      });
    },
  );

  it('the catch-all requires no API key', () => {
    const anyMethods = resourcesOfType(template, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties?.['HttpMethod'] === 'ANY',
    );
    expect(anyMethods.length).toBeGreaterThan(0);
    expect(anyMethods.filter(([, m]) => m.Properties?.['ApiKeyRequired'] !== undefined)).toEqual([]);
  });

  it('tells the admin function the usage plan by its API stage', () => {
    const admin = resourcesOfType(template, 'AWS::Lambda::Function').find(
      ([id]) => id === logicalIdOf(http.adminFunction),
    );
    expect(
      (admin?.[1].Properties?.['Environment'] as { Variables: Record<string, unknown> }).Variables[
        EnvNames.usagePlanStage
      ],
    ).toEqual({ 'Fn::Join': ['', [apiRef, `:${API_STAGE_NAME}`]] });
  });

  it('lets the admin function list plans, find and create keys, and add keys to this plan only', () => {
    const apigateway = statementsOfRole(template, roleIdOf(http.adminFunction)).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('apigateway:')),
    );
    expect(apigateway).toEqual([
      { Effect: 'Allow', Action: 'apigateway:GET', Resource: apigatewayArn('/usageplans') },
      { Effect: 'Allow', Action: ['apigateway:GET', 'apigateway:POST'], Resource: apigatewayArn('/apikeys') },
      {
        Effect: 'Allow',
        Action: 'apigateway:POST',
        Resource: apigatewayArn(
          '/usageplans/',
          { Ref: logicalIdOf(http.tenantUsagePlan.usagePlan) },
          '/keys',
        ),
      },
    ]);
  });

  it('gives no other role any apigateway action', () => {
    const adminRole = roleIdOf(http.adminFunction);
    const others = resourcesOfType(template, 'AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties?.['Roles']) !== JSON.stringify([{ Ref: adminRole }]))
      .flatMap(([, p]) => (p.Properties?.['PolicyDocument'] as { Statement: PolicyStatement[] }).Statement)
      .filter((s) => asArray(s.Action).some((a) => a.startsWith('apigateway:')));
    expect(others).toEqual([]);
  });

  it("answers API Gateway's 429 (usage plan or stage throttling) with Retry-After and the contract JSON", () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
      ResponseTemplates: { 'application/json': gatewayErrorTemplate('throttled') },
    });
  });

  it('answers a token without a usage key (issued before usage plans) 403 forbidden, naming the fix', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'INVALID_API_KEY',
      StatusCode: '403',
      ResponseTemplates: { 'application/json': gatewayErrorTemplate('forbidden', NO_USAGE_KEY_MESSAGE) },
    });
  });
});

describe('flood ceiling per credential (WAF rate rule on the integrator routes, in front of the usage plan)', () => {
  const acl = resourcesOfType(template, 'AWS::WAFv2::WebACL');
  type Json = Record<string, unknown>;
  const rule = ((acl[0]?.[1].Properties?.Rules as Json[] | undefined)?.[0] ?? {}) as Json & {
    Statement?: { RateBasedStatement?: Json };
    VisibilityConfig?: Json;
  };
  const rate: Json = rule.Statement?.RateBasedStatement ?? {};

  it('has one regional web ACL, associated with the API stage', () => {
    expect(acl).toHaveLength(1);
    template.hasResourceProperties('AWS::WAFv2::WebACL', { Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [stack.getLogicalId(http.tenantRateLimit.webAcl), 'Arn'] },
      ResourceArn: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
    });
  });

  it('counts requests per Authorization header (one credential = one tenant)', () => {
    expect(rate['AggregateKeyType']).toBe('CUSTOM_KEYS');
    expect(rate['CustomKeys']).toEqual([
      { Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
    ]);
  });

  it(`allows ${INTEGRATOR_API.credentialFloodRatePerSecond} requests/s per credential over a ${INTEGRATOR_API.rateWindowSeconds} s window`, () => {
    expect(rate['Limit']).toBe(
      INTEGRATOR_API.credentialFloodRatePerSecond * INTEGRATOR_API.rateWindowSeconds,
    );
  });

  it("sits above a tenant's usage-plan rate, so a client over its rate meets the plan's 429 first", () => {
    expect(INTEGRATOR_API.credentialFloodRatePerSecond).toBeGreaterThan(INTEGRATOR_API.tenantRatePerSecond);
    expect(rate['EvaluationWindowSec']).toBe(INTEGRATOR_API.rateWindowSeconds);
  });

  it('applies to the integrator routes only', () => {
    expect(rate['ScopeDownStatement']).toEqual({
      ByteMatchStatement: {
        FieldToMatch: { UriPath: {} },
        PositionalConstraint: 'CONTAINS',
        SearchString: '/v1/stores/',
        TextTransformations: [{ Priority: 0, Type: 'NONE' }],
      },
    });
  });

  it('answers 429 with Retry-After and the contract error JSON', () => {
    expect(rule['Action']).toEqual({
      Block: {
        CustomResponse: {
          ResponseCode: 429,
          CustomResponseBodyKey: 'throttled',
          ResponseHeaders: [{ Name: 'Retry-After', Value: String(INTEGRATOR_API.rateWindowSeconds) }],
        },
      },
    });
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      CustomResponseBodies: { throttled: { ContentType: 'APPLICATION_JSON', Content: THROTTLED_BODY } },
    });
    expect(JSON.parse(THROTTLED_BODY)).toEqual({
      error: { code: 'throttled', message: expect.any(String) },
    });
  });

  it('never samples requests (a sample would store Authorization headers, i.e. tokens)', () => {
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      VisibilityConfig: Match.objectLike({ SampledRequestsEnabled: false }),
    });
    expect(rule.VisibilityConfig?.['SampledRequestsEnabled']).toBe(false);
  });
});

describe('integrator credentials', () => {
  it(`caches authorizer decisions for ${AUTHORIZER_CACHE_SECONDS} s, the documented revocation delay`, () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      AuthorizerResultTtlInSeconds: INTEGRATOR_API.authorizerCacheSeconds,
    });
  });

  it('gives the authorizer read-only access to the tokens table', () => {
    const actions = statementsOfRole(template, roleIdOf(http.authorizerFunction)).flatMap((s) =>
      asArray(s.Action),
    );
    expect(actions.filter((a) => a.startsWith('dynamodb:'))).not.toEqual([]);
    expect(actions.filter((a) => /dynamodb:(Put|Update|Delete|BatchWrite)/.test(a))).toEqual([]);
  });
});

describe('no secret in the stack', () => {
  const functions = resourcesOfType(template, 'AWS::Lambda::Function');
  const variables = functions.flatMap(([id, fn]) =>
    Object.entries(
      ((fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
        {}) as Record<string, unknown>,
    ).map(([name, value]) => ({ id, name, value })),
  );
  const KNOWN = new Set<string>([
    ...Object.values(EnvNames),
    'AWS_NODEJS_CONNECTION_REUSE_ENABLED',
    'NODE_OPTIONS',
  ]);

  it('sets only the variables the runtime declares (EnvNames)', () => {
    expect(variables.length).toBeGreaterThan(0);
    expect(variables.filter((v) => !KNOWN.has(v.name)).map((v) => `${v.id}.${v.name}`)).toEqual([]);
  });

  it('no variable is named like a credential (ADMIN_TOKEN, *_SECRET, *_PASSWORD, *_KEY)', () => {
    const suspicious = variables.filter(
      (v) => /ADMIN_TOKEN|SECRET|PASSWORD|(^|_)KEY$|CREDENTIAL/i.test(v.name) || /^AQ_TOKEN$/i.test(v.name),
    );
    expect(suspicious).toEqual([]);
  });

  it('no variable carries a token or key material', () => {
    const carrying = variables.filter(
      (v) => typeof v.value === 'string' && /aqt_|AKIA[0-9A-Z]{16}|-----BEGIN|Bearer /.test(v.value),
    );
    expect(carrying).toEqual([]);
  });

  it('declares no CloudFormation parameter that could carry a token (only CDK’s bootstrap version)', () => {
    const parameters = Object.keys((template.toJSON() as { Parameters?: object }).Parameters ?? {});
    expect(parameters.filter((p) => p !== 'BootstrapVersion')).toEqual([]);
  });

  it('mentions the local admin token nowhere (local mode only)', () => {
    expect(templateJson).not.toMatch(/ADMIN_TOKEN|adminToken/i);
  });
});

describe('TLS only, encryption at rest, log retention', () => {
  it('every queue in the template refuses requests without TLS', () => {
    const queues = resourcesOfType(template, 'AWS::SQS::Queue').map(([id]) => id);
    const denied = resourcesOfType(template, 'AWS::SQS::QueuePolicy')
      .filter(([, p]) =>
        (p.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement.some(
          (s) =>
            s['Effect'] === 'Deny' &&
            JSON.stringify(s['Condition']) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
        ),
      )
      .flatMap(([, p]) => (p.Properties?.Queues as { Ref: string }[]).map((q) => q.Ref));
    expect(queues.length).toBeGreaterThan(0);
    expect(queues.filter((q) => !denied.includes(q))).toEqual([]);
  });

  it('every queue is encrypted at rest', () => {
    const plain = resourcesOfType(template, 'AWS::SQS::Queue').filter(
      ([, q]) => q.Properties?.SqsManagedSseEnabled !== true && q.Properties?.KmsMasterKeyId === undefined,
    );
    expect(plain).toEqual([]);
  });

  it('every table is encrypted at rest with an AWS-managed key', () => {
    const tables = resourcesOfType(template, 'AWS::DynamoDB::Table');
    expect(tables.length).toBeGreaterThan(0);
    expect(
      tables.filter(
        ([, t]) => (t.Properties?.SSESpecification as { SSEEnabled?: boolean })?.SSEEnabled !== true,
      ),
    ).toEqual([]);
  });

  it('every log group has a retention', () => {
    const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.filter(([, g]) => typeof g.Properties?.RetentionInDays !== 'number')).toEqual([]);
  });
});
