import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { EnvNames } from '../lambdas/config/env-names.js';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { AttentionQueue } from './constructs/attention-queue.js';
import { AttentionWorkers } from './constructs/attention-workers.js';
import { DataTables } from './constructs/data-tables.js';
import { HttpApi, type AdminAccess, type ApiThrottling } from './constructs/http-api.js';
import type { TenantThrottling } from './constructs/tenant-usage-plan.js';
import { Monitoring, type AlarmThresholds } from './constructs/monitoring.js';
import { OpenApiRoute } from './constructs/openapi-route.js';
import { Reconciler } from './constructs/reconciler.js';
import { RequestValidation } from './constructs/request-validation.js';
import type { ServiceWiring } from './constructs/service-wiring.js';
import {
  runtimeSettingsEnvironment,
  type DeployEnvironment,
  type RuntimeSettings,
} from './function-environment.js';
import { requireConcurrencyFits } from './concurrency-check.js';
import { requireHttpsUrl, requireQueuePrefix } from './validation.js';
import type { PriorityShares } from '../lambdas/core/priority-shares.js';

export const DEFAULT_QUEUE_PREFIX = 'aq';

export interface AttentionQueueStackProps extends StackProps {
  /** Base URL tasks are delivered to (`POST {base}/{marketplace}/stores/{storeId}/tasks`). Must be https. */
  readonly marketplaceBaseUrl: string;
  /**
   * Prefix of the store queues the admin function creates; IAM grants are scoped to `<prefix>-s-*`.
   * Must match QUEUE_PREFIX_PATTERN. Give each deployment in one account and region its own prefix.
   * @default DEFAULT_QUEUE_PREFIX ('aq')
   */
  readonly queuePrefix?: string;
  /**
   * Attention worker invocations running at once, shared by the levels' event sources (the confirm queue's
   * CONFIRM_EVENT_SOURCE.maxConcurrency run beside them; all reserved).
   * @default WORKER_EVENT_SOURCE.defaultPoolSize
   */
  readonly workerPoolSize?: number;
  /**
   * Attentions per worker invocation, whose slices run concurrently (1–10): one worker holds up to this
   * many slices, so their end-of-slice long polls overlap.
   * @default WORKER_EVENT_SOURCE.defaultBatchSize (10)
   */
  readonly workerBatchSize?: number;
  /**
   * Store priority: each level's share of the worker pool, in percent (high, normal, low). On AWS each
   * level's event source gets that part of the pool as its MaximumConcurrency (see AttentionWorkers).
   * @default DEFAULT_PRIORITY_SHARES (50/30/20)
   */
  readonly workerPoolShares?: PriorityShares;
  /**
   * Slices each level may run beyond its share when it has the work; the worker function reserves
   * 3 × this much more concurrency.
   * @default 0
   */
  readonly workerPoolBurst?: number;
  /**
   * Whether unused share flows between levels (`-c workerPoolLoans=false` turns it off): each reconciler run
   * lends the floors a level leaves unused to levels with attentions waiting. See AttentionWorkersProps.poolLoans.
   * @default true
   */
  readonly workerPoolLoans?: boolean;
  /**
   * Removal policy of the tables and log groups. Dev stacks may pass DESTROY.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Default method throttling of the API stage.
   * @default DEFAULT_API_THROTTLING (1000 rps, 2000 burst)
   */
  readonly apiThrottling?: ApiThrottling;
  /**
   * Per-tenant throttling of the integrator routes (the usage plan's per-key rate and burst).
   * @default INTEGRATOR_API's tenantRatePerSecond (50) and tenantBurst (100)
   */
  readonly apiTenantThrottling?: TenantThrottling;
  /**
   * X-Ray active tracing of every function (Powertools Tracer records the SDK calls and the marketplace
   * call) and of the API stage.
   * @default true
   */
  readonly tracing?: boolean;
  /**
   * Who may call the admin routes beyond what IAM authorization checks: 'account', or principal ARNs.
   * @default - IAM authorization alone
   */
  readonly adminAccess?: AdminAccess;
  /**
   * The account's Lambda concurrency limit in this region. The stack reserves concurrency (the worker
   * pool with its loans and the confirm queue's invocations, the reconciler) and checks at synth that the reservation leaves the 100 unreserved executions
   * AWS requires; new accounts may start far below the default (Service Quotas, "Concurrent executions").
   * @default DEFAULT_ACCOUNT_CONCURRENCY_LIMIT (1000)
   */
  readonly accountConcurrencyLimit?: number;
  /**
   * Create API Gateway's account-level CloudWatch role (needed for access logs). Pass false when
   * the account already has one managed elsewhere.
   * @default true
   */
  readonly apiCloudWatchRole?: boolean;
  /**
   * Retention of every log group of the stack.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Optional runtime tuning passed to the functions as environment variables.
   * @default - the runtime's defaults
   */
  readonly runtimeSettings?: RuntimeSettings;
  /**
   * Email address subscribed to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * Alarm thresholds; fields left out keep their defaults.
   * @default DEFAULT_ALARM_THRESHOLDS
   */
  readonly alarmThresholds?: Partial<AlarmThresholds>;
}

/** The Attention Queue service. This class only wires the constructs together. */
export class AttentionQueueStack extends Stack {
  public readonly queuePrefix: string;
  /** X-Ray tracing of the functions and the API stage. */
  public readonly tracing: boolean;
  public readonly tables: DataTables;
  public readonly attention: AttentionQueue;
  public readonly httpApi: HttpApi;
  public readonly openApi: OpenApiRoute;
  public readonly requestValidation: RequestValidation;
  public readonly workers: AttentionWorkers;
  public readonly reconciler: Reconciler;
  public readonly monitoring: Monitoring;
  /** Every function of the stack, by its topology name. */
  public readonly functions: Readonly<Record<FunctionName, NodejsFunction>>;

  constructor(scope: Construct, id: string, props: AttentionQueueStackProps) {
    super(scope, id, props);
    this.queuePrefix = requireQueuePrefix('queuePrefix', props.queuePrefix ?? DEFAULT_QUEUE_PREFIX);
    const marketplaceBaseUrl = requireHttpsUrl('marketplaceBaseUrl', props.marketplaceBaseUrl);
    const settings = runtimeSettingsEnvironment(props.runtimeSettings);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.tracing = props.tracing ?? true;

    this.tables = new DataTables(this, 'Tables', { removalPolicy });
    this.attention = new AttentionQueue(this, 'Attention');

    const environment: DeployEnvironment = {
      [EnvNames.queuePrefix]: this.queuePrefix,
      [EnvNames.storesTable]: this.tables.stores.tableName,
      [EnvNames.dispatchTable]: this.tables.dispatch.tableName,
      [EnvNames.tokensTable]: this.tables.tokens.tableName,
      [EnvNames.deliveriesTable]: this.tables.deliveries.tableName,
      [EnvNames.attentionQueueUrl]: this.attention.levels.normal.queueUrl,
      [EnvNames.attentionQueueUrlHigh]: this.attention.levels.high.queueUrl,
      [EnvNames.attentionQueueUrlLow]: this.attention.levels.low.queueUrl,
      [EnvNames.confirmQueueUrl]: this.attention.confirm.queueUrl,
      [EnvNames.marketplaceBaseUrl]: marketplaceBaseUrl,
      ...settings,
    };
    const wiring: ServiceWiring = {
      tables: this.tables.all,
      attentionQueues: this.attention.levels,
      queuePrefix: this.queuePrefix,
      environment,
      logRetention: props.logRetention,
      logRemovalPolicy: removalPolicy,
      tracing: this.tracing,
    };

    this.httpApi = new HttpApi(this, 'Http', {
      ...wiring,
      throttling: props.apiThrottling,
      tenantThrottling: props.apiTenantThrottling,
      cloudWatchRole: props.apiCloudWatchRole,
      adminAccess: props.adminAccess,
    });
    // The OpenAPI document (route and outputs) and the integrator routes' request models (issue #14).
    this.openApi = new OpenApiRoute(this, 'OpenApi', { api: this.httpApi.api });
    this.requestValidation = new RequestValidation(this, 'RequestValidation', {
      api: this.httpApi.api,
      methods: this.httpApi.methods,
    });
    this.workers = new AttentionWorkers(this, 'Workers', {
      ...wiring,
      confirmQueue: this.attention.confirm,
      poolSize: props.workerPoolSize,
      batchSize: props.workerBatchSize,
      priorityShares: props.workerPoolShares,
      poolBurst: props.workerPoolBurst,
      poolLoans: props.workerPoolLoans,
    });
    this.reconciler = new Reconciler(this, 'Reconciler', {
      ...wiring,
      // With loans off too: a run then brings caps raised before the switch back to the floors.
      levelCaps: {
        floors: this.workers.levelConcurrency,
        eventSources: this.workers.eventSources,
        loans: this.workers.poolLoans,
      },
    });
    this.functions = {
      ingest: this.httpApi.ingestFunction,
      admin: this.httpApi.adminFunction,
      authorizer: this.httpApi.authorizerFunction,
      worker: this.workers.function,
      reconciler: this.reconciler.function,
    };

    requireConcurrencyFits(this.functions, props.accountConcurrencyLimit);

    this.monitoring = new Monitoring(this, 'Monitoring', {
      queuePrefix: this.queuePrefix,
      attentionQueues: this.attention.levels,
      confirmQueue: this.attention.confirm,
      attentionDeadLetterQueue: this.attention.deadLetterQueue,
      functions: this.functions,
      workerLogGroup: this.workers.logGroup,
      api: this.httpApi.api,
      tables: this.tables.all,
      webAcl: {
        name: this.httpApi.tenantRateLimit.webAclName,
        ruleMetricName: this.httpApi.tenantRateLimit.ruleMetricName,
      },
      alarmEmail: props.alarmEmail,
      alarmThresholds: props.alarmThresholds,
    });
  }
}
