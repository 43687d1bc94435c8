import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  AUTHORIZER_CACHE_SECONDS,
  DEFAULT_API_THROTTLING,
  gatewayErrorTemplate,
  ROUTE_NOT_FOUND_BODY,
} from '../../lib/constructs/http-api.js';
import { ROUTES } from '../../lambdas/core/routes.js';
import { arnOf, idsMatching, logicalIdOf, resourcesOfType, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const http = stack.httpApi;
const functionArn = { ingest: arnOf(http.ingestFunction), admin: arnOf(http.adminFunction) } as const;
const AUTHORIZATION_TYPE = { tenant: 'CUSTOM', iam: 'AWS_IAM', none: 'NONE' } as const;

/** Rebuilds a method's path from the template's Resource chain (PathPart + ParentId up to the root). */
const pathOf = (resourceRef: unknown): string => {
  const resources = Object.fromEntries(resourcesOfType(template, 'AWS::ApiGateway::Resource'));
  const parts: string[] = [];
  let ref = resourceRef as { Ref?: string };
  while (ref.Ref !== undefined) {
    const resource = resources[ref.Ref];
    if (!resource) throw new Error(`unknown API resource ${ref.Ref}`);
    parts.unshift(String(resource.Properties?.PathPart));
    ref = resource.Properties?.ParentId as { Ref?: string };
  }
  return `/${parts.join('/')}`;
};

const methodsInTemplate = resourcesOfType(template, 'AWS::ApiGateway::Method').map(
  ([, method]) => `${String(method.Properties?.HttpMethod)} ${pathOf(method.Properties?.ResourceId)}`,
);

describe('HTTP API routes', () => {
  it('has exactly one method per route, plus the catch-all on /{proxy+} and on / (CDK mirrors it at the root) and GET /openapi.json', () => {
    template.resourceCountIs('AWS::ApiGateway::Method', ROUTES.length + 3);
  });

  it('has the catch-all on every other path (ANY /{proxy+}) and on the root (ANY /)', () => {
    expect(methodsInTemplate).toEqual(expect.arrayContaining(['ANY /{proxy+}', 'ANY /']));
  });

  const anonymous = resourcesOfType(template, 'AWS::ApiGateway::Method').filter(
    ([, method]) => method.Properties?.AuthorizationType === 'NONE',
  );
  const integrationOf = ([, method]: (typeof anonymous)[number]) =>
    method.Properties?.Integration as {
      Type: string;
      RequestTemplates?: Record<string, string>;
      PassthroughBehavior?: string;
      IntegrationResponses?: { StatusCode: string; ResponseTemplates?: Record<string, string> }[];
    };

  /** The two catch-alls (ANY), as opposed to the public OpenAPI document (GET /openapi.json). */
  const catchAlls = anonymous.filter(([, method]) => method.Properties?.HttpMethod === 'ANY');
  const routeOf = ([id]: (typeof anonymous)[number]) =>
    methodsInTemplate[
      resourcesOfType(template, 'AWS::ApiGateway::Method').findIndex(([other]) => other === id)
    ];

  it('the only methods without authorization are the two catch-alls and GET /openapi.json', () => {
    expect(anonymous.map(routeOf).sort()).toEqual(['ANY /', 'ANY /{proxy+}', 'GET /openapi.json']);
  });

  it('no method without authorization reaches a function (each is a MOCK integration)', () => {
    expect(anonymous.map(integrationOf).map((i) => i.Type)).toEqual(['MOCK', 'MOCK', 'MOCK']);
  });

  it('the catch-all answers 404 with the contract’s route_not_found body', () => {
    expect(
      catchAlls
        .map(integrationOf)
        .map((i) => i.IntegrationResponses?.[0]?.ResponseTemplates?.['application/json']),
    ).toEqual([ROUTE_NOT_FOUND_BODY, ROUTE_NOT_FOUND_BODY]);
  });

  it('the catch-all’s one integration response is the default one, status 404', () => {
    expect(catchAlls.map(integrationOf).map((i) => i.IntegrationResponses?.map((r) => r.StatusCode))).toEqual(
      [['404'], ['404']],
    );
  });

  it('the catch-all’s body is the contract’s error JSON', () => {
    expect(JSON.parse(ROUTE_NOT_FOUND_BODY)).toEqual({
      error: { code: 'route_not_found', message: expect.any(String) },
    });
  });

  it('the catch-all passes no body through (another content type gets 415, still no function)', () => {
    expect(catchAlls.map(integrationOf).map((i) => i.PassthroughBehavior)).toEqual(['NEVER', 'NEVER']);
  });

  describe.each(ROUTES)('$method $resource', (route) => {
    const methodKey = {
      HttpMethod: route.method,
      ResourceId: { Ref: logicalIdOf(http.methods[route.id].resource) },
    };

    it('exists at the path the route declares', () => {
      expect(methodsInTemplate).toContain(`${route.method} ${route.resource}`);
    });

    it(`uses ${route.auth} authorization`, () => {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        ...methodKey,
        AuthorizationType: AUTHORIZATION_TYPE[route.auth],
      });
    });

    it(`is a Lambda proxy integration of the ${route.fn} function`, () => {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        ...methodKey,
        Integration: {
          Type: 'AWS_PROXY',
          Uri: { 'Fn::Join': ['', Match.arrayWith([functionArn[route.fn]])] },
        },
      });
    });
  });

  it.each(ROUTES.filter((route) => route.auth === 'tenant'))(
    '$method $resource goes through the tenant authorizer',
    (route) => {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: route.method,
        ResourceId: { Ref: logicalIdOf(http.methods[route.id].resource) },
        AuthorizerId: { Ref: logicalIdOf(http.authorizer) },
      });
    },
  );
});

describe('tenant authorizer', () => {
  it('is a TOKEN authorizer', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', { Type: 'TOKEN' });
  });

  it('reads the Authorization header', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      IdentitySource: 'method.request.header.Authorization',
    });
  });

  it(`caches results for ${AUTHORIZER_CACHE_SECONDS} s`, () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_SECONDS,
    });
  });

  it('invokes the authorizer function', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      AuthorizerUri: { 'Fn::Join': ['', Match.arrayWith([arnOf(http.authorizerFunction)])] },
    });
  });

  it('lets API Gateway invoke the authorizer function', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: arnOf(http.authorizerFunction),
      Principal: 'apigateway.amazonaws.com',
    });
  });
});

describe('API stage', () => {
  it(`throttles every method at ${DEFAULT_API_THROTTLING.rateLimit} rps by default`, () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: DEFAULT_API_THROTTLING.rateLimit,
        }),
      ]),
    });
  });

  it(`allows bursts of ${DEFAULT_API_THROTTLING.burstLimit} by default`, () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingBurstLimit: DEFAULT_API_THROTTLING.burstLimit,
        }),
      ]),
    });
  });

  it('writes access logs to its log group', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      // cdk.json's logGroupDestinationArnWithoutWildcard builds it from the name, without the Arn attribute's ':*'.
      AccessLogSetting: {
        DestinationArn: { 'Fn::Join': ['', Match.arrayWith([{ Ref: logicalIdOf(http.accessLogGroup) }])] },
      },
    });
  });

  it('logs each request’s X-Ray trace id (the trace its tasks carry to the marketplace)', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { Format: Match.stringLikeRegexp('"xrayTraceId":"\\$context.xrayTraceId"') },
    });
  });

  it('traces by default', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
  });

  it('is a regional endpoint', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
  });

  it('sets the account role API Gateway needs to write access logs', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
  });

  it('keeps its access logs for a month', () => {
    expect(idsMatching(template, 'AWS::Logs::LogGroup', { RetentionInDays: 30 })).toContain(
      logicalIdOf(http.accessLogGroup),
    );
  });
});

describe('gateway responses', () => {
  it('answers an authorizer failure (not a refusal) as the contract 503', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'AUTHORIZER_FAILURE',
      StatusCode: '503',
      ResponseTemplates: { 'application/json': gatewayErrorTemplate('dependency_unavailable') },
    });
  });

  it.each(['MISSING_AUTHENTICATION_TOKEN', 'INVALID_SIGNATURE', 'EXPIRED_TOKEN'])(
    'answers %s as the contract 401 unauthorized',
    (responseType) => {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: responseType,
        StatusCode: '401',
        ResponseTemplates: { 'application/json': gatewayErrorTemplate('unauthorized') },
      });
    },
  );

  it.each([
    ['UNAUTHORIZED', 'unauthorized'],
    ['ACCESS_DENIED', 'forbidden'],
    ['THROTTLED', 'throttled'],
    ['DEFAULT_4XX', 'bad_request'],
    ['DEFAULT_5XX', 'gateway_error'],
  ])('answers %s with the contract error body', (responseType, code) => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: responseType,
      ResponseTemplates: { 'application/json': gatewayErrorTemplate(code) },
    });
  });
});
