import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  ResponseType,
  RestApi,
  TokenAuthorizer,
  type Method,
  type MethodOptions,
} from 'aws-cdk-lib/aws-apigateway';
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
import { INTEGRATOR_API, NO_USAGE_KEY_MESSAGE } from '../../lambdas/config/topology.js';
import { grantStoreQueues } from '../store-queue-access.js';
import { requirePositiveNumber } from '../validation.js';
import { ServiceFunction } from './lambda-function.js';
import type { ServiceWiring } from './service-wiring.js';
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
   * X-Ray tracing of the stage.
   * @default false
   */
  readonly tracingEnabled?: boolean;
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
  /** `ANY /{proxy+}`: unknown routes, answered 404 by the admin function. */
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
    const { tables, attentionQueue, queuePrefix } = props;
    const functionDefaults = {
      environment: props.environment,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
    };

    this.ingestFunction = new ServiceFunction(this, 'Ingest', {
      name: 'ingest',
      ...functionDefaults,
    }).function;
    tables.stores.grantReadData(this.ingestFunction);
    tables.dispatch.grantReadWriteData(this.ingestFunction);
    tables.deliveries.grantReadData(this.ingestFunction);
    attentionQueue.grantSendMessages(this.ingestFunction);
    grantStoreQueues(this, this.ingestFunction, queuePrefix, 'ingest');

    this.authorizerFunction = new ServiceFunction(this, 'Authorizer', {
      name: 'authorizer',
      ...functionDefaults,
    }).function;
    tables.tokens.grantReadData(this.authorizerFunction);

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
      deployOptions: {
        stageName: API_STAGE_NAME,
        throttlingRateLimit: rateLimit,
        throttlingBurstLimit: burstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: ACCESS_LOG_FORMAT,
        tracingEnabled: props.tracingEnabled ?? false,
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
    tables.stores.grantReadWriteData(this.adminFunction);
    tables.dispatch.grantReadWriteData(this.adminFunction);
    tables.tokens.grantReadWriteData(this.adminFunction);
    attentionQueue.grantSendMessages(this.adminFunction);
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
    // Any other path reaches the admin function, which answers the contract's 404 route_not_found,
    // as local mode does; without it API Gateway would answer 403 MissingAuthenticationToken.
    this.catchAll = this.api.root
      .addProxy({ anyMethod: false })
      .addMethod('ANY', integrations.admin, this.methodOptions('none'));
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
