import { Aws, Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  GraphWidgetView,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Metric,
  TableWidget,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FunctionName } from '../../lambdas/config/runtime-config.js';
import { ATTENTION_QUEUE } from '../../lambdas/config/topology.js';
import { STORE_PRIORITIES, type StorePriority } from '../../lambdas/core/plans.js';
import {
  METRICS_NAMESPACE,
  MetricNames,
  QueueNames,
  type MetricName,
  Tables,
  type TableKey,
} from '../../lambdas/core/names.js';
import { serviceNameOf } from '../function-environment.js';
import { InvalidPropError, requireIntegerInRange } from '../validation.js';

/** How many stores the top-N widgets list. */
export const TOP_STORES = 20;

/** MarketplaceLatency carries no dimension but `service` (deliver-task.ts): one percentile series each. */
export const LATENCY_PERCENTILES = ['p50', 'p90', 'p99'] as const;

export interface AlarmThresholds {
  /** Seconds the oldest attention may wait (Maximum over 1 min, 5 minutes in a row). */
  readonly attentionOldestAgeSeconds: number;
  /** Reconciler repairs per 5 minutes that, three periods in a row, mean signals are being lost. */
  readonly reconcilerRepairsPer5Minutes: number;
  /** Worker Lambda errors per 5 minutes. */
  readonly workerErrorsPer5Minutes: number;
  /** Worker Lambda throttles per 5 minutes (the pool reserves its concurrency, so any is a misconfiguration). */
  readonly workerThrottlesPer5Minutes: number;
  /** API responses with a 5XX status per 5 minutes (the contract's 503s and gateway errors). */
  readonly apiServerErrorsPer5Minutes: number;
  /** p99 of the API's end-to-end latency, milliseconds, three 5-minute periods in a row. */
  readonly apiLatencyP99Ms: number;
  /** Errors per 5 minutes of each other function (ingest, admin, authorizer, reconciler). */
  readonly functionErrorsPer5Minutes: number;
  /** Throttles per 5 minutes of each other function (ingest, admin, authorizer, reconciler). */
  readonly functionThrottlesPer5Minutes: number;
  /** Throttled read + write events per 5 minutes of one table (on demand still throttles a hot partition). */
  readonly tableThrottlesPer5Minutes: number;
  /** DynamoDB system errors (HTTP 500) per 5 minutes of one table. */
  readonly tableSystemErrorsPer5Minutes: number;
  /** Requests the WAF flood rule blocked per 5 minutes. */
  readonly wafBlockedRequestsPer5Minutes: number;
  /** Dead letters the reconciler's audit found in store DLQs that the worker did not write, per 5 minutes. */
  readonly deadLettersUnaccountedPer5Minutes: number;
  /**
   * Marketplace 429s per 5 minutes, all stores, that three periods in a row mean a marketplace keeps throttling
   * (the adaptive rate's probing alone meets a few: about 2 % of a throttled store's calls).
   */
  readonly marketplaceThrottledPer5Minutes: number;
}

/**
 * Attentions may be delayed up to SQS's 900 s (Retry-After); 600 s of age on the oldest visible one
 * means the pool is not keeping up, not that a store is throttled.
 */
export const DEFAULT_ALARM_THRESHOLDS: AlarmThresholds = {
  attentionOldestAgeSeconds: 600,
  reconcilerRepairsPer5Minutes: 1,
  workerErrorsPer5Minutes: 1,
  workerThrottlesPer5Minutes: 1,
  apiServerErrorsPer5Minutes: 5,
  apiLatencyP99Ms: 3000,
  functionErrorsPer5Minutes: 1,
  functionThrottlesPer5Minutes: 1,
  tableThrottlesPer5Minutes: 1,
  tableSystemErrorsPer5Minutes: 1,
  wafBlockedRequestsPer5Minutes: 1,
  deadLettersUnaccountedPer5Minutes: 1,
  marketplaceThrottledPer5Minutes: 30,
};

export type MonitoringFunctions = Readonly<Record<FunctionName, IFunction>>;

export interface MonitoringProps {
  readonly queuePrefix: string;
  /** Every store priority level's attention queue (`normal` is the original one). */
  readonly attentionQueues: Readonly<Record<StorePriority, IQueue>>;
  /** The confirm queue (slots whose short polls came back empty, waiting for their empty decision). */
  readonly confirmQueue: IQueue;
  readonly attentionDeadLetterQueue: IQueue;
  readonly functions: MonitoringFunctions;
  /** The worker's log group: its lines and EMF records carry the per-store properties the log widgets read. */
  readonly workerLogGroup: ILogGroup;
  readonly api: RestApi;
  /** The tables, for their throttle and system-error alarms. */
  readonly tables: Readonly<Record<TableKey, ITable>>;
  /** The WAF web ACL in front of the integrator routes and the name of its rate rule's metric. */
  readonly webAcl: { readonly name: string; readonly ruleMetricName: string };
  /**
   * Address subscribed to the alarm topic.
   * @default - no subscription; subscribe to `alarmTopic` yourself
   */
  readonly alarmEmail?: string;
  /**
   * Alarm thresholds; any field left out keeps its default.
   * @default DEFAULT_ALARM_THRESHOLDS
   */
  readonly alarmThresholds?: Partial<AlarmThresholds>;
}

/**
 * The Metrics Insights and metric queries of the dashboard and alarms, as data, so the tests assert
 * exactly what CloudWatch receives. Powertools puts `service` on every EMF record, and a metric with a
 * dimension (reason, kind, code, statusClass) exists only under {service, that dimension}: queries name
 * that exact schema.
 */
export const MonitoringQueries = {
  /** Sum of a dimensioned project metric across services, one series per value of `dimension`. */
  byDimension: (metric: MetricName, dimension: string): string =>
    `SELECT SUM(${metric}) FROM SCHEMA("${METRICS_NAMESPACE}", ${dimension}, service) GROUP BY ${dimension}`,
  /** Sum of a dimensioned project metric across every value of `dimension` and every service. */
  total: (metric: MetricName, dimension: string): string =>
    `SELECT SUM(${metric}) FROM SCHEMA("${METRICS_NAMESPACE}", ${dimension}, service)`,
  /** Sum of a project metric that has no dimension of its own, across services. */
  plain: (metric: MetricName): string => `SELECT SUM(${metric}) FROM SCHEMA("${METRICS_NAMESPACE}", service)`,
  /** Sum of a dimensioned project metric for one value of its dimension, across services. */
  totalWhere: (metric: MetricName, dimension: string, value: string): string =>
    `SELECT SUM(${metric}) FROM SCHEMA("${METRICS_NAMESPACE}", ${dimension}, service) WHERE ${dimension} = '${value}'`,
  /**
   * The queues that score highest on an AWS/SQS per-queue metric (no per-store custom metric): the store
   * queues `{prefix}-s-*` and their DLQs `{prefix}-d-*`. Metrics Insights' WHERE has only `=`, `!=`, AND
   * and OR — no prefix match — so the query names what to leave out (the attention queues); any other
   * queue of the account and region shows up too, which is why the README advises an account per
   * deployment.
   */
  topQueues: (metric: string, excludedQueueNames: readonly string[]): string =>
    `SELECT MAX(${metric}) FROM SCHEMA("AWS/SQS", QueueName)${excludedQueueNames.length === 0 ? '' : ` WHERE ${excludedQueueNames.map((name) => `QueueName != '${name}'`).join(' AND ')}`} GROUP BY QueueName ORDER BY MAX() DESC LIMIT ${TOP_STORES}`,
} as const;

/**
 * CloudWatch Logs Insights queries over the worker's log group: the per-store values ride on its log
 * lines and EMF records as properties (storeId, tenantId, correlationId), never as metric dimensions.
 */
export const PerStoreLogQueries = {
  /** The pattern's per-store measures, busiest first: republished/discarded attentions, blocks, ages. */
  measures: [
    'filter ispresent(storeId)',
    `stats sum(republished) as republished, sum(${MetricNames.attentionsDiscarded}) as discarded, sum(${MetricNames.leaseBlocked}) as leaseBlocks, sum(${MetricNames.marketplaceThrottled}) as rateLimited, max(${MetricNames.oldestTaskAge}) as oldestTaskMs, max(${MetricNames.timeToDrain}) as maxDrainMs by storeId`,
    'sort republished desc',
    `limit ${TOP_STORES}`,
  ],
  /** The adaptive rate: stores the marketplace slowed down, their latest effective rate and why. */
  adaptiveRate: [
    "filter message = 'marketplace rate adjusted'",
    'stats latest(effective) as effective, latest(configured) as configured, latest(reason) as reason, count(*) as changes by storeId',
    'sort changes desc',
    `limit ${TOP_STORES}`,
  ],
  /** Tasks the worker dead-lettered, by store and reason code. */
  deadLetters: [
    "filter message = 'task dead-lettered'",
    'stats count(*) as deadLettered by storeId, code',
    'sort deadLettered desc',
    `limit ${TOP_STORES}`,
  ],
} as const;

/** The DynamoDB operations the functions call (lib/table-access.ts), for the per-operation SystemErrors metric. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.QUERY,
  Operation.SCAN,
];

const FIVE_MINUTES = Duration.minutes(5);
/** A DLQ message this close to its queue's retention raises an alarm (two days, as the store queues' expiry age). */
export const RETENTION_ALARM_MARGIN_SECONDS = 2 * 24 * 3600;
const ONE_MINUTE = Duration.minutes(1);

/**
 * The operator's view: one CloudWatch dashboard (ingest, delivery, attention queue, slices, leases,
 * reconciler, dead letters, top stores by backlog and age, marketplace latency) and the alarms that
 * page, all notifying one SNS topic.
 */
export class Monitoring extends Construct {
  public readonly dashboard: Dashboard;
  public readonly alarmTopic: Topic;
  public readonly thresholds: AlarmThresholds;
  public readonly alarms: {
    readonly attentionOldestAge: Alarm;
    readonly attentionOldestAgeHigh: Alarm;
    readonly attentionOldestAgeLow: Alarm;
    readonly confirmOldestAge: Alarm;
    readonly attentionDeadLetters: Alarm;
    readonly attentionDeadLettersAge: Alarm;
    readonly tasksExpiring: Alarm;
    readonly tasksNearingRetention: Alarm;
    readonly deadLettersNearingRetention: Alarm;
    readonly retentionOverdue: Alarm;
    readonly deadLetters: Alarm;
    readonly deadLettersUnaccounted: Alarm;
    readonly reconcilerRepairs: Alarm;
    readonly levelCapsFailing: Alarm;
    readonly storesBackingOff: Alarm;
    readonly marketplaceThrottling: Alarm;
    readonly workerErrors: Alarm;
    readonly workerThrottles: Alarm;
    readonly apiServerErrors: Alarm;
    readonly apiLatency: Alarm;
    readonly wafBlocks: Alarm;
  };
  /** Errors and throttles of ingest, admin, authorizer and reconciler (the worker's are in `alarms`). */
  public readonly functionAlarms: Readonly<
    Record<Exclude<FunctionName, 'worker'>, { readonly errors: Alarm; readonly throttles: Alarm }>
  >;
  /** Throttles and system errors of each table. */
  public readonly tableAlarms: Readonly<
    Record<TableKey, { readonly throttles: Alarm; readonly systemErrors: Alarm }>
  >;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    for (const name of Object.keys(props.alarmThresholds ?? {})) {
      if (!(name in DEFAULT_ALARM_THRESHOLDS)) {
        throw new InvalidPropError(
          `alarmThresholds.${name} is not a threshold; known: ${Object.keys(DEFAULT_ALARM_THRESHOLDS).join(', ')}`,
        );
      }
    }
    const thresholds = { ...DEFAULT_ALARM_THRESHOLDS, ...props.alarmThresholds };
    for (const [name, value] of Object.entries(thresholds))
      requireIntegerInRange(`alarmThresholds.${name}`, value, 0, 86_400);
    this.thresholds = thresholds;
    if (props.alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(props.alarmEmail)) {
      throw new InvalidPropError(
        `alarmEmail must be an email address, got ${JSON.stringify(props.alarmEmail)}`,
      );
    }

    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: 'Attention Queue alarms',
      enforceSSL: true,
    });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));

    const metric = (name: MetricName, fn: FunctionName, statistic = 'Sum'): Metric =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { service: serviceNameOf(fn) },
        statistic,
        period: ONE_MINUTE,
        label: name,
      });
    /** One series per LATENCY_PERCENTILES entry of a worker timing, labelled `{label} {p}`. */
    const percentiles = (name: MetricName, label: string): IMetric[] =>
      LATENCY_PERCENTILES.map((p) => metric(name, 'worker', p).with({ label: `${label} ${p}` }));
    const insights = (expression: string, label: string, period = ONE_MINUTE): MathExpression =>
      new MathExpression({ expression, label, period, usingMetrics: {} });
    const q = MonitoringQueries;

    const { ingest, worker, reconciler } = props.functions;
    const attention = props.attentionQueues.normal;
    const levelQueues = STORE_PRIORITIES.map((level) => [level, props.attentionQueues[level]] as const);

    const graph = (title: string, left: IMetric[], right: IMetric[] = [], width = 8): GraphWidget =>
      new GraphWidget({ title, left, right, width, height: 6 });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          '## Attention Queue\nPer-store numbers are in the logs (EMF properties) and the AWS/SQS per-queue metrics; the project metrics carry no store dimension.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(
        'Ingest: tasks accepted, rejected, signal failures',
        [
          metric(MetricNames.tasksAccepted, 'ingest'),
          metric(MetricNames.tasksRejected, 'ingest'),
          metric(MetricNames.signalFailures, 'ingest'),
        ],
        [
          ingest.metricErrors({ period: ONE_MINUTE, label: 'Ingest errors' }),
          props.api.metricServerError({ period: ONE_MINUTE, label: 'API 5XX' }),
        ],
      ),
      graph(
        'Deliveries and failures',
        [
          metric(MetricNames.tasksDelivered, 'worker'),
          metric(MetricNames.marketplaceThrottled, 'worker'),
          metric(MetricNames.marketplaceTaskThrottled, 'worker'),
          metric(MetricNames.tasksDuplicate, 'worker'),
          metric(MetricNames.tasksStale, 'worker'),
          metric(MetricNames.tasksResent, 'worker'),
        ],
        [
          insights(q.byDimension(MetricNames.tasksFailed, 'statusClass'), 'Failed'),
          insights(q.total(MetricNames.tasksDeadLettered, 'code'), 'Dead-lettered'),
        ],
      ),
      graph(
        'Attention queue depth and age',
        [
          attention.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, label: 'Visible' }),
          attention.metricApproximateNumberOfMessagesNotVisible({ period: ONE_MINUTE, label: 'In flight' }),
          props.attentionDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: ONE_MINUTE,
            label: 'Attention DLQ',
          }),
        ],
        [attention.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, label: 'Oldest age (s)' })],
      ),
      // Store priority: under saturation `low` waits longest by design; each level's floor keeps it moving.
      graph(
        'Attention queues by store priority, and the confirm queue: waiting and oldest age (s)',
        [
          ...levelQueues.map(([level, queue]) =>
            queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, label: `${level} visible` }),
          ),
          props.confirmQueue.metricApproximateNumberOfMessagesVisible({
            period: ONE_MINUTE,
            label: 'confirm visible',
          }),
        ],
        [
          ...levelQueues.map(([level, queue]) =>
            queue.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, label: `${level} oldest age` }),
          ),
          props.confirmQueue.metricApproximateAgeOfOldestMessage({
            period: ONE_MINUTE,
            label: 'confirm oldest age',
          }),
        ],
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Slices: started and why each ended',
        [metric(MetricNames.slicesStarted, 'worker')],
        [
          insights(q.byDimension(MetricNames.slicesEnded, 'reason'), 'Ended'),
          // Campaign windows: slices run under a store's or a tenant's campaign (scope only, no ids).
          insights(q.byDimension(MetricNames.slicesUnderCampaign, 'scope'), 'Under a campaign'),
        ],
      ),
      graph(
        'Leases and attentions',
        [
          metric(MetricNames.leaseAcquired, 'worker'),
          insights(q.byDimension(MetricNames.leaseBlocked, 'reason'), 'Lease blocked'),
        ],
        [
          insights(q.byDimension(MetricNames.attentionsPublished, 'reason'), 'Published'),
          insights(q.byDimension(MetricNames.attentionsDiscarded, 'reason'), 'Discarded'),
          insights(q.byDimension(MetricNames.attentionsCoalesced, 'reason'), 'Coalesced'),
        ],
      ),
      graph(
        'Reconciler repairs',
        [insights(q.byDimension(MetricNames.reconcilerRepairs, 'kind'), 'Repairs')],
        [metric(MetricNames.reconcilerStoresChecked, 'reconciler')],
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Dead-letter inflow and purges',
        [
          insights(
            q.total(MetricNames.tasksDeadLettered, 'code'),
            'Dead-lettered (all stores)',
            FIVE_MINUTES,
          ),
        ],
        [
          insights(q.byDimension(MetricNames.tasksDeadLettered, 'code'), 'Dead-lettered'),
          metric(MetricNames.tasksPurged, 'admin'),
          metric(MetricNames.deadLettersUnaccounted, 'reconciler'),
        ],
        12,
      ),
      new GraphWidget({
        title: 'Marketplace latency (ms)',
        left: percentiles(MetricNames.marketplaceLatency, 'latency'),
        width: 12,
        height: 6,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Time to drain and oldest task at slice start (ms)',
        left: percentiles(MetricNames.timeToDrain, 'time to drain'),
        right: percentiles(MetricNames.oldestTaskAge, 'oldest task'),
        width: 24,
        height: 6,
      }),
    );
    const notStoreQueues = [
      attention.queueName,
      props.attentionDeadLetterQueue.queueName,
      props.attentionQueues.high.queueName,
      props.attentionQueues.low.queueName,
      props.confirmQueue.queueName,
    ];
    const storeQueuesNote = `${QueueNames.storeQueue(props.queuePrefix, '…')} = store queue, ${QueueNames.storePriorityQueue(props.queuePrefix, '…')} = its high-priority queue, ${QueueNames.storeDeadLetterQueue(props.queuePrefix, '…')} = its DLQ`;
    const topStores = (title: string, sqsMetric: string): TableWidget =>
      new TableWidget({
        title: `${title} (${storeQueuesNote})`,
        metrics: [insights(q.topQueues(sqsMetric, notStoreQueues), sqsMetric, FIVE_MINUTES)],
        width: 12,
        height: 8,
      });
    this.dashboard.addWidgets(
      topStores(`Top ${TOP_STORES} stores by backlog`, 'ApproximateNumberOfMessagesVisible'),
      topStores(`Top ${TOP_STORES} stores by oldest message age (s)`, 'ApproximateAgeOfOldestMessage'),
    );
    const perStore = (title: string, queryLines: readonly string[], width: number): LogQueryWidget =>
      new LogQueryWidget({
        title,
        logGroupNames: [props.workerLogGroup.logGroupName],
        queryLines: [...queryLines],
        view: LogQueryVisualizationType.TABLE,
        width,
        height: 8,
      });
    this.dashboard.addWidgets(
      perStore(
        `Per-store measures, top ${TOP_STORES} by republished attentions (worker logs)`,
        PerStoreLogQueries.measures,
        16,
      ),
      perStore(`Dead letters by store (worker logs)`, PerStoreLogQueries.deadLetters, 8),
    );
    this.dashboard.addWidgets(
      graph(
        'Adaptive rate: stores slowed by the marketplace',
        [insights(q.byDimension(MetricNames.marketplaceRateAdjusted, 'reason'), 'Rate adjusted')],
        [metric(MetricNames.marketplaceThrottled, 'worker')],
      ),
      perStore('Adaptive rate by store (worker logs)', PerStoreLogQueries.adaptiveRate, 16),
    );
    // Store priority on AWS (issue #13): what each level was lent beyond its floor, one record a reconciler run.
    this.dashboard.addWidgets(
      graph(
        'Store priority: workers lent beyond each floor',
        [insights(q.byDimension(MetricNames.levelLoan, 'level'), 'Loan')],
        [metric(MetricNames.levelCapsFailures, 'reconciler')],
        12,
      ),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Workers: errors, throttles, concurrency',
        left: [
          worker.metricErrors({ period: ONE_MINUTE, label: 'Errors' }),
          worker.metricThrottles({ period: ONE_MINUTE, label: 'Throttles' }),
          reconciler.metricErrors({ period: ONE_MINUTE, label: 'Reconciler errors' }),
        ],
        right: [
          worker.metric('ConcurrentExecutions', {
            statistic: 'Maximum',
            period: ONE_MINUTE,
            label: 'Concurrent',
          }),
        ],
        view: GraphWidgetView.TIME_SERIES,
        width: 12,
        height: 6,
      }),
    );

    const alarm = (
      alarmId: string,
      description: string,
      opts: {
        metric: IMetric;
        threshold: number;
        evaluationPeriods: number;
        comparisonOperator: ComparisonOperator;
      },
    ): Alarm => {
      const created = new Alarm(this, alarmId, {
        alarmDescription: description,
        metric: opts.metric,
        threshold: opts.threshold,
        evaluationPeriods: opts.evaluationPeriods,
        datapointsToAlarm: opts.evaluationPeriods,
        comparisonOperator: opts.comparisonOperator,
        // No data means nothing happened (no attentions, no dead letters): not a breach.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(new SnsAction(this.alarmTopic));
      created.addOkAction(new SnsAction(this.alarmTopic));
      return created;
    };
    const atLeast = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
    // One per level queue (`normal`'s keeps the original alarm's id): which level's workers fall behind.
    const oldestAttention = (level: StorePriority, alarmId: string): Alarm =>
      alarm(
        alarmId,
        `The oldest ${level}-priority attention has waited too long: the worker pool (that level's share of it) is not keeping up.`,
        {
          metric: props.attentionQueues[level].metricApproximateAgeOfOldestMessage({
            period: ONE_MINUTE,
            statistic: 'Maximum',
          }),
          threshold: thresholds.attentionOldestAgeSeconds,
          evaluationPeriods: 5,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        },
      );

    this.alarms = {
      attentionOldestAge: oldestAttention('normal', 'AttentionOldestAge'),
      attentionOldestAgeHigh: oldestAttention('high', 'AttentionOldestAgeHigh'),
      attentionOldestAgeLow: oldestAttention('low', 'AttentionOldestAgeLow'),
      confirmOldestAge: alarm(
        'ConfirmOldestAge',
        "The oldest attention on the confirm queue has waited too long: the confirm queue's event source is not keeping up, and stores that just drained wait for their empty decision (new tasks of theirs wait with them).",
        {
          metric: props.confirmQueue.metricApproximateAgeOfOldestMessage({
            period: ONE_MINUTE,
            statistic: 'Maximum',
          }),
          threshold: thresholds.attentionOldestAgeSeconds,
          evaluationPeriods: 5,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        },
      ),
      attentionDeadLetters: alarm(
        'AttentionDeadLetters',
        'Attentions reached the attention DLQ; the reconciler re-announces their stores, but the worker is failing.',
        {
          metric: props.attentionDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: ONE_MINUTE,
            statistic: 'Maximum',
          }),
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        },
      ),
      // Retention (issue #10, "no silent expiry"): SQS deletes what is older than a queue's retention silently.
      attentionDeadLettersAge: alarm(
        'AttentionDeadLettersAge',
        'The attention DLQ holds an attention close to its retention: SQS deletes it silently then (the reconciler has re-announced its store; inspect and delete it).',
        {
          metric: props.attentionDeadLetterQueue.metricApproximateAgeOfOldestMessage({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
          }),
          threshold: ATTENTION_QUEUE.deadLetterRetentionSeconds - RETENTION_ALARM_MARGIN_SECONDS,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        },
      ),
      tasksExpiring: alarm(
        'TasksExpiring',
        'A task accepted more than 12 days ago was throttled again by its marketplace and dead-lettered (code expiring) instead of re-sent: its marketplace keeps answering 429.',
        {
          metric: insights(q.plain(MetricNames.tasksExpiring), 'Expiring'),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      tasksNearingRetention: alarm(
        'TasksNearingRetention',
        'The retention pass re-sent tasks that waited more than 7 days in a store queue (a paused, disabled or stalled store): they are kept, but their store is not draining.',
        {
          metric: insights(
            q.totalWhere(MetricNames.tasksRefreshed, 'age', 'old'),
            'Refreshed old tasks',
            FIVE_MINUTES,
          ),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      // Dead-letter keep (issue #10): a letter re-sent at a refresh age or more means the keep ran late (a long
      // sweep cycle, a DLQ larger than the run's budget): it is kept, but nearer SQS's 14 days than it should be.
      deadLettersNearingRetention: alarm(
        'DeadLettersNearingRetention',
        'The reconciler re-sent dead letters that waited more than 7 days in a store DLQ: they are kept, but the sweep reached them late (sweep cycle too long, or a DLQ larger than a run refreshes). Redrive or inspect them.',
        {
          metric: insights(
            q.totalWhere(MetricNames.deadLettersRefreshed, 'age', 'old'),
            'Refreshed old dead letters',
            FIVE_MINUTES,
          ),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      // Retention passes that do not keep up (issue #10): a store's bound 8.75 days old, five days before SQS's 14.
      retentionOverdue: alarm(
        'RetentionOverdue',
        "A store's queues or DLQ may hold messages sent 8.75 days ago or more: the reconciler's retention passes are not keeping up (a backlog larger than a pass covers, or a long sweep cycle). They are still kept, but SQS deletes messages at 14 days: resume, redrive or purge the store named in the reconciler's 'retention overdue' log.",
        {
          metric: insights(q.total(MetricNames.retentionOverdue, 'queue'), 'Retention overdue', FIVE_MINUTES),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      deadLetters: alarm('DeadLetters', 'Tasks are arriving in store dead-letter queues.', {
        metric: insights(q.total(MetricNames.tasksDeadLettered, 'code'), 'Dead-lettered'),
        threshold: 0,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      }),
      // SQS moved tasks to a store DLQ by itself (the worker's own letters are the alarm above): the reconciler's
      // sweep audits each store's DLQ once per cycle (core/dead-letter-audit.ts), one metric for every store.
      deadLettersUnaccounted: alarm(
        'DeadLettersUnaccounted',
        'Store DLQs hold tasks the worker did not dead-letter: SQS moved them after a receive the worker never finished (crash or timeout on the last allowed receive). Their status stays pending.',
        {
          metric: new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: MetricNames.deadLettersUnaccounted,
            dimensionsMap: { service: serviceNameOf('reconciler') },
            statistic: 'Sum',
            period: FIVE_MINUTES,
          }),
          threshold: thresholds.deadLettersUnaccountedPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      reconcilerRepairs: alarm(
        'ReconcilerRepairs',
        'The reconciler has repaired stores for 15 minutes in a row: attentions are being lost.',
        {
          metric: insights(q.total(MetricNames.reconcilerRepairs, 'kind'), 'Repairs', FIVE_MINUTES),
          threshold: thresholds.reconcilerRepairsPer5Minutes,
          evaluationPeriods: 3,
          comparisonOperator: atLeast,
        },
      ),
      // Store priority on AWS (issue #13): the floors hold whatever happens; only the loans stop.
      levelCapsFailing: alarm(
        'LevelCapsFailing',
        "The reconciler has failed to read or set the priority levels' event source caps for 10 minutes: every level still runs its floor, but unused share no longer flows (loans stay as they were). See its 'level caps not balanced' log.",
        {
          metric: new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: MetricNames.levelCapsFailures,
            dimensionsMap: { service: serviceNameOf('reconciler') },
            statistic: 'Sum',
            period: FIVE_MINUTES,
          }),
          threshold: 3,
          evaluationPeriods: 2,
          comparisonOperator: atLeast,
        },
      ),
      storesBackingOff: alarm(
        'StoresBackingOff',
        'A store’s slices keep failing (3 or more in a row: its queue deleted, receives denied); it backs off to one look per 15 min.',
        {
          metric: insights(
            q.totalWhere(MetricNames.sliceErrorBackoff, 'streak', 'repeated'),
            'Repeated slice errors',
            FIVE_MINUTES,
          ),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      marketplaceThrottling: alarm(
        'MarketplaceThrottling',
        'A marketplace keeps answering 429 (15 min in a row): the Stores dashboard’s rate-limited column names the stores; each store view shows its effective rate and why.',
        {
          metric: metric(MetricNames.marketplaceThrottled, 'worker').with({ period: FIVE_MINUTES }),
          threshold: thresholds.marketplaceThrottledPer5Minutes,
          evaluationPeriods: 3,
          comparisonOperator: atLeast,
        },
      ),
      workerErrors: alarm('WorkerErrors', 'Attention worker invocations are failing.', {
        metric: worker.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: thresholds.workerErrorsPer5Minutes,
        evaluationPeriods: 1,
        comparisonOperator: atLeast,
      }),
      workerThrottles: alarm(
        'WorkerThrottles',
        'Attention worker invocations are throttled: throttled attentions count toward their maxReceiveCount.',
        {
          metric: worker.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: thresholds.workerThrottlesPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      apiServerErrors: alarm(
        'ApiServerErrors',
        'The API is answering 5XX: a dependency is failing (503 dependency_unavailable) or a function errs.',
        {
          metric: props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: thresholds.apiServerErrorsPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
      apiLatency: alarm('ApiLatency', 'The API is slow (p99 end-to-end latency) for 15 minutes.', {
        metric: props.api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
        threshold: thresholds.apiLatencyP99Ms,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      }),
      wafBlocks: alarm(
        'WafBlocks',
        'The WAF flood rule is blocking an integrator credential (over its per-credential ceiling).',
        {
          metric: new Metric({
            namespace: 'AWS/WAFV2',
            metricName: 'BlockedRequests',
            dimensionsMap: {
              WebACL: props.webAcl.name,
              Rule: props.webAcl.ruleMetricName,
              Region: Aws.REGION,
            },
            statistic: 'Sum',
            period: FIVE_MINUTES,
          }),
          threshold: thresholds.wafBlockedRequestsPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        },
      ),
    };

    const functionAlarm = (fn: Exclude<FunctionName, 'worker'>, id: string) => {
      const target = props.functions[fn];
      return {
        errors: alarm(`${id}Errors`, `The ${fn} function is failing (Lambda Errors).`, {
          metric: target.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: thresholds.functionErrorsPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        }),
        throttles: alarm(`${id}Throttles`, `The ${fn} function is throttled (Lambda Throttles).`, {
          metric: target.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: thresholds.functionThrottlesPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        }),
      };
    };
    this.functionAlarms = {
      ingest: functionAlarm('ingest', 'Ingest'),
      admin: functionAlarm('admin', 'Admin'),
      authorizer: functionAlarm('authorizer', 'Authorizer'),
      reconciler: functionAlarm('reconciler', 'Reconciler'),
    };

    const tableAlarm = (key: TableKey) => {
      const table = props.tables[key];
      const id = Tables[key].id;
      const tableMetric = (metricName: string): Metric =>
        new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: { TableName: table.tableName },
          statistic: 'Sum',
          period: FIVE_MINUTES,
        });
      return {
        throttles: alarm(`${id}TableThrottles`, `DynamoDB is throttling the ${id} table.`, {
          metric: new MathExpression({
            expression: 'FILL(r, 0) + FILL(w, 0)',
            usingMetrics: { r: tableMetric('ReadThrottleEvents'), w: tableMetric('WriteThrottleEvents') },
            label: `${id} throttle events`,
            period: FIVE_MINUTES,
          }),
          threshold: thresholds.tableThrottlesPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        }),
        // SystemErrors exists only per operation; the operations the functions call (lib/table-access.ts).
        systemErrors: alarm(`${id}TableSystemErrors`, `DynamoDB answers 500 on the ${id} table.`, {
          metric: table.metricSystemErrorsForOperations({
            operations: TABLE_OPERATIONS,
            period: FIVE_MINUTES,
          }),
          threshold: thresholds.tableSystemErrorsPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: atLeast,
        }),
      };
    };
    this.tableAlarms = {
      stores: tableAlarm('stores'),
      dispatch: tableAlarm('dispatch'),
      tokens: tableAlarm('tokens'),
      deliveries: tableAlarm('deliveries'),
    };

    const allAlarms = [
      ...Object.values(this.alarms),
      ...Object.values(this.functionAlarms).flatMap((a) => [a.errors, a.throttles]),
      ...Object.values(this.tableAlarms).flatMap((a) => [a.throttles, a.systemErrors]),
    ];
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: allAlarms, width: 24, height: 6 }),
    );
  }
}
