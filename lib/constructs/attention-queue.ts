import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ATTENTION_QUEUE, FUNCTIONS } from '../../lambdas/config/topology.js';
import { attentionVisibilitySeconds } from '../../lambdas/core/timing.js';
import { InvalidPropError } from '../validation.js';

/**
 * The shared attention queue ("store X has work") and its DLQ. Both are encrypted with SQS-managed
 * keys and refuse non-TLS requests. CloudFormation names them.
 */
export class AttentionQueue extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    // AWS rule for SQS event sources: visibility ≥ 6 × the consumer's timeout, or a slow slice's
    // attention reappears while the slice is still running. Checked here so a topology edit fails synth.
    const minimum = attentionVisibilitySeconds(FUNCTIONS.worker.timeoutSeconds);
    if (ATTENTION_QUEUE.visibilityTimeoutSeconds < minimum) {
      throw new InvalidPropError(
        `ATTENTION_QUEUE.visibilityTimeoutSeconds (${ATTENTION_QUEUE.visibilityTimeoutSeconds}) must be at least ${minimum} (6 × the worker timeout of ${FUNCTIONS.worker.timeoutSeconds} s)`,
      );
    }

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.seconds(ATTENTION_QUEUE.deadLetterRetentionSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });

    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(ATTENTION_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(ATTENTION_QUEUE.retentionSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount },
    });
  }
}
