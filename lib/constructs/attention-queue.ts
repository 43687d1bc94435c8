import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ATTENTION_QUEUE, FUNCTIONS } from '../../lambdas/config/topology.js';
import { attentionVisibilitySeconds } from '../../lambdas/core/timing.js';
import type { StorePriority } from '../../lambdas/core/plans.js';
import { InvalidPropError } from '../validation.js';

/**
 * The attention queues ("store X has work"), one per store priority level, and their one DLQ. Every
 * queue is encrypted with SQS-managed keys and refuses non-TLS requests. CloudFormation names them.
 *
 * The `normal` level's queue is the original attention queue (same construct id, so the same logical id):
 * attentions in flight across the upgrade that added the levels stay where the workers read them.
 */
export class AttentionQueue extends Construct {
  /** The `normal` level's queue: the original attention queue. */
  public readonly queue: Queue;
  /** The attention queue of each store priority level; all three dead-letter to `deadLetterQueue`. */
  public readonly levels: Readonly<Record<StorePriority, Queue>>;
  /**
   * The confirm queue (issue #11): slots whose short polls came back empty, waiting for the empty decision, which
   * the workers make for a batch of them at once (CONFIRM_EVENT_SOURCE). Dead-letters to `deadLetterQueue` too.
   */
  public readonly confirm: Queue;
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

    const levelQueue = (id: string): Queue =>
      new Queue(this, id, {
        visibilityTimeout: Duration.seconds(ATTENTION_QUEUE.visibilityTimeoutSeconds),
        retentionPeriod: Duration.seconds(ATTENTION_QUEUE.retentionSeconds),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: ATTENTION_QUEUE.maxReceiveCount },
      });
    this.queue = levelQueue('Queue');
    this.levels = { high: levelQueue('HighQueue'), normal: this.queue, low: levelQueue('LowQueue') };
    this.confirm = levelQueue('ConfirmQueue');
  }
}
