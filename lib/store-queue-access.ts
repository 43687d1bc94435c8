import { ArnFormat, Stack } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { QueueNames } from '../lambdas/core/names.js';

/**
 * Store queues (and their DLQs) are created at run time by the admin function, so no template can
 * name them. IAM names their patterns instead — `arn:…:sqs:<region>:<account>:<prefix>-s-*` (work queues),
 * `…-h-*` (high-priority work queues, granted exactly what work queues are) and `…-d-*` (dead-letter
 * queues) — which cover every store's queue or DLQ of this deployment and nothing else. Work and
 * dead-letter queues are granted separately: a function gets on each kind only what it calls there.
 */
export type StoreQueueKind = 'work' | 'deadLetter';

/** The ARN patterns of one kind of store queue: the work kind covers the work and the high-priority queues. */
export const storeQueueArns = (scope: IConstruct, queuePrefix: string, kind: StoreQueueKind): string[] => {
  const [work, deadLetter, priority] = QueueNames.storeQueuePatterns(queuePrefix) as [string, string, string];
  return (kind === 'work' ? [work, priority] : [deadLetter]).map((resource) =>
    Stack.of(scope).formatArn({ service: 'sqs', resource, arnFormat: ArnFormat.NO_RESOURCE_NAME }),
  );
};

/**
 * What each function calls on each kind of store queue (the SQS calls of the adapters it composes), and
 * nothing more: no sqs:*, no DeleteQueue. Batch calls are authorized by their single-message action.
 */
export const StoreQueueActions = {
  admin: {
    // CreateQueue with tags needs TagQueue; SetQueueAttributes sets the policy and redrive settings after it
    // (and the attributes of a queue that already exists); GetQueueAttributes reads ARNs and counts.
    // PurgeQueue: the operator's controlled discard of a store's work queue
    // (POST /admin/stores/{storeId}/queue/purge), never of its DLQ.
    work: [
      'sqs:CreateQueue',
      'sqs:TagQueue',
      'sqs:SetQueueAttributes',
      'sqs:GetQueueAttributes',
      // The redrive's destination (StartMessageMoveTask, or local mode's move loop) sends into it.
      'sqs:SendMessage',
      'sqs:PurgeQueue',
    ],
    // A redrive (StartMessageMoveTask) needs, on its source, the move itself plus receive and delete.
    deadLetter: [
      'sqs:CreateQueue',
      'sqs:TagQueue',
      'sqs:SetQueueAttributes',
      'sqs:GetQueueAttributes',
      'sqs:StartMessageMoveTask',
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      // A second redrive is refused while the DLQ's move task still runs.
      'sqs:ListMessageMoveTasks',
    ],
  },
  // Tasks go into a store's work queue only.
  ingest: { work: ['sqs:SendMessage'], deadLetter: [] },
  worker: {
    // A slice receives, deletes, re-times and re-sends (fresh copies of throttled tasks) on the work queue.
    work: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:SendMessage'],
    // Permanent failures are sent to the store's DLQ by the worker itself; it never reads a DLQ.
    deadLetter: ['sqs:SendMessage'],
  },
  // The sweep reads a work queue's counts to find stranded backlogs. On a DLQ, only whether its redrive's
  // move task still runs (the DLQ's ARN first), to lift the store's redrive mark when it has ended.
  // The retention pass (issue #10) re-sends a store's old tasks as fresh copies and deletes the originals;
  // dead-letter keep does the same to a store's dead letters, into the same DLQ (core/dead-letter-keep.ts).
  reconciler: {
    work: ['sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage', 'sqs:DeleteMessage'],
    deadLetter: [
      'sqs:GetQueueAttributes',
      'sqs:ListMessageMoveTasks',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
      'sqs:DeleteMessage',
    ],
  },
  authorizer: { work: [], deadLetter: [] },
} as const satisfies Record<FunctionName, Record<StoreQueueKind, readonly string[]>>;

export type StoreQueueRole = Exclude<keyof typeof StoreQueueActions, 'authorizer'>;

/** One statement per queue kind the function touches. */
export const grantStoreQueues = (
  scope: IConstruct,
  grantee: IGrantable,
  queuePrefix: string,
  role: StoreQueueRole,
): Grant[] =>
  (['work', 'deadLetter'] as const)
    .filter((kind) => StoreQueueActions[role][kind].length > 0)
    .map((kind) =>
      Grant.addToPrincipal({
        grantee,
        actions: [...StoreQueueActions[role][kind]],
        resourceArns: storeQueueArns(scope, queuePrefix, kind),
      }),
    );
