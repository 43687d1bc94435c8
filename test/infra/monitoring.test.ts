import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../lambdas/config/topology.js';
import { METRICS_NAMESPACE, MetricNames } from '../../lambdas/core/names.js';
import {
  DEFAULT_ALARM_THRESHOLDS,
  LATENCY_PERCENTILES,
  MonitoringQueries,
  PerStoreLogQueries,
  TOP_STORES,
} from '../../lib/constructs/monitoring.js';
import { buildStack, logicalIdOf, resourcesOfType, synthStack } from './synth-stack.js';

const PREFIX = 'mon';
const EMAIL = 'ops@example.com';
const { stack, template } = synthStack({ queuePrefix: PREFIX, alarmEmail: EMAIL });
const { monitoring } = stack;
const topicRef = { Ref: logicalIdOf(monitoring.alarmTopic) };

/** The dashboard body with every token rendered as `<Ref>` / `<Id.Attr>`, parsed. */
type Widget = { type: string; properties: { title?: string; metrics?: unknown[][]; view?: string } };
const render = (part: unknown): string => {
  if (typeof part === 'string') return part;
  const token = part as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (token.Ref) return `<${token.Ref}>`;
  if (token['Fn::GetAtt']) return `<${token['Fn::GetAtt'].join('.')}>`;
  throw new Error(`unexpected token ${JSON.stringify(part)}`);
};
const [[, dashboardResource] = []] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard');
const [, parts] = (dashboardResource?.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] })[
  'Fn::Join'
];
const widgets = (JSON.parse(parts.map(render).join('')) as { widgets: Widget[] }).widgets;
const widget = (title: string): Widget => {
  const found = widgets.find((w) => w.properties.title === title);
  if (!found) throw new Error(`no widget titled ${title}`);
  return found;
};
/** A widget's series: `Namespace/Metric{dims}:stat` for metrics, the expression for queries. */
const series = (title: string): string[] =>
  (widget(title).properties.metrics ?? []).map((line) => {
    const last = line[line.length - 1] as { expression?: string; stat?: string };
    if (last.expression) return last.expression;
    const [namespace, name, ...rest] = line.slice(0, -1) as string[];
    const dims: string[] = [];
    for (let i = 0; i < rest.length; i += 2) dims.push(`${rest[i]}=${rest[i + 1]}`);
    return `${namespace}/${name}{${dims.join(',')}}:${last.stat}`;
  });

const worker = FUNCTIONS.worker.serviceName;
const ingest = FUNCTIONS.ingest.serviceName;
const reconciler = FUNCTIONS.reconciler.serviceName;
const own = (name: string, service: string, stat = 'Sum', extra = '') =>
  `${METRICS_NAMESPACE}/${name}{service=${service}${extra}}:${stat}`;
const workerFn = `<${logicalIdOf(stack.workers.function)}>`;
const attentionQueue = `<${logicalIdOf(stack.attention.queue)}.QueueName>`;
const attentionDlq = `<${logicalIdOf(stack.attention.deadLetterQueue)}.QueueName>`;
const highQueue = `<${logicalIdOf(stack.attention.levels.high)}.QueueName>`;
const lowQueue = `<${logicalIdOf(stack.attention.levels.low)}.QueueName>`;
const confirmQueue = `<${logicalIdOf(stack.attention.confirm)}.QueueName>`;
const notStoreQueues = [attentionQueue, attentionDlq, highQueue, lowQueue, confirmQueue];
const leftOut = notStoreQueues.map((name) => `QueueName != '${name}'`).join(' AND ');

describe('monitoring: alarm topic', () => {
  it('creates one SNS topic', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
  });

  it('subscribes the alarm email to it', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: EMAIL,
      TopicArn: topicRef,
    });
  });
});

describe('monitoring: dashboard', () => {
  it('is one dashboard', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it('shows ingest rate and errors', () => {
    expect(series('Ingest: tasks accepted, rejected, signal failures')).toEqual([
      own(MetricNames.tasksAccepted, ingest),
      own(MetricNames.tasksRejected, ingest),
      own(MetricNames.signalFailures, ingest),
      `AWS/Lambda/Errors{FunctionName=<${logicalIdOf(stack.httpApi.ingestFunction)}>}:Sum`,
      'AWS/ApiGateway/5XXError{ApiName=Api}:Sum',
    ]);
  });

  it('shows deliveries and failures, failures per status class', () => {
    expect(series('Deliveries and failures')).toEqual([
      own(MetricNames.tasksDelivered, worker),
      own(MetricNames.marketplaceThrottled, worker),
      own(MetricNames.marketplaceTaskThrottled, worker),
      own(MetricNames.tasksDuplicate, worker),
      own(MetricNames.tasksStale, worker),
      own(MetricNames.tasksResent, worker),
      'SELECT SUM(TasksFailed) FROM SCHEMA("AttentionQueue", statusClass, service) GROUP BY statusClass',
      'SELECT SUM(TasksDeadLettered) FROM SCHEMA("AttentionQueue", code, service)',
    ]);
  });

  it('shows the attention queue depth, age and DLQ', () => {
    expect(series('Attention queue depth and age')).toEqual([
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${attentionQueue}}:Maximum`,
      `AWS/SQS/ApproximateNumberOfMessagesNotVisible{QueueName=${attentionQueue}}:Maximum`,
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${attentionDlq}}:Maximum`,
      `AWS/SQS/ApproximateAgeOfOldestMessage{QueueName=${attentionQueue}}:Maximum`,
    ]);
  });

  it('shows every store priority level’s attention queue and the confirm queue: waiting and oldest age', () => {
    expect(
      series('Attention queues by store priority, and the confirm queue: waiting and oldest age (s)'),
    ).toEqual([
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${highQueue}}:Maximum`,
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${attentionQueue}}:Maximum`,
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${lowQueue}}:Maximum`,
      `AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=${confirmQueue}}:Maximum`,
      `AWS/SQS/ApproximateAgeOfOldestMessage{QueueName=${highQueue}}:Maximum`,
      `AWS/SQS/ApproximateAgeOfOldestMessage{QueueName=${attentionQueue}}:Maximum`,
      `AWS/SQS/ApproximateAgeOfOldestMessage{QueueName=${lowQueue}}:Maximum`,
      `AWS/SQS/ApproximateAgeOfOldestMessage{QueueName=${confirmQueue}}:Maximum`,
    ]);
  });

  it('shows slices started, their end reasons, and those run under a campaign', () => {
    expect(series('Slices: started and why each ended')).toEqual([
      own(MetricNames.slicesStarted, worker),
      'SELECT SUM(SlicesEnded) FROM SCHEMA("AttentionQueue", reason, service) GROUP BY reason',
      'SELECT SUM(SlicesUnderCampaign) FROM SCHEMA("AttentionQueue", scope, service) GROUP BY scope',
    ]);
  });

  it('shows lease acquisitions, lease blocks and attentions by reason', () => {
    expect(series('Leases and attentions')).toEqual([
      own(MetricNames.leaseAcquired, worker),
      'SELECT SUM(LeaseBlocked) FROM SCHEMA("AttentionQueue", reason, service) GROUP BY reason',
      'SELECT SUM(AttentionsPublished) FROM SCHEMA("AttentionQueue", reason, service) GROUP BY reason',
      'SELECT SUM(AttentionsDiscarded) FROM SCHEMA("AttentionQueue", reason, service) GROUP BY reason',
      'SELECT SUM(AttentionsCoalesced) FROM SCHEMA("AttentionQueue", reason, service) GROUP BY reason',
    ]);
  });

  it('shows reconciler repairs by kind', () => {
    expect(series('Reconciler repairs')).toEqual([
      'SELECT SUM(ReconcilerRepairs) FROM SCHEMA("AttentionQueue", kind, service) GROUP BY kind',
      own(MetricNames.reconcilerStoresChecked, reconciler),
    ]);
  });

  it('shows dead-letter inflow in total and per reason code, purged tasks and the letters SQS moved itself', () => {
    expect(series('Dead-letter inflow and purges')).toEqual([
      'SELECT SUM(TasksDeadLettered) FROM SCHEMA("AttentionQueue", code, service)',
      'SELECT SUM(TasksDeadLettered) FROM SCHEMA("AttentionQueue", code, service) GROUP BY code',
      own(MetricNames.tasksPurged, FUNCTIONS.admin.serviceName),
      own(MetricNames.deadLettersUnaccounted, reconciler),
    ]);
  });

  const QUEUES_NOTE = `(${PREFIX}-s-… = store queue, ${PREFIX}-h-… = its high-priority queue, ${PREFIX}-d-… = its DLQ)`;

  it(`lists the top ${TOP_STORES} queues by backlog, leaving out the attention queues and the confirm queue`, () => {
    // Metrics Insights' WHERE has no LIKE: the query leaves out by name what is not a store's queue.
    expect(series(`Top ${TOP_STORES} stores by backlog ${QUEUES_NOTE}`)).toEqual([
      `SELECT MAX(ApproximateNumberOfMessagesVisible) FROM SCHEMA("AWS/SQS", QueueName) WHERE ${leftOut} GROUP BY QueueName ORDER BY MAX() DESC LIMIT ${TOP_STORES}`,
    ]);
  });

  it(`lists the top ${TOP_STORES} queues by oldest message age`, () => {
    expect(series(`Top ${TOP_STORES} stores by oldest message age (s) ${QUEUES_NOTE}`)).toEqual([
      `SELECT MAX(ApproximateAgeOfOldestMessage) FROM SCHEMA("AWS/SQS", QueueName) WHERE ${leftOut} GROUP BY QueueName ORDER BY MAX() DESC LIMIT ${TOP_STORES}`,
    ]);
  });

  it('uses only the operators Metrics Insights accepts in WHERE (=, !=, AND, OR)', () => {
    const queries = widgets.flatMap((w) =>
      (w.properties.metrics ?? []).flatMap((line) => {
        const last = line[line.length - 1] as { expression?: string };
        return last.expression ? [last.expression] : [];
      }),
    );
    expect(queries.filter((query) => /\b(LIKE|IN)\b/i.test(query))).toEqual([]);
  });

  it('draws the top-stores widgets as tables', () => {
    expect(
      widgets.filter((w) => w.properties.title?.startsWith('Top ')).map((w) => w.properties.view),
    ).toEqual(['table', 'table']);
  });

  type LogWidget = { type: string; properties: { title?: string; query?: string; view?: string } };
  const logWidgets = (widgets as unknown as LogWidget[]).filter((w) => w.type === 'log');

  it('reads the per-store measures from the worker’s log group (EMF properties), as a table', () => {
    const found = logWidgets.find((w) => w.properties.title?.startsWith('Per-store measures'));
    expect({ query: found?.properties.query, view: found?.properties.view }).toEqual({
      query: `SOURCE '<${logicalIdOf(stack.workers.logGroup)}>' | ${PerStoreLogQueries.measures.join('\n| ')}`,
      view: 'table',
    });
  });

  it('sums the per-store measures the worker emits with a storeId property', () => {
    expect(PerStoreLogQueries.measures.join(' ')).toContain(
      'stats sum(republished) as republished, sum(AttentionsDiscarded) as discarded, sum(LeaseBlocked) as leaseBlocks, sum(MarketplaceThrottled) as rateLimited, max(OldestTaskAge) as oldestTaskMs, max(TimeToDrain) as maxDrainMs by storeId',
    );
  });

  it('lists dead letters by store and code from the worker’s log lines', () => {
    const found = logWidgets.find((w) => w.properties.title === 'Dead letters by store (worker logs)');
    expect(found?.properties.query).toBe(
      `SOURCE '<${logicalIdOf(stack.workers.logGroup)}>' | ${PerStoreLogQueries.deadLetters.join('\n| ')}`,
    );
  });

  it('shows marketplace latency percentiles (the metric carries only `service`)', () => {
    expect(series('Marketplace latency (ms)')).toEqual(
      LATENCY_PERCENTILES.map((p) => own(MetricNames.marketplaceLatency, worker, p)),
    );
  });

  it('shows time to drain (busy → idle) and the oldest task at slice start, as percentiles', () => {
    expect(series('Time to drain and oldest task at slice start (ms)')).toEqual([
      ...LATENCY_PERCENTILES.map((p) => own(MetricNames.timeToDrain, worker, p)),
      ...LATENCY_PERCENTILES.map((p) => own(MetricNames.oldestTaskAge, worker, p)),
    ]);
  });

  it('shows worker errors, throttles and concurrency', () => {
    expect(series('Workers: errors, throttles, concurrency')).toEqual([
      `AWS/Lambda/Errors{FunctionName=${workerFn}}:Sum`,
      `AWS/Lambda/Throttles{FunctionName=${workerFn}}:Sum`,
      `AWS/Lambda/Errors{FunctionName=<${logicalIdOf(stack.reconciler.function)}>}:Sum`,
      `AWS/Lambda/ConcurrentExecutions{FunctionName=${workerFn}}:Maximum`,
    ]);
  });

  it('builds its queries from MonitoringQueries', () => {
    expect(series(`Top ${TOP_STORES} stores by backlog ${QUEUES_NOTE}`)).toEqual([
      MonitoringQueries.topQueues('ApproximateNumberOfMessagesVisible', notStoreQueues),
    ]);
  });
});

const alarmProps = (construct: Parameters<typeof logicalIdOf>[0]): Record<string, unknown> => {
  const id = logicalIdOf(construct);
  const found = resourcesOfType(template, 'AWS::CloudWatch::Alarm').find(([logicalId]) => logicalId === id);
  if (!found) throw new Error(`no alarm ${id}`);
  return found[1].Properties ?? {};
};
/** When an alarm fires: its comparison, threshold and evaluation periods. */
const firing = (props: Record<string, unknown>): unknown[] => [
  props['ComparisonOperator'],
  props['Threshold'],
  props['EvaluationPeriods'],
];

describe('monitoring: alarms', () => {
  const { alarms } = monitoring;

  // 21 stack-wide (the oldest-attention age once per level queue and once on the confirm queue; 5 for
  // retention, dead-letter keep's and the overdue passes' included; dead letters SQS moved by itself;
  // marketplace throttling; the level caps), errors and throttles of the 4 other functions, throttles and
  // system errors of the 4 tables.
  it('has 37 alarms', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 21 + 4 * 2 + 4 * 2);
  });

  it('every alarm notifies the topic when it fires', () => {
    const silent = resourcesOfType(template, 'AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => JSON.stringify(alarm.Properties?.['AlarmActions']) !== JSON.stringify([topicRef]),
    );
    expect(silent.map(([id]) => id)).toEqual([]);
  });

  it.each(Object.keys(alarms) as (keyof typeof alarms)[])('%s notifies the topic when it fires', (name) => {
    expect(alarmProps(alarms[name])['AlarmActions']).toEqual([topicRef]);
  });

  it.each(Object.keys(alarms) as (keyof typeof alarms)[])(
    '%s notifies the topic when it recovers',
    (name) => {
      expect(alarmProps(alarms[name])['OKActions']).toEqual([topicRef]);
    },
  );

  it.each(Object.keys(alarms) as (keyof typeof alarms)[])(
    '%s treats missing data as not breaching',
    (name) => {
      expect(alarmProps(alarms[name])['TreatMissingData']).toBe('notBreaching');
    },
  );

  describe.each([
    ['normal attention', stack.attention.levels.normal, 'attentionOldestAge'],
    ['high attention', stack.attention.levels.high, 'attentionOldestAgeHigh'],
    ['low attention', stack.attention.levels.low, 'attentionOldestAgeLow'],
    ['confirm', stack.attention.confirm, 'confirmOldestAge'],
  ] as const)('%s queue oldest age', (queueName, queue, name) => {
    const props = alarmProps(alarms[name]);
    it(`watches the ${queueName} queue`, () => {
      expect(props['Dimensions']).toEqual([
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [logicalIdOf(queue), 'QueueName'] },
        },
      ]);
    });
    it('reads the AWS/SQS namespace', () => {
      expect(props['Namespace']).toBe('AWS/SQS');
    });
    it('reads ApproximateAgeOfOldestMessage', () => {
      expect(props['MetricName']).toBe('ApproximateAgeOfOldestMessage');
    });
    it('takes the maximum', () => {
      expect(props['Statistic']).toBe('Maximum');
    });
    it(`fires above ${DEFAULT_ALARM_THRESHOLDS.attentionOldestAgeSeconds} s`, () => {
      expect([props['ComparisonOperator'], props['Threshold']]).toEqual([
        'GreaterThanThreshold',
        DEFAULT_ALARM_THRESHOLDS.attentionOldestAgeSeconds,
      ]);
    });
    it('needs five one-minute periods in a row', () => {
      expect([props['Period'], props['EvaluationPeriods'], props['DatapointsToAlarm']]).toEqual([60, 5, 5]);
    });
  });

  describe('attention DLQ', () => {
    const props = alarmProps(alarms.attentionDeadLetters);
    it('watches the attention DLQ depth', () => {
      expect([props['MetricName'], props['Dimensions']]).toEqual([
        'ApproximateNumberOfMessagesVisible',
        [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalIdOf(stack.attention.deadLetterQueue), 'QueueName'] },
          },
        ],
      ]);
    });
    it('fires on any message', () => {
      expect(firing(props)).toEqual(['GreaterThanThreshold', 0, 1]);
    });
  });

  describe('dead letters arriving', () => {
    const props = alarmProps(alarms.deadLetters);
    it('sums TasksDeadLettered over every code and service (Metrics Insights)', () => {
      const [query] = props['Metrics'] as { Expression: string; Period: number; ReturnData: boolean }[];
      expect([query?.Expression, query?.Period, query?.ReturnData]).toEqual([
        'SELECT SUM(TasksDeadLettered) FROM SCHEMA("AttentionQueue", code, service)',
        60,
        true,
      ]);
    });
    it('fires on the first dead letter', () => {
      expect(firing(props)).toEqual(['GreaterThanThreshold', 0, 1]);
    });
  });

  describe('dead letters SQS moved by itself (issue #12)', () => {
    const props = alarmProps(alarms.deadLettersUnaccounted);
    it('reads the reconciler’s DeadLettersUnaccounted', () => {
      expect([props['Namespace'], props['MetricName']]).toEqual([
        METRICS_NAMESPACE,
        MetricNames.deadLettersUnaccounted,
      ]);
    });
    it('under the reconciler’s service dimension only', () => {
      expect(props['Dimensions']).toEqual([{ Name: 'service', Value: reconciler }]);
    });
    it('sums over 5 minutes', () => {
      expect([props['Statistic'], props['Period']]).toEqual(['Sum', 300]);
    });
    it(`fires at ${DEFAULT_ALARM_THRESHOLDS.deadLettersUnaccountedPer5Minutes} or more in one period`, () => {
      expect(firing(props)).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.deadLettersUnaccountedPer5Minutes,
        1,
      ]);
    });
    it('is not a Metrics Insights query (no 10,000-metric limit, no per-queue series)', () => {
      expect(props['Metrics']).toBeUndefined();
    });
  });

  describe('retention (issue #10, no silent expiry)', () => {
    it('alarms on the attention DLQ’s oldest message two days before its 14-day retention', () => {
      const props = alarmProps(alarms.attentionDeadLettersAge);
      expect([props['MetricName'], props['Statistic'], props['Dimensions'], ...firing(props)]).toEqual([
        'ApproximateAgeOfOldestMessage',
        'Maximum',
        [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalIdOf(stack.attention.deadLetterQueue), 'QueueName'] },
          },
        ],
        'GreaterThanThreshold',
        12 * 24 * 3600,
        1,
      ]);
    });
    it('alarms on the first task dead-lettered as expiring (TasksExpiring)', () => {
      const props = alarmProps(alarms.tasksExpiring);
      const [query] = props['Metrics'] as { Expression: string }[];
      expect([query?.Expression, ...firing(props)]).toEqual([
        'SELECT SUM(TasksExpiring) FROM SCHEMA("AttentionQueue", service)',
        'GreaterThanOrEqualToThreshold',
        1,
        1,
      ]);
    });
    it('alarms on the first old task the retention pass kept (TasksRefreshed{age=old})', () => {
      const props = alarmProps(alarms.tasksNearingRetention);
      const [query] = props['Metrics'] as { Expression: string; Period: number }[];
      expect([query?.Expression, query?.Period, ...firing(props)]).toEqual([
        `SELECT SUM(TasksRefreshed) FROM SCHEMA("AttentionQueue", age, service) WHERE age = 'old'`,
        300,
        'GreaterThanOrEqualToThreshold',
        1,
        1,
      ]);
    });
    it("alarms when the reconciler fails to balance the levels' caps 3 times in each of two 5-minute periods", () => {
      const props = alarmProps(alarms.levelCapsFailing);
      expect([
        props['Namespace'],
        props['MetricName'],
        props['Dimensions'],
        props['Statistic'],
        props['Period'],
        ...firing(props),
        props['DatapointsToAlarm'],
      ]).toEqual([
        METRICS_NAMESPACE,
        MetricNames.levelCapsFailures,
        [{ Name: 'service', Value: reconciler }],
        'Sum',
        300,
        'GreaterThanOrEqualToThreshold',
        3,
        2,
        2,
      ]);
    });
    it('alarms on the first store whose passes are overdue, work queues or DLQ (RetentionOverdue)', () => {
      const props = alarmProps(alarms.retentionOverdue);
      const [query] = props['Metrics'] as { Expression: string; Period: number }[];
      expect([query?.Expression, query?.Period, ...firing(props)]).toEqual([
        'SELECT SUM(RetentionOverdue) FROM SCHEMA("AttentionQueue", queue, service)',
        300,
        'GreaterThanOrEqualToThreshold',
        1,
        1,
      ]);
    });
    it('alarms on the first dead letter kept at the refresh age (DeadLettersRefreshed{age=old})', () => {
      const props = alarmProps(alarms.deadLettersNearingRetention);
      const [query] = props['Metrics'] as { Expression: string; Period: number }[];
      expect([query?.Expression, query?.Period, ...firing(props)]).toEqual([
        `SELECT SUM(DeadLettersRefreshed) FROM SCHEMA("AttentionQueue", age, service) WHERE age = 'old'`,
        300,
        'GreaterThanOrEqualToThreshold',
        1,
        1,
      ]);
    });
  });

  describe('a store whose slices keep failing', () => {
    const props = alarmProps(alarms.storesBackingOff);
    it('sums SliceErrorBackoff of repeated streaks only, per 5 minutes (Metrics Insights)', () => {
      const [query] = props['Metrics'] as { Expression: string; Period: number }[];
      expect([query?.Expression, query?.Period]).toEqual([
        `SELECT SUM(SliceErrorBackoff) FROM SCHEMA("AttentionQueue", streak, service) WHERE streak = 'repeated'`,
        300,
      ]);
    });
    it('fires on the first repeated streak', () => {
      expect(firing(props)).toEqual(['GreaterThanOrEqualToThreshold', 1, 1]);
    });
  });

  describe('a marketplace that keeps throttling', () => {
    const props = alarmProps(alarms.marketplaceThrottling);
    it("sums the worker's MarketplaceThrottled per 5 minutes", () => {
      const [series] = props['Metrics'] as {
        MetricStat: { Metric: { MetricName: string; Namespace: string }; Stat: string; Period: number };
      }[];
      const stat = series?.MetricStat;
      expect([stat?.Metric.MetricName, stat?.Metric.Namespace, stat?.Stat, stat?.Period]).toEqual([
        'MarketplaceThrottled',
        'AttentionQueue',
        'Sum',
        300,
      ]);
    });
    it(`fires at ${DEFAULT_ALARM_THRESHOLDS.marketplaceThrottledPer5Minutes} or more, three periods in a row`, () => {
      expect(firing(props)).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.marketplaceThrottledPer5Minutes,
        3,
      ]);
    });
  });

  describe('reconciler repairing steadily', () => {
    const props = alarmProps(alarms.reconcilerRepairs);
    it('sums ReconcilerRepairs over every kind, per 5 minutes', () => {
      const [query] = props['Metrics'] as { Expression: string; Period: number }[];
      expect([query?.Expression, query?.Period]).toEqual([
        'SELECT SUM(ReconcilerRepairs) FROM SCHEMA("AttentionQueue", kind, service)',
        300,
      ]);
    });
    it(`fires at ${DEFAULT_ALARM_THRESHOLDS.reconcilerRepairsPer5Minutes} or more`, () => {
      expect([props['ComparisonOperator'], props['Threshold']]).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.reconcilerRepairsPer5Minutes,
      ]);
    });
    it('needs three periods in a row (15 minutes)', () => {
      expect([props['EvaluationPeriods'], props['DatapointsToAlarm']]).toEqual([3, 3]);
    });
  });

  describe.each([
    ['workerErrors', 'Errors', DEFAULT_ALARM_THRESHOLDS.workerErrorsPer5Minutes],
    ['workerThrottles', 'Throttles', DEFAULT_ALARM_THRESHOLDS.workerThrottlesPer5Minutes],
  ] as const)('%s', (name, metricName, threshold) => {
    const props = alarmProps(alarms[name]);
    it(`reads the worker function's ${metricName}`, () => {
      expect([props['Namespace'], props['MetricName'], props['Dimensions']]).toEqual([
        'AWS/Lambda',
        metricName,
        [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(stack.workers.function) } }],
      ]);
    });
    it('sums over 5 minutes', () => {
      expect([props['Statistic'], props['Period']]).toEqual(['Sum', 300]);
    });
    it(`fires at ${threshold} or more in one period`, () => {
      expect(firing(props)).toEqual(['GreaterThanOrEqualToThreshold', threshold, 1]);
    });
  });
  describe('API 5XX', () => {
    const props = alarmProps(alarms.apiServerErrors);
    it('reads the API’s 5XXError', () => {
      expect([props['Namespace'], props['MetricName']]).toEqual(['AWS/ApiGateway', '5XXError']);
    });
    it('sums over 5 minutes', () => {
      expect([props['Statistic'], props['Period']]).toEqual(['Sum', 300]);
    });
    it(`fires at ${DEFAULT_ALARM_THRESHOLDS.apiServerErrorsPer5Minutes} or more in one period`, () => {
      expect(firing(props)).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.apiServerErrorsPer5Minutes,
        1,
      ]);
    });
  });

  describe('API latency', () => {
    const props = alarmProps(alarms.apiLatency);
    it('reads the API’s Latency', () => {
      expect([props['Namespace'], props['MetricName']]).toEqual(['AWS/ApiGateway', 'Latency']);
    });
    it('takes p99 over 5 minutes', () => {
      expect([props['ExtendedStatistic'], props['Period']]).toEqual(['p99', 300]);
    });
    it(`fires above ${DEFAULT_ALARM_THRESHOLDS.apiLatencyP99Ms} ms for three periods`, () => {
      expect(firing(props)).toEqual(['GreaterThanThreshold', DEFAULT_ALARM_THRESHOLDS.apiLatencyP99Ms, 3]);
    });
  });

  describe('WAF blocks', () => {
    const props = alarmProps(alarms.wafBlocks);
    it('reads AWS/WAFV2 BlockedRequests', () => {
      expect([props['Namespace'], props['MetricName']]).toEqual(['AWS/WAFV2', 'BlockedRequests']);
    });
    it('names the flood rule', () => {
      expect(props['Dimensions']).toEqual(
        expect.arrayContaining([{ Name: 'Rule', Value: stack.httpApi.tenantRateLimit.ruleMetricName }]),
      );
    });
    it('names the web ACL by the name it is created with', () => {
      expect(props['Dimensions']).toEqual(
        expect.arrayContaining([{ Name: 'WebACL', Value: stack.httpApi.tenantRateLimit.webAclName }]),
      );
    });
    it(`fires at ${DEFAULT_ALARM_THRESHOLDS.wafBlockedRequestsPer5Minutes} or more`, () => {
      expect(firing(props)).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.wafBlockedRequestsPer5Minutes,
        1,
      ]);
    });
  });

  const otherFunctions = ['ingest', 'admin', 'authorizer', 'reconciler'] as const;
  describe.each(otherFunctions)('%s function', (fn) => {
    const fnRef = [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(stack.functions[fn]) } }];
    it('has an errors alarm on its own Errors', () => {
      const props = alarmProps(monitoring.functionAlarms[fn].errors);
      expect([props['MetricName'], props['Dimensions']]).toEqual(['Errors', fnRef]);
    });
    it('has a throttles alarm on its own Throttles', () => {
      const props = alarmProps(monitoring.functionAlarms[fn].throttles);
      expect([props['MetricName'], props['Dimensions']]).toEqual(['Throttles', fnRef]);
    });
    it(`errors fire at ${DEFAULT_ALARM_THRESHOLDS.functionErrorsPer5Minutes} or more in 5 minutes`, () => {
      expect(firing(alarmProps(monitoring.functionAlarms[fn].errors))).toEqual([
        'GreaterThanOrEqualToThreshold',
        DEFAULT_ALARM_THRESHOLDS.functionErrorsPer5Minutes,
        1,
      ]);
    });
  });

  describe.each(['stores', 'dispatch', 'tokens', 'deliveries'] as const)('%s table', (table) => {
    const tableRef = { Ref: logicalIdOf(stack.tables.all[table]) };
    const metricsOf = (props: Record<string, unknown>) =>
      (props['Metrics'] as { MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] } } }[])
        .filter((m) => m.MetricStat)
        .map((m) => m.MetricStat?.Metric);
    it('alarms on read and write throttle events of this table', () => {
      const metrics = metricsOf(alarmProps(monitoring.tableAlarms[table].throttles));
      expect(metrics.map((m) => [m?.MetricName, m?.Dimensions])).toEqual([
        ['ReadThrottleEvents', [{ Name: 'TableName', Value: tableRef }]],
        ['WriteThrottleEvents', [{ Name: 'TableName', Value: tableRef }]],
      ]);
    });
    it('alarms on system errors of every operation the functions call on it', () => {
      const metrics = metricsOf(alarmProps(monitoring.tableAlarms[table].systemErrors));
      expect(metrics.map((m) => m?.MetricName)).toEqual(Array(5).fill('SystemErrors'));
    });
  });
});

describe('monitoring: invalid props (no synth)', () => {
  it('rejects an alarm email that is not an address', () => {
    expect(() => buildStack({ alarmEmail: 'ops at example' })).toThrow(/alarmEmail must be an email address/);
  });

  it('rejects a threshold that is not a non-negative integer', () => {
    expect(() => buildStack({ alarmThresholds: { workerErrorsPer5Minutes: -1 } })).toThrow(
      /alarmThresholds\.workerErrorsPer5Minutes must be an integer/,
    );
  });
});

describe('monitoring: thresholds', () => {
  it('rejects a threshold name it does not know', () => {
    expect(() => buildStack({ alarmThresholds: { apiLatencyMs: 1 } as never })).toThrow(
      /alarmThresholds\.apiLatencyMs is not a threshold/,
    );
  });

  it('takes a threshold override', () => {
    expect(
      buildStack({ alarmThresholds: { apiLatencyP99Ms: 1234 } }).monitoring.thresholds.apiLatencyP99Ms,
    ).toBe(1234);
  });

  it("the confirm queue's oldest-age alarm fires at the attention queues' threshold, overridden too", () => {
    const custom = buildStack({ alarmThresholds: { attentionOldestAgeSeconds: 123 } });
    const alarms = Template.fromStack(custom).findResources('AWS::CloudWatch::Alarm');
    const thresholdOf = (alarm: Parameters<typeof logicalIdOf>[0]): unknown =>
      alarms[logicalIdOf(alarm)]?.Properties?.Threshold;
    expect([
      thresholdOf(custom.monitoring.alarms.confirmOldestAge),
      thresholdOf(custom.monitoring.alarms.attentionOldestAge),
    ]).toEqual([123, 123]);
  });
});
