import type { RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { DeployEnvironment } from '../function-environment.js';
import type { StorePriority } from '../../lambdas/core/plans.js';
import type { TableSet } from './data-tables.js';

/** Lets `grantee` publish attentions on every level's queue. */
export const grantAttentionSends = (queues: ServiceWiring['attentionQueues'], grantee: IGrantable): void => {
  for (const queue of Object.values(queues)) queue.grantSendMessages(grantee);
};

/** What every function-owning construct is given by the stack: shared resources and shared settings. */
export interface ServiceWiring {
  /** The tables; each construct grants its functions only the access they need. */
  readonly tables: TableSet;
  /** The attention queue of each store priority level; whoever publishes attentions may send to all three. */
  readonly attentionQueues: Readonly<Record<StorePriority, IQueue>>;
  /** Prefix of the store queues created at run time; scopes the SQS grants on them. */
  readonly queuePrefix: string;
  /** Every value known at deploy time, by variable name. */
  readonly environment: DeployEnvironment;
  /**
   * Retention of the functions' log groups.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the functions' log groups when the stack is deleted.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * X-Ray tracing of the functions (and the API stage).
   * @default true
   */
  readonly tracing?: boolean;
}
