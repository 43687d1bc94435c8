import type { RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { DeployEnvironment } from '../function-environment.js';
import type { TableSet } from './data-tables.js';

/** What every function-owning construct is given by the stack: shared resources and shared settings. */
export interface ServiceWiring {
  /** The tables; each construct grants its functions only the access they need. */
  readonly tables: TableSet;
  /** The shared attention queue. */
  readonly attentionQueue: IQueue;
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
