import { Duration } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { RECONCILER_SCHEDULE } from '../../lambdas/config/topology.js';
import { formatLevelCaps, type LevelCaps } from '../../lambdas/core/level-caps.js';
import { STORE_PRIORITIES, type StorePriority } from '../../lambdas/core/plans.js';
import { grantStoreQueues } from '../store-queue-access.js';
import { grantTables } from '../table-access.js';
import { ServiceFunction } from './lambda-function.js';
import { grantAttentionSends, type ServiceWiring } from './service-wiring.js';

export interface ReconcilerProps extends ServiceWiring {
  /**
   * Store priority on AWS: each level's floor and its event source; each run lends unused floors, or with loans
   * off brings loaned caps back to the floors (lambdas/core/level-balance.ts). Absent, no run touches them.
   */
  readonly levelCaps?: {
    readonly floors: LevelCaps;
    readonly eventSources: Readonly<Record<StorePriority, SqsEventSource>>;
    /** Off, runs only bring caps raised before the switch back to the floors. */
    readonly loans: boolean;
  };
}

/**
 * The reconciler: repairs lost attentions and stranded backlogs, run by EventBridge Scheduler every
 * RECONCILER_SCHEDULE.rateMinutes.
 */
export class Reconciler extends Construct {
  public readonly function: NodejsFunction;
  public readonly logGroup: LogGroup;
  public readonly schedule: Schedule;

  constructor(scope: Construct, id: string, props: ReconcilerProps) {
    super(scope, id);

    const reconciler = new ServiceFunction(this, 'Reconciler', {
      name: 'reconciler',
      environment: props.environment,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
      // The next tick is the retry: re-running a failed or stale tick only overlaps with a fresh one.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(RECONCILER_SCHEDULE.rateMinutes),
      // One run at a time: overlapping runs are safe (every repair is a conditional write) but only
      // duplicate each other's reads; a tick that finds a run still going is throttled and dropped.
      reservedConcurrentExecutions: 1,
    });
    this.function = reconciler.function;
    this.logGroup = reconciler.logGroup;

    grantTables('reconciler', this.function, props.tables);
    grantAttentionSends(props.attentionQueues, this.function);
    grantStoreQueues(this, this.function, props.queuePrefix, 'reconciler');
    if (props.levelCaps) this.balanceLevels(props.levelCaps, props.attentionQueues);

    this.schedule = new Schedule(this, 'Schedule', {
      description: 'Attention Queue reconciler tick',
      schedule: ScheduleExpression.rate(Duration.minutes(RECONCILER_SCHEDULE.rateMinutes)),
      // Same reasoning as retryAttempts above: a tick that cannot be delivered is superseded by the next.
      target: new LambdaInvoke(this.function, { retryAttempts: 0, maxEventAge: Duration.minutes(1) }),
    });
  }

  /** The floors and mappings in its environment; reading the levels' queue counts, reading and updating their mappings. */
  private balanceLevels(
    levels: NonNullable<ReconcilerProps['levelCaps']>,
    queues: ReconcilerProps['attentionQueues'],
  ): void {
    const sources = STORE_PRIORITIES.map((level) => levels.eventSources[level]);
    this.function.addEnvironment(EnvNames.levelFloors, formatLevelCaps(levels.floors));
    this.function.addEnvironment(
      EnvNames.levelMappings,
      STORE_PRIORITIES.map((level) => `${level}=${levels.eventSources[level].eventSourceMappingId}`).join(
        ',',
      ),
    );
    this.function.addEnvironment(EnvNames.levelLoans, levels.loans ? 'on' : 'off');
    for (const level of STORE_PRIORITIES) queues[level].grant(this.function, 'sqs:GetQueueAttributes');
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['lambda:GetEventSourceMapping', 'lambda:UpdateEventSourceMapping'],
        resources: sources.map((source) => source.eventSourceMappingArn),
      }),
    );
  }
}
