import { ArnFormat, Stack } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { QueueNames } from '../lambdas/core/names.js';

/**
 * Store queues (and their DLQs) are created at run time by the admin function, so no template can
 * name them. IAM names their patterns instead — `arn:…:sqs:<region>:<account>:<prefix>-s-*` and `…-d-*` —
 * which cover every store's queue and DLQ of this deployment and nothing else.
 */
const storeQueuesArns = (scope: IConstruct, queuePrefix: string): string[] =>
  QueueNames.storeQueuePatterns(queuePrefix).map((pattern) =>
    Stack.of(scope).formatArn({ service: 'sqs', resource: pattern, arnFormat: ArnFormat.NO_RESOURCE_NAME }),
  );

/** What each function does to store queues, and nothing more (no sqs:*, no DeleteQueue; PurgeQueue for the admin's controlled discard only). */
const StoreQueueActions = {
  admin: [
    'sqs:CreateQueue',
    'sqs:GetQueueUrl',
    'sqs:GetQueueAttributes',
    'sqs:SetQueueAttributes',
    // CreateQueue with tags needs TagQueue too.
    'sqs:TagQueue',
    // A dead-letter redrive (StartMessageMoveTask) needs receive/delete on the DLQ and send on the queue.
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:SendMessage',
    'sqs:StartMessageMoveTask',
    'sqs:ListMessageMoveTasks',
    // The operator's controlled discard (POST /admin/stores/{storeId}/queue/purge).
    'sqs:PurgeQueue',
  ],
  ingest: ['sqs:SendMessage'],
  worker: [
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:ChangeMessageVisibility',
    // Permanent failures are sent to the store's DLQ by the worker itself.
    'sqs:SendMessage',
    'sqs:GetQueueAttributes',
  ],
  reconciler: ['sqs:GetQueueAttributes'],
} as const satisfies Partial<Record<FunctionName, readonly string[]>>;

export type StoreQueueRole = keyof typeof StoreQueueActions;

export const grantStoreQueues = (
  scope: IConstruct,
  grantee: IGrantable,
  queuePrefix: string,
  role: StoreQueueRole,
): Grant =>
  Grant.addToPrincipal({
    grantee,
    actions: [...StoreQueueActions[role]],
    resourceArns: storeQueuesArns(scope, queuePrefix),
  });
