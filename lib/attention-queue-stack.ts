import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { EnvNames } from '../lambdas/config/env-names.js';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { AttentionQueue } from './constructs/attention-queue.js';
import { AttentionWorkers } from './constructs/attention-workers.js';
import { DataTables } from './constructs/data-tables.js';
import { HttpApi, type ApiThrottling } from './constructs/http-api.js';
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
import { requireHttpsUrl, requireQueuePrefix } from './validation.js';

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
   * Attention workers running at once (event source MaximumConcurrency = reserved concurrency).
   * @default WORKER_EVENT_SOURCE.defaultPoolSize
   */
  readonly workerPoolSize?: number;
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
   * X-Ray tracing of the API stage.
   * @default false
   */
  readonly apiTracingEnabled?: boolean;
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

    this.tables = new DataTables(this, 'Tables', { removalPolicy });
    this.attention = new AttentionQueue(this, 'Attention');

    const environment: DeployEnvironment = {
      [EnvNames.queuePrefix]: this.queuePrefix,
      [EnvNames.storesTable]: this.tables.stores.tableName,
      [EnvNames.dispatchTable]: this.tables.dispatch.tableName,
      [EnvNames.tokensTable]: this.tables.tokens.tableName,
      [EnvNames.deliveriesTable]: this.tables.deliveries.tableName,
      [EnvNames.attentionQueueUrl]: this.attention.queue.queueUrl,
      [EnvNames.marketplaceBaseUrl]: marketplaceBaseUrl,
      ...settings,
    };
    const wiring: ServiceWiring = {
      tables: this.tables.all,
      attentionQueue: this.attention.queue,
      queuePrefix: this.queuePrefix,
      environment,
      logRetention: props.logRetention,
      logRemovalPolicy: removalPolicy,
    };

    this.httpApi = new HttpApi(this, 'Http', {
      ...wiring,
      throttling: props.apiThrottling,
      tenantThrottling: props.apiTenantThrottling,
      tracingEnabled: props.apiTracingEnabled,
      cloudWatchRole: props.apiCloudWatchRole,
    });
    // The OpenAPI document (route and outputs) and the integrator routes' request models (issue #14).
    this.openApi = new OpenApiRoute(this, 'OpenApi', { api: this.httpApi.api });
    this.requestValidation = new RequestValidation(this, 'RequestValidation', {
      api: this.httpApi.api,
      methods: this.httpApi.methods,
    });
    this.workers = new AttentionWorkers(this, 'Workers', { ...wiring, poolSize: props.workerPoolSize });
    this.reconciler = new Reconciler(this, 'Reconciler', wiring);
    this.functions = {
      ingest: this.httpApi.ingestFunction,
      admin: this.httpApi.adminFunction,
      authorizer: this.httpApi.authorizerFunction,
      worker: this.workers.function,
      reconciler: this.reconciler.function,
    };

    this.monitoring = new Monitoring(this, 'Monitoring', {
      queuePrefix: this.queuePrefix,
      attentionQueue: this.attention.queue,
      attentionDeadLetterQueue: this.attention.deadLetterQueue,
      functions: this.functions,
      workerLogGroup: this.workers.logGroup,
      api: this.httpApi.api,
      alarmEmail: props.alarmEmail,
      alarmThresholds: props.alarmThresholds,
    });
  }
}
