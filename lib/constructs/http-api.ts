import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MockIntegration,
  PassthroughBehavior,
  ResponseType,
  RestApi,
  TokenAuthorizer,
  type Method,
  type MethodOptions,
} from 'aws-cdk-lib/aws-apigateway';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  ROUTES,
  type RouteAuth,
  type RouteFunction,
  type RouteId,
  type RouteSpec,
} from '../../lambdas/core/routes.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { FUNCTIONS, INTEGRATOR_API, NO_USAGE_KEY_MESSAGE } from '../../lambdas/config/topology.js';
import { errorBody } from '../../lambdas/core/http.js';
import { grantStoreQueues } from '../store-queue-access.js';
import { grantTables } from '../table-access.js';
import { InvalidPropError, requirePositiveNumber } from '../validation.js';
import { ServiceFunction } from './lambda-function.js';
import { grantAttentionSends, type ServiceWiring } from './service-wiring.js';
import { TenantRateLimit } from './tenant-rate-limit.js';
import { TenantUsagePlan, type TenantThrottling } from './tenant-usage-plan.js';

/** Default method throttling of the stage: well under the account-wide 10,000 rps so one API cannot starve others. */
export const DEFAULT_API_THROTTLING = { rateLimit: 1000, burstLimit: 2000 } as const;
/**
 * How long API Gateway caches the authorizer's answer for one token: a revoked or expired token keeps
 * working for at most this long (local mode emulates the same cache).
 */
export const AUTHORIZER_CACHE_SECONDS = INTEGRATOR_API.authorizerCacheSeconds;
/** The one stage (a literal: the admin function is told it, and may not depend on the stage resource). */
export const API_STAGE_NAME = 'prod';

/** API Gateway's integration timeout for REST APIs (the default quota): a slower function answers 504. */
export const API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS = 29;

/** 'account', or the IAM principal ARNs allowed to call the admin routes. */
export type AdminAccess = 'account' | readonly string[];

/** The contract's answer to a path that is no route, given by API Gateway itself (a MOCK integration). */
export const ROUTE_NOT_FOUND_BODY = JSON.stringify(
  errorBody('route_not_found', 'no route for this method and path'),
);

export interface ApiThrottling {
  /**
   * Steady-state requests per second across the stage.
   * @default DEFAULT_API_THROTTLING.rateLimit (1000)
   */
  readonly rateLimit?: number;
  /**
   * Burst capacity across the stage.
   * @default DEFAULT_API_THROTTLING.burstLimit (2000)
   */
  readonly burstLimit?: number;
}

export interface HttpApiProps extends ServiceWiring {
  /**
   * Default method throttling of the stage.
   * @default DEFAULT_API_THROTTLING
   */
  readonly throttling?: ApiThrottling;
  /**
   * Per-tenant throttling of the integrator routes (the usage plan's per-key throttle).
   * @default INTEGRATOR_API's tenantRatePerSecond (50) and tenantBurst (100)
   */
  readonly tenantThrottling?: TenantThrottling;
  /**
   * Who may call the admin routes, as an API resource policy on top of IAM authorization: 'account' (any
   * IAM principal of this account the caller's IAM policy allows), or the ARNs of the roles and users that
   * may (everyone else is denied, whatever their IAM policy says).
   * @default - no resource policy: IAM authorization alone decides
   */
  readonly adminAccess?: AdminAccess;
  /**
   * Create the account-level role API Gateway needs to write access logs. It is a per-region account
   * setting: pass false when another stack already manages it.
   * @default true
   */
  readonly cloudWatchRole?: boolean;
}

/**
 * API Gateway answers some requests itself (bad credential, throttling, unknown route). Give those the
 * contract's error body too: {"error":{"code","message"}}.
 */
const GATEWAY_ERRORS: readonly {
  type: ResponseType;
  code: string;
  statusCode?: string;
  headers?: Record<string, string>;
  message?: string;
}[] = [
  { type: ResponseType.UNAUTHORIZED, code: 'unauthorized' },
  { type: ResponseType.ACCESS_DENIED, code: 'forbidden' },
  // Contract: 401 for a missing or bad credential. Unknown routes never get here: the catch-all answers 404.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, code: 'unauthorized', statusCode: '401' },
  { type: ResponseType.INVALID_SIGNATURE, code: 'unauthorized', statusCode: '401' },
  { type: ResponseType.EXPIRED_TOKEN, code: 'unauthorized', statusCode: '401' },
  // The authorizer failed (e.g. DynamoDB unreachable), which is not the caller's fault.
  { type: ResponseType.AUTHORIZER_FAILURE, code: 'dependency_unavailable', statusCode: '503' },
  // An integrator route without a usage key from the authorizer: a token issued before per-tenant throttling.
  { type: ResponseType.INVALID_API_KEY, code: 'forbidden', statusCode: '403', message: NO_USAGE_KEY_MESSAGE },
  // Usage-plan (per tenant) and stage throttling are token buckets refilled every second: one second is an
  // honest Retry-After.
  { type: ResponseType.THROTTLED, code: 'throttled', headers: { 'Retry-After': "'1'" } },
  { type: ResponseType.REQUEST_TOO_LARGE, code: 'payload_too_large' },
  { type: ResponseType.DEFAULT_4XX, code: 'bad_request' },
  { type: ResponseType.DEFAULT_5XX, code: 'gateway_error' },
];

/** API Gateway's own message (`$context.error.messageString`, already quoted) unless one is given. */
export const gatewayErrorTemplate = (code: string, message?: string): string =>
  `{"error":{"code":"${code}","message":${message === undefined ? '$context.error.messageString' : JSON.stringify(message)}}}`;

const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    requestTime: AccessLogField.contextRequestTime(),
    ip: AccessLogField.contextIdentitySourceIp(),
    // IAM caller on admin routes, the authorizer's principal (tenant) on integrator routes.
    caller: AccessLogField.contextIdentityUserArn(),
    principalId: AccessLogField.contextAuthorizerPrincipalId(),
    httpMethod: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    errorType: AccessLogField.contextErrorResponseType(),
    authorizerError: AccessLogField.contextAuthorizerError(),
    // The request's X-Ray trace: the trace its tasks carry to their marketplace calls (README, X-Ray).
    xrayTraceId: AccessLogField.contextXrayTraceId(),
  }),
);

/**
 * The REST API (API Gateway v1: Lambda TOKEN authorizer with caching and IAM auth per method), built
 * by iterating ROUTES, and the three functions behind it: ingest, admin and the tenant authorizer.
 * Integrator routes are throttled per tenant by a usage plan (the authorizer supplies each tenant's API
 * key) behind a per-credential WAF flood rule.
 */
export class HttpApi extends Construct {
  public readonly api: RestApi;
  public readonly authorizer: TokenAuthorizer;
  public readonly accessLogGroup: LogGroup;
  public readonly ingestFunction: NodejsFunction;
  public readonly adminFunction: NodejsFunction;
  public readonly authorizerFunction: NodejsFunction;
  /** One API Gateway method per route id. */
  public readonly methods: Readonly<Record<RouteId, Method>>;
  /** `ANY /{proxy+}`: unknown routes, answered 404 by API Gateway itself (MOCK), no function invoked. */
  public readonly catchAll: Method;
  /** The per-tenant limit: a usage plan throttling each tenant's API key (429 THROTTLED, Retry-After 1). */
  public readonly tenantUsagePlan: TenantUsagePlan;
  /** The outer layer: a per-credential flood rule (WAF) on the integrator routes, before the authorizer. */
  public readonly tenantRateLimit: TenantRateLimit;

  constructor(scope: Construct, id: string, props: HttpApiProps) {
    super(scope, id);
    const rateLimit = requirePositiveNumber(
      'throttling.rateLimit',
      props.throttling?.rateLimit ?? DEFAULT_API_THROTTLING.rateLimit,
    );
    const burstLimit = requirePositiveNumber(
      'throttling.burstLimit',
      props.throttling?.burstLimit ?? DEFAULT_API_THROTTLING.burstLimit,
    );
    const { tables, attentionQueues, queuePrefix } = props;
    const tracing = props.tracing ?? true;
    // A function behind API Gateway must finish before the gateway gives up on it, or the caller sees 504
    // while the work goes on (and a retry runs it twice).
    for (const fn of ['ingest', 'admin'] as const) {
      if (FUNCTIONS[fn].timeoutSeconds >= API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS) {
        throw new InvalidPropError(
          `FUNCTIONS.${fn}.timeoutSeconds (${FUNCTIONS[fn].timeoutSeconds}) must be under API Gateway's ${API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS} s integration timeout`,
        );
      }
    }
    const functionDefaults = {
      environment: props.environment,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
    };

    this.ingestFunction = new ServiceFunction(this, 'Ingest', {
      name: 'ingest',
      ...functionDefaults,
    }).function;
    grantTables('ingest', this.ingestFunction, tables);
    grantAttentionSends(attentionQueues, this.ingestFunction);
    grantStoreQueues(this, this.ingestFunction, queuePrefix, 'ingest');

    this.authorizerFunction = new ServiceFunction(this, 'Authorizer', {
      name: 'authorizer',
      ...functionDefaults,
    }).function;
    grantTables('authorizer', this.authorizerFunction, tables);

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });

    const cloudWatchRole = props.cloudWatchRole ?? true;
    this.api = new RestApi(this, 'Api', {
      description: 'Attention Queue: integrator and admin API',
      // Server-to-server callers: no CloudFront edge in front.
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole,
      // Deleting this stack must not take logging away from other APIs in the account.
      cloudWatchRoleRemovalPolicy: cloudWatchRole ? RemovalPolicy.RETAIN : undefined,
      // Integrator methods require an API key, which the tenant authorizer supplies (usageIdentifierKey):
      // clients never send one, and an x-api-key header they send is ignored.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      policy: adminAccessPolicy(props.adminAccess),
      deployOptions: {
        stageName: API_STAGE_NAME,
        throttlingRateLimit: rateLimit,
        throttlingBurstLimit: burstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: ACCESS_LOG_FORMAT,
        tracingEnabled: tracing,
      },
    });

    this.tenantUsagePlan = new TenantUsagePlan(this, 'TenantUsagePlan', {
      api: this.api,
      stage: this.api.deploymentStage,
      stageName: API_STAGE_NAME,
      ...props.tenantThrottling,
    });

    // The admin function issues tokens, and with a tenant's first token its API key in the usage plan.
    this.adminFunction = new ServiceFunction(this, 'Admin', {
      name: 'admin',
      ...functionDefaults,
      environment: { ...props.environment, [EnvNames.usagePlanStage]: this.tenantUsagePlan.apiStage },
    }).function;
    grantTables('admin', this.adminFunction, tables);
    grantAttentionSends(attentionQueues, this.adminFunction);
    grantStoreQueues(this, this.adminFunction, queuePrefix, 'admin');
    if (!this.adminFunction.role) throw new Error('the admin function has no role');
    this.tenantUsagePlan.grantKeyManagement(this.adminFunction.role);

    this.authorizer = new TokenAuthorizer(this, 'TenantAuthorizer', {
      handler: this.authorizerFunction,
      identitySource: IdentitySource.header('Authorization'),
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
    });

    for (const { type, code, statusCode, headers, message } of GATEWAY_ERRORS) {
      this.api.addGatewayResponse(`GatewayError${type.responseType}`, {
        type,
        statusCode,
        responseHeaders: headers,
        templates: { 'application/json': gatewayErrorTemplate(code, message) },
      });
    }

    // One integration per function; each method still gets its own invoke permission, scoped to it.
    const integrations: Record<RouteFunction, LambdaIntegration> = {
      ingest: new LambdaIntegration(this.ingestFunction, { allowTestInvoke: false }),
      admin: new LambdaIntegration(this.adminFunction, { allowTestInvoke: false }),
    };
    const methods: Partial<Record<RouteId, Method>> = {};
    for (const route of ROUTES as readonly (RouteSpec & { id: RouteId })[]) {
      methods[route.id] = this.api.root
        .resourceForPath(route.resource)
        .addMethod(route.method, integrations[route.fn], this.methodOptions(route.auth));
    }
    this.methods = methods as Record<RouteId, Method>;
    // Any other path gets the contract's 404 route_not_found (as local mode answers), from API Gateway
    // itself: without these methods it would answer 403 MissingAuthenticationToken, and sent to a function
    // an anonymous flood would be billed as invocations and eat the concurrency ingest and the authorizer share.
    const notFound = new MockIntegration({
      requestTemplates: { 'application/json': '{"statusCode": 404}' },
      // Another content type gets 415 (the contract's bad_request JSON), still without a function.
      passthroughBehavior: PassthroughBehavior.NEVER,
      integrationResponses: [
        { statusCode: '404', responseTemplates: { 'application/json': ROUTE_NOT_FOUND_BODY } },
      ],
    });
    const notFoundOptions: MethodOptions = {
      ...this.methodOptions('none'),
      methodResponses: [{ statusCode: '404' }],
    };
    // CDK adds the same method to the root (`ANY /`) when the proxy hangs off it.
    this.catchAll = this.api.root.addProxy({ anyMethod: false }).addMethod('ANY', notFound, notFoundOptions);
    this.tenantRateLimit = new TenantRateLimit(this, 'TenantRateLimit', { stage: this.api.deploymentStage });
  }

  private methodOptions(auth: RouteAuth): MethodOptions {
    switch (auth) {
      case 'tenant':
        // apiKeyRequired puts the method under the tenant usage plan (the key comes from the authorizer).
        return {
          authorizationType: AuthorizationType.CUSTOM,
          authorizer: this.authorizer,
          apiKeyRequired: true,
        };
      case 'iam':
        return { authorizationType: AuthorizationType.IAM };
      case 'none':
        return { authorizationType: AuthorizationType.NONE };
    }
  }
}

/**
 * The admin routes' resource policy: every path stays open to API Gateway's own authorization (the
 * tenant authorizer, IAM), and `/admin/*` is denied to any caller outside `access`. A deny is the only way
 * to narrow IAM authorization: in one account, an allow in either the resource policy or the caller's IAM
 * policy suffices.
 */
export const adminAccessPolicy = (access: AdminAccess | undefined): PolicyDocument | undefined => {
  if (access === undefined) return undefined;
  if (access !== 'account' && access.length === 0) {
    throw new InvalidPropError("adminAccess must be 'account' or at least one principal ARN");
  }
  for (const arn of access === 'account' ? [] : access) {
    if (!/^arn:aws[a-z-]*:(iam|sts)::\d{12}:[\w+=,.@/*-]+$/.test(arn)) {
      throw new InvalidPropError(`adminAccess: '${arn}' is not an IAM principal ARN`);
    }
  }
  const adminPaths = 'execute-api:/*/*/admin/*';
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        effect: Effect.ALLOW,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: ['execute-api:/*'],
      }),
      new PolicyStatement({
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: [adminPaths],
        // A missing key (an anonymous caller) satisfies a Not condition, so it is denied too.
        conditions:
          access === 'account'
            ? { StringNotEquals: { 'aws:PrincipalAccount': Aws.ACCOUNT_ID } }
            : { ArnNotLike: { 'aws:PrincipalArn': [...access] } },
      }),
    ],
  });
};
