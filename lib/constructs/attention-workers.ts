import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { grantStoreQueues } from '../store-queue-access.js';
import { grantTables } from '../table-access.js';
import { requireIntegerInRange } from '../validation.js';
import { ServiceFunction } from './lambda-function.js';
import type { ServiceWiring } from './service-wiring.js';

export interface AttentionWorkersProps extends ServiceWiring {
  /**
   * How many slices run at once across all stores (W in the fair-share arithmetic). Both the event
   * source's MaximumConcurrency and the function's reserved concurrency are set to it.
   * Must lie in [WORKER_EVENT_SOURCE.minPoolSize, WORKER_EVENT_SOURCE.maxPoolSize].
   * @default WORKER_EVENT_SOURCE.defaultPoolSize
   */
  readonly poolSize?: number;
}

/**
 * The attention workers: one Lambda function fed by the attention queue, one attention per
 * invocation, at most `poolSize` invocations at once.
 */
export class AttentionWorkers extends Construct {
  public readonly function: NodejsFunction;
  public readonly logGroup: LogGroup;
  public readonly eventSource: SqsEventSource;
  public readonly poolSize: number;

  constructor(scope: Construct, id: string, props: AttentionWorkersProps) {
    super(scope, id);
    this.poolSize = requireIntegerInRange(
      'workerPoolSize',
      props.poolSize ?? WORKER_EVENT_SOURCE.defaultPoolSize,
      WORKER_EVENT_SOURCE.minPoolSize,
      WORKER_EVENT_SOURCE.maxPoolSize,
    );

    const worker = new ServiceFunction(this, 'Worker', {
      name: 'worker',
      environment: props.environment,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
      // An SQS event source ignores reserved concurrency when it polls: throttled invocations return
      // attentions to the queue and count toward maxReceiveCount. MaximumConcurrency below caps the
      // poller; reserving the same number guarantees those invocations are never throttled.
      reservedConcurrentExecutions: this.poolSize,
    });
    this.function = worker.function;
    this.logGroup = worker.logGroup;

    grantTables('worker', this.function, props.tables);
    // Re-signalling at the end of a slice; consuming comes with the event source.
    props.attentionQueue.grantSendMessages(this.function);
    grantStoreQueues(this, this.function, props.queuePrefix, 'worker');

    this.eventSource = new SqsEventSource(props.attentionQueue, {
      batchSize: WORKER_EVENT_SOURCE.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: this.poolSize,
    });
    this.function.addEventSource(this.eventSource);
  }
}
