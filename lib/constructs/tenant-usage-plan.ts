import { ArnFormat, Stack } from 'aws-cdk-lib';
import { UsagePlan, type RestApi, type Stage } from 'aws-cdk-lib/aws-apigateway';
import { Effect, Policy, PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { INTEGRATOR_API } from '../../lambdas/config/topology.js';
import { requireIntegerInRange, requirePositiveNumber } from '../validation.js';

export interface TenantThrottling {
  /**
   * Steady requests per second one tenant may make, across all its tokens.
   * @default INTEGRATOR_API.tenantRatePerSecond (50)
   */
  readonly rateLimit?: number;
  /**
   * Requests one tenant may make at once above the steady rate (the bucket's depth).
   * @default INTEGRATOR_API.tenantBurst (100)
   */
  readonly burstLimit?: number;
}

export interface TenantUsagePlanProps extends TenantThrottling {
  /** The API whose key source is AUTHORIZER and whose integrator methods require an API key. */
  readonly api: RestApi;
  /**
   * The stage's name as a literal. Not `api.deploymentStage.stageName`: that is a reference to the stage,
   * and the admin function, which the stage depends on through its methods, needs this value.
   */
  readonly stageName: string;
  /** The stage itself, which the plan is bound to. */
  readonly stage: Stage;
}

/**
 * Per-tenant throttling in API Gateway: one usage plan on the API stage, throttling each API key, and
 * one API key per tenant, created at run time by the admin function when it issues the tenant's first
 * token. The authorizer returns the tenant's key as `usageIdentifierKey` (key source AUTHORIZER), so
 * every token of a tenant draws on one bucket, and API Gateway answers 429 THROTTLED beyond it. Usage
 * plan throttling is best-effort (AWS's words): the WAF flood rule (TenantRateLimit) stays in front.
 * One key per tenant spends API Gateway's fixed quota of 10,000 API keys per account and region.
 */
export class TenantUsagePlan extends Construct {
  public readonly usagePlan: UsagePlan;
  public readonly rateLimit: number;
  public readonly burstLimit: number;
  /** `{restApiId}:{stageName}`: how the admin function finds the plan (AQ_USAGE_PLAN_STAGE). */
  public readonly apiStage: string;

  constructor(scope: Construct, id: string, props: TenantUsagePlanProps) {
    super(scope, id);
    this.rateLimit = requirePositiveNumber(
      'tenantThrottling.rateLimit',
      props.rateLimit ?? INTEGRATOR_API.tenantRatePerSecond,
    );
    // API Gateway takes the burst as a whole number of requests.
    this.burstLimit = requireIntegerInRange(
      'tenantThrottling.burstLimit',
      props.burstLimit ?? INTEGRATOR_API.tenantBurst,
      1,
      Number.MAX_SAFE_INTEGER,
    );
    this.usagePlan = new UsagePlan(this, 'Plan', {
      // No quota: the contract has throttling, not a monthly allowance.
      description: 'Attention Queue: one API key per tenant, throttled per key',
      throttle: { rateLimit: this.rateLimit, burstLimit: this.burstLimit },
      apiStages: [{ api: props.api, stage: props.stage }],
    });
    this.apiStage = `${props.api.restApiId}:${props.stageName}`;
  }

  /**
   * Lets `role` find the plan, find and create API keys and add them to this plan: GET on the usage plan
   * list, GET and POST on the API key collection, POST on this plan's keys; nothing else, no wildcard. A
   * separate policy, not the role's default one: a function depends on its default policy, and this one
   * names the plan, which depends (through the stage and its methods) on the function.
   */
  grantKeyManagement(role: IRole): Policy {
    const stack = Stack.of(this);
    const arn = (resource: string): string =>
      stack.formatArn({
        service: 'apigateway',
        account: '',
        resource,
        arnFormat: ArnFormat.NO_RESOURCE_NAME,
      });
    const policy = new Policy(this, 'KeyManagement', {
      statements: [
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['apigateway:GET'],
          resources: [arn('/usageplans')],
        }),
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['apigateway:GET', 'apigateway:POST'],
          resources: [arn('/apikeys')],
        }),
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['apigateway:POST'],
          resources: [arn(`/usageplans/${this.usagePlan.usagePlanId}/keys`)],
        }),
      ],
    });
    policy.attachToRole(role);
    return policy;
  }
}
