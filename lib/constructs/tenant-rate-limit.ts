import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { INTEGRATOR_API } from '../../lambdas/config/topology.js';
import { errorBody } from '../../lambdas/core/http.js';
import { requirePositiveNumber } from '../validation.js';

export interface TenantRateLimitProps {
  /** The API stage to protect. */
  readonly stage: Stage;
  /**
   * Requests per second one integrator credential may make, averaged over `windowSeconds`: a flood
   * ceiling above the per-tenant rate the usage plan enforces.
   * @default INTEGRATOR_API.credentialFloodRatePerSecond (200)
   */
  readonly ratePerSecond?: number;
  /**
   * The rate rule's evaluation window: 60, 120, 300 or 600 seconds (WAF's choices).
   * @default INTEGRATOR_API.rateWindowSeconds (60)
   */
  readonly windowSeconds?: 60 | 120 | 300 | 600;
}

/** WAF's header keys are case-insensitive; the body is the contract's error JSON. */
export const THROTTLED_BODY = JSON.stringify(
  errorBody('throttled', 'too many requests for this credential; retry after the Retry-After seconds'),
);

/**
 * The outer layer of integrator throttling: a WAF rate-based rule keyed on the Authorization header of
 * integrator routes, answering 429 with Retry-After and the contract's JSON. It runs before the
 * authorizer, so a flood (even of made-up tokens) costs no Lambda invocation, and it is exact where the
 * usage plan is best-effort; but it counts per credential, over a window, at a ceiling well above a
 * tenant's rate. The per-tenant limit is the usage plan (TenantUsagePlan), which every token of a tenant
 * shares. Sampled requests stay off: they would store Authorization headers (tokens) in WAF.
 */
export class TenantRateLimit extends Construct {
  public readonly webAcl: CfnWebACL;
  public readonly association: CfnWebACLAssociation;
  /** Requests per window per credential (WAF's `limit`). */
  public readonly limit: number;
  /** The web ACL's name (the `WebACL` dimension of AWS/WAFV2 metrics). */
  public readonly webAclName: string;
  /** The flood rule's metric name (the `Rule` dimension of AWS/WAFV2 metrics). */
  public readonly ruleMetricName = 'PerCredentialRate';

  constructor(scope: Construct, id: string, props: TenantRateLimitProps) {
    super(scope, id);
    const ratePerSecond = requirePositiveNumber(
      'ratePerSecond',
      props.ratePerSecond ?? INTEGRATOR_API.credentialFloodRatePerSecond,
    );
    const windowSeconds = props.windowSeconds ?? INTEGRATOR_API.rateWindowSeconds;
    // WAF's floor is 10 requests per window.
    this.limit = Math.max(10, Math.round(ratePerSecond * windowSeconds));
    // Named, so the alarms can name it (the `WebACL` dimension of its metrics); one per stack and region.
    this.webAclName = `${Stack.of(this).stackName}-integrator-flood`;
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: this.webAclName,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: {
        cloudWatchMetricsEnabled: true,
        metricName: 'IntegratorApi',
        sampledRequestsEnabled: false,
      },
      customResponseBodies: {
        throttled: { contentType: 'APPLICATION_JSON', content: THROTTLED_BODY },
      },
      rules: [
        {
          name: 'per-credential-rate',
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: this.limit,
              evaluationWindowSec: windowSeconds,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [
                { header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } },
              ],
              // Integrator routes only (the path WAF sees includes the stage name, hence CONTAINS).
              scopeDownStatement: {
                byteMatchStatement: {
                  fieldToMatch: { uriPath: {} },
                  positionalConstraint: 'CONTAINS',
                  searchString: '/v1/stores/',
                  textTransformations: [{ priority: 0, type: 'NONE' }],
                },
              },
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'throttled',
                responseHeaders: [{ name: 'Retry-After', value: String(windowSeconds) }],
              },
            },
          },
          visibilityConfig: {
            cloudWatchMetricsEnabled: true,
            metricName: this.ruleMetricName,
            sampledRequestsEnabled: false,
          },
        },
      ],
    });
    this.association = new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
