import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { FUNCTIONS } from '../../lambdas/config/topology.js';

/**
 * Counts the AWS requests the real handlers make, by instrumenting the SDK clients (a middleware on each
 * client's stack), so requests per task are measured, not estimated. Each request is classified by the
 * resource it touches.
 */
export type RequestClass =
  | 'task queue'
  | 'attention queue'
  | 'dead-letter queue'
  | 'queue attributes'
  | 'dispatch: leases and slots'
  | 'dispatch: enqueue signalling'
  | 'dispatch: rate reservations'
  | 'delivery records'
  | 'store lookups'
  | 'tokens'
  | 'other';

export interface RequestCounts {
  sqs: Map<string, number>;
  dynamoReads: number;
  dynamoWrites: number;
  /** DynamoDB write units billed: one per write request, one per item of a BatchWriteItem. */
  dynamoWriteUnits: number;
  byClass: Map<RequestClass, number>;
  total: number;
}

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

export interface Tables {
  stores: string;
  dispatch: string;
  deliveries: string;
  tokens: string;
}

export const newCounts = (): RequestCounts => ({
  sqs: new Map(),
  dynamoReads: 0,
  dynamoWrites: 0,
  dynamoWriteUnits: 0,
  byClass: new Map(),
  total: 0,
});

/**
 * The pacers' writes to the shared schedule (dynamo-dispatch-state.ts): a block reservation (with its lateness, or
 * a widening without), a restart or a lowering's placement, a give-back.
 */
const RATE_RESERVATION =
  /^((SET tatLate = :late )?ADD tat :interval, tatSeq :one, tatCalls :calls|SET tat = :(next|back)(, tatLate = :late)? ADD tatSeq :one, tatCalls :(calls|unreserved))$/;

/** What a dispatch-table request is for, from its update expression (none for a read). */
export const dispatchWriteClass = (update: string): RequestClass =>
  RATE_RESERVATION.test(update)
    ? 'dispatch: rate reservations'
    : update.includes('ADD enqSeq')
      ? 'dispatch: enqueue signalling'
      : 'dispatch: leases and slots';

export const instrument = (
  clients: { sqs: SQSClient; dynamo: DynamoDBClient },
  attentionQueueUrl: string,
  tables: Tables,
): { counts: () => RequestCounts; reset: () => void } => {
  let counts = newCounts();
  const bump = (cls: RequestClass) => {
    counts.byClass.set(cls, (counts.byClass.get(cls) ?? 0) + 1);
    counts.total++;
  };
  clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      const input = args.input as { QueueUrl?: string };
      counts.sqs.set(name, (counts.sqs.get(name) ?? 0) + 1);
      if (name === 'GetQueueAttributesCommand' || name === 'CreateQueueCommand') bump('queue attributes');
      else if (input.QueueUrl === attentionQueueUrl) bump('attention queue');
      else if (input.QueueUrl?.includes('-d-')) bump('dead-letter queue');
      else bump('task queue');
      return next(args);
    },
    { step: 'initialize', name: 'benchRequestCounter' },
  );
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
      // A batch request names its table in RequestItems (the delivered settles' BatchWriteItem).
      const table = input.TableName ?? Object.keys(input.RequestItems ?? {})[0];
      if (READS.has(name)) counts.dynamoReads++;
      else {
        counts.dynamoWrites++;
        counts.dynamoWriteUnits +=
          name === 'BatchWriteItemCommand'
            ? Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>).reduce(
                (sum, items) => sum + items.length,
                0,
              )
            : 1;
      }
      const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
      if (table === tables.dispatch) {
        bump(dispatchWriteClass(update));
      } else if (table === tables.deliveries) bump('delivery records');
      else if (table === tables.stores) bump('store lookups');
      else if (table === tables.tokens) bump('tokens');
      else bump('other');
      return next(args);
    },
    { step: 'initialize', name: 'benchRequestCounter' },
  );
  return {
    counts: () => counts,
    reset: () => {
      counts = newCounts();
    },
  };
};

/**
 * us-east-1 list prices: SQS and DynamoDB from design-notes.md; Lambda (not in design-notes.md) from AWS's
 * price list: $0.20 per million invocations and $0.0000166667 per GB-s (x86).
 */
export const PRICES = {
  sqsPerMillion: 0.4,
  dynamoWritePerMillion: 0.625,
  dynamoReadPerMillion: 0.125,
  lambdaPerMillion: 0.2,
  lambdaGbSecond: 0.0000166667,
};

/** The attention worker's configured memory (lambdas/config/topology.ts), in GB. */
export const WORKER_MEMORY_GB = FUNCTIONS.worker.memoryMb / 1024;

export interface CostPerMillionTasks {
  requests: number;
  invocations: number;
  /** Lambda duration: measured worker-busy time × the worker's configured memory. */
  compute: number;
  total: number;
  gbSecondsPerTask: number;
}

export const dollarsPerMillionTasks = (
  c: RequestCounts,
  tasks: number,
  invocations: number,
  workerBusyMs: number,
): CostPerMillionTasks => {
  const sqs = [...c.sqs.values()].reduce((a, b) => a + b, 0);
  const perTask = (n: number) => n / tasks;
  const requests =
    perTask(sqs) * PRICES.sqsPerMillion +
    // DynamoDB bills a BatchWriteItem per item written, not per request.
    perTask(c.dynamoWriteUnits) * PRICES.dynamoWritePerMillion +
    perTask(c.dynamoReads) * PRICES.dynamoReadPerMillion;
  const invocationCost = perTask(invocations) * PRICES.lambdaPerMillion;
  const gbSecondsPerTask = perTask((workerBusyMs / 1000) * WORKER_MEMORY_GB);
  const compute = gbSecondsPerTask * PRICES.lambdaGbSecond * 1e6;
  return {
    requests,
    invocations: invocationCost,
    compute,
    total: requests + invocationCost + compute,
    gbSecondsPerTask,
  };
};
