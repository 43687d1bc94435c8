import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONFIRM_EVENT_SOURCE, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { grantStoreQueues } from '../store-queue-access.js';
import { grantTables } from '../table-access.js';
import type { StorePriority } from '../../lambdas/core/plans.js';
import { DEFAULT_PRIORITY_SHARES, type PriorityShares } from '../../lambdas/core/priority-shares.js';
import { reservedWorkers } from '../../lambdas/core/level-caps.js';
import { levelConcurrency, requirePriorityShares } from '../priority-concurrency.js';
import { requireIntegerInRange } from '../validation.js';
import { ServiceFunction } from './lambda-function.js';
import { grantAttentionSends, type ServiceWiring } from './service-wiring.js';

export interface AttentionWorkersProps extends ServiceWiring {
  /** The confirm queue: the workers send slots whose short polls came back empty to it, and consume it in batches. */
  readonly confirmQueue: IQueue;
  /**
   * How many worker invocations run at once across all stores (W in the fair-share arithmetic), shared between
   * the levels' event sources by `priorityShares`. The function reserves it (with the largest loan, and the confirm
   * queue's CONFIRM_EVENT_SOURCE.maxConcurrency beside it), so no event source is throttled.
   * Must lie in [WORKER_EVENT_SOURCE.minPoolSize, WORKER_EVENT_SOURCE.maxPoolSize].
   * @default WORKER_EVENT_SOURCE.defaultPoolSize
   */
  readonly poolSize?: number;
  /**
   * Attentions per invocation, whose slices the invocation runs concurrently: one worker holds up to this
   * many slices. Must lie in [WORKER_EVENT_SOURCE.minBatchSize, WORKER_EVENT_SOURCE.maxBatchSize].
   * @default WORKER_EVENT_SOURCE.defaultBatchSize
   */
  readonly batchSize?: number;
  /**
   * Each store priority level's share of the pool, in percent (high, normal, low; whole, summing to 100):
   * each level's event source gets that part of the pool as its MaximumConcurrency (at least 2).
   * @default DEFAULT_PRIORITY_SHARES (50/30/20)
   */
  readonly priorityShares?: PriorityShares;
  /**
   * Slices each level may run beyond its share when it has the work (its share of an idle level's
   * capacity): added to every level's MaximumConcurrency, so the function reserves 3 × this much more.
   * @default 0 (with loans on, unused share flows by loans instead)
   */
  readonly poolBurst?: number;
  /**
   * Whether unused share flows between levels on AWS: each reconciler run lends a level with attentions waiting
   * the unused floor of the levels without any (their own floors are never lowered; level-caps.ts). The function
   * then reserves the floors plus the largest loan (every floor but the smallest), so no event source is ever
   * throttled; up to that many workers run while a lending level's work comes back and the borrowers' slices run
   * out. Off, each level runs at most its floor and the pool (with the confirm queue's few) is a hard bound.
   * @default true
   */
  readonly poolLoans?: boolean;
}

/**
 * The attention workers: one Lambda function fed by every level's attention queue, up to `batchSize`
 * attentions per invocation, their slices run concurrently. Each level's event source runs at most its cap of invocations at once (see
 * `levelConcurrency`), and the function reserves the sum of the caps, so no level is ever throttled or
 * crowded out by another.
 */
export class AttentionWorkers extends Construct {
  public readonly function: NodejsFunction;
  public readonly logGroup: LogGroup;
  /** The `normal` level's event source (the original one, on the original attention queue). */
  public readonly eventSource: SqsEventSource;
  public readonly eventSources: Readonly<Record<StorePriority, SqsEventSource>>;
  /** The confirm queue's event source: batches of up to CONFIRM_EVENT_SOURCE.batchSize, gathered over its window. */
  public readonly confirmEventSource: SqsEventSource;
  public readonly poolSize: number;
  /** Attentions per invocation (run concurrently). */
  public readonly batchSize: number;
  /**
   * Each level's floor: its MaximumConcurrency as deployed, never lowered (with loans, reconciler runs raise it
   * while the level borrows).
   */
  public readonly levelConcurrency: Readonly<Record<StorePriority, number>>;
  /** Whether the reconciler lends unused floors (`poolLoans`). */
  public readonly poolLoans: boolean;
  /** The function's reserved concurrency: the floors, plus the largest loan with loans on. */
  public readonly reservedConcurrency: number;

  constructor(scope: Construct, id: string, props: AttentionWorkersProps) {
    super(scope, id);
    this.poolSize = requireIntegerInRange(
      'workerPoolSize',
      props.poolSize ?? WORKER_EVENT_SOURCE.defaultPoolSize,
      WORKER_EVENT_SOURCE.minPoolSize,
      WORKER_EVENT_SOURCE.maxPoolSize,
    );
    this.batchSize = requireIntegerInRange(
      'workerBatchSize',
      props.batchSize ?? WORKER_EVENT_SOURCE.defaultBatchSize,
      WORKER_EVENT_SOURCE.minBatchSize,
      WORKER_EVENT_SOURCE.maxBatchSize,
    );

    this.levelConcurrency = levelConcurrency(
      this.poolSize,
      requirePriorityShares('priorityShares', props.priorityShares ?? DEFAULT_PRIORITY_SHARES),
      props.poolBurst ?? 0,
    );
    this.poolLoans = props.poolLoans ?? true;
    // The confirm queue's invocations are reserved beside the levels' workers, so neither crowds out the other.
    this.reservedConcurrency =
      reservedWorkers(this.levelConcurrency, this.poolLoans) + CONFIRM_EVENT_SOURCE.maxConcurrency;

    const worker = new ServiceFunction(this, 'Worker', {
      name: 'worker',
      environment: props.environment,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
      // An SQS event source ignores reserved concurrency when it polls: throttled invocations return
      // attentions to the queue and count toward maxReceiveCount. MaximumConcurrency below caps the
      // poller; reserving at least the caps' largest sum guarantees those invocations are never throttled.
      reservedConcurrentExecutions: this.reservedConcurrency,
    });
    this.function = worker.function;
    this.logGroup = worker.logGroup;

    grantTables('worker', this.function, props.tables);
    // Re-signalling at the end of a slice; consuming comes with the event source.
    grantAttentionSends(props.attentionQueues, this.function);
    props.confirmQueue.grantSendMessages(this.function);
    grantStoreQueues(this, this.function, props.queuePrefix, 'worker');

    const eventSourceOf = (level: StorePriority): SqsEventSource => {
      const source = new SqsEventSource(props.attentionQueues[level], {
        batchSize: this.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: this.levelConcurrency[level],
      });
      this.function.addEventSource(source);
      return source;
    };
    // `normal` first: its mapping is the original one (same queue, same logical id), updated in place.
    const normal = eventSourceOf('normal');
    this.eventSources = { high: eventSourceOf('high'), normal, low: eventSourceOf('low') };
    this.eventSource = normal;
    // The empty decisions of up to 100 stores in one invocation, their long polls side by side (issue #11).
    this.confirmEventSource = new SqsEventSource(props.confirmQueue, {
      batchSize: CONFIRM_EVENT_SOURCE.batchSize,
      maxBatchingWindow: Duration.seconds(CONFIRM_EVENT_SOURCE.batchingWindowSeconds),
      reportBatchItemFailures: true,
      maxConcurrency: CONFIRM_EVENT_SOURCE.maxConcurrency,
    });
    this.function.addEventSource(this.confirmEventSource);
  }
}
