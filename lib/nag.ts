import { Aspects, Stack, type CfnElement, type IAspect } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks, NagSuppressions, ServerlessChecks, type NagPackSuppression } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { ROUTES, type RouteAuth } from '../lambdas/core/routes.js';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { QueueNames, type TableKey } from '../lambdas/core/names.js';
import type { AttentionQueueStack } from './attention-queue-stack.js';
import { StoreQueueActions } from './store-queue-access.js';
import { TableAccess, type TableActions } from './table-access.js';

/** The rule packs run at synth (bin/cdk.ts) and in the infra test: findings show on `cdk synth` and `cdk deploy`. */
export const nagPacks = (): IAspect[] => [new AwsSolutionsChecks(), new ServerlessChecks()];

/** How cdk-nag spells a template token in `appliesTo`: `<LogicalId.Arn>`. */
const arnToken = (construct: IConstruct): string =>
  `<${Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement)}.Arn>`;

const suppress = (
  construct: IConstruct,
  suppressions: NagPackSuppression[],
  applyToChildren = false,
): void => {
  if (suppressions.length > 0)
    NagSuppressions.addResourceSuppressions(construct, suppressions, applyToChildren);
};

/** The role of a function and its default policy (where the grants land). */
const roleSuppressions = (stack: AttentionQueueStack, fn: FunctionName, target: IFunction): void => {
  const role = target.role;
  if (!role) throw new Error(`the ${fn} function has no role`);
  const suppressions: NagPackSuppression[] = [
    {
      id: 'AwsSolutions-IAM4',
      reason:
        'AWSLambdaBasicExecutionRole only lets the function write its own logs (CreateLogStream/PutLogEvents); it is the policy AWS maintains for exactly that',
      appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
    },
  ];
  const wildcards: string[] = [];
  if (stack.tracing) {
    // xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions.
    wildcards.push('Resource::*');
  }
  const queues = StoreQueueActions[fn];
  const [work, deadLetter, priority] = QueueNames.storeQueuePatterns(stack.queuePrefix);
  const sqsArn = (pattern: string | undefined) =>
    `Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${pattern}`;
  if (queues.work.length > 0) wildcards.push(sqsArn(work), sqsArn(priority));
  if (queues.deadLetter.length > 0) wildcards.push(sqsArn(deadLetter));
  const tables: Partial<Record<TableKey, TableActions>> = TableAccess[fn];
  const indexed = (Object.entries(tables) as [TableKey, TableActions][])
    .filter(([, access]) => access.indexes !== undefined)
    .map(([key]) => `Resource::${arnToken(stack.tables.all[key])}/index/*`);
  wildcards.push(...indexed);
  if (wildcards.length > 0) {
    suppressions.push({
      id: 'AwsSolutions-IAM5',
      reason: [
        stack.tracing
          ? "'*' only for X-Ray's PutTraceSegments/PutTelemetryRecords, which take no resource ARN"
          : '',
        indexed.length > 0 ? "'/index/*' only for Query on the table's own secondary indexes" : '',
        queues.work.length + queues.deadLetter.length > 0
          ? `store queues and DLQs are created at run time, so their name patterns (${work}, ${priority}, ${deadLetter}) are the narrowest ARNs possible; each kind gets only the actions this function calls on it`
          : '',
      ]
        .filter((part) => part !== '')
        .join('; '),
      appliesTo: wildcards,
    });
  }
  suppress(role, suppressions, true);
};

/** Per-function findings of ServerlessChecks and AwsSolutions that the design answers otherwise. */
const functionSuppressions = (stack: AttentionQueueStack, fn: FunctionName, target: IFunction): void => {
  const synchronous = fn === 'ingest' || fn === 'admin' || fn === 'authorizer';
  const dlqReason = synchronous
    ? `the ${fn} function is only invoked synchronously by API Gateway, which answers the caller; a dead-letter target applies to asynchronous invocations only`
    : fn === 'worker'
      ? 'the worker is invoked by its SQS event source; a failed attention returns to the attention queue, whose redrive policy moves it to the attention DLQ (alarmed)'
      : "the reconciler's next tick (every minute) is its retry; a failed tick has nothing worth keeping (retryAttempts 0, maxEventAge one period), and its errors are alarmed";
  const suppressions: NagPackSuppression[] = [{ id: 'Serverless-LambdaDLQ', reason: dlqReason }];
  if (!stack.tracing) {
    suppressions.push({
      id: 'Serverless-LambdaTracing',
      reason: 'tracing turned off for this deployment (-c tracing=false)',
    });
  }
  suppress(target, suppressions);
};

const methodAuthReason: Record<RouteAuth, string> = {
  tenant:
    'integrator routes use the Lambda TOKEN authorizer (bearer tokens hashed in DynamoDB) by design: integrators are servers, not Cognito users',
  iam: 'admin routes use IAM (SigV4) authorization: operators are IAM principals, not Cognito users',
  none: 'no route is unauthenticated',
};

/**
 * Applies the rule packs to the stack and, for every accepted finding, a suppression on that one
 * resource (with `appliesTo` for the wildcard findings) whose reason is true for it. Whatever else a pack
 * finds is an error annotation: `cdk synth` fails on it, and so does the infra test.
 */
export const applyNag = (stack: AttentionQueueStack): void => {
  for (const pack of nagPacks()) Aspects.of(stack).add(pack);

  for (const [fn, target] of Object.entries(stack.functions) as [FunctionName, IFunction][]) {
    roleSuppressions(stack, fn, target);
    functionSuppressions(stack, fn, target);
  }
  const reconcilerInvokeConfig = stack.reconciler.function.node.tryFindChild('EventInvokeConfig');
  if (reconcilerInvokeConfig) {
    suppress(reconcilerInvokeConfig, [
      {
        id: 'Serverless-LambdaAsyncFailureDestination',
        reason:
          "a failed reconciler tick is superseded by the next one a minute later; there is nothing to replay, and the function's errors are alarmed",
      },
    ]);
  }
  // One mapping per store priority level's attention queue.
  const mappings = stack.workers.function.node.children.filter((child) =>
    child.node.id.startsWith('SqsEventSource'),
  );
  for (const mapping of mappings) {
    suppress(mapping, [
      {
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          "the attention queue's redrive policy (maxReceiveCount 5 → attention DLQ, alarmed) is the failure destination; SQS event sources take no on-failure destination",
      },
    ]);
  }
  suppress(stack.attention.deadLetterQueue, [
    {
      id: 'Serverless-SQSRedrivePolicy',
      reason: 'this is the attention queue’s dead-letter queue: the end of the line, kept 14 days',
    },
  ]);

  const api = stack.httpApi.api;
  suppress(api, [
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'every function validates its input with zod and answers the contract’s 400 naming the field; gateway validation cannot give that body',
    },
  ]);
  const stageSuppressions: NagPackSuppression[] = [
    {
      id: 'AwsSolutions-APIG6',
      reason:
        'access logs are on (every request, with caller and status); execution logs would copy request bodies (tenant data) and authorizer details into logs',
    },
  ];
  if (!stack.tracing) {
    stageSuppressions.push({
      id: 'Serverless-APIGWXrayEnabled',
      reason: 'tracing turned off for this deployment (-c tracing=false)',
    });
  }
  suppress(api.deploymentStage, stageSuppressions);
  if (api.node.tryFindChild('CloudWatchRole')) {
    suppress(api.node.findChild('CloudWatchRole'), [
      {
        id: 'AwsSolutions-IAM4',
        reason: "API Gateway's account-level logging role, with the managed policy AWS documents for it",
        appliesTo: [
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
        ],
      },
    ]);
  }
  for (const route of ROUTES) {
    suppress(stack.httpApi.methods[route.id], [
      { id: 'AwsSolutions-COG4', reason: methodAuthReason[route.auth] },
    ]);
  }
  const catchAllReason =
    'a MOCK integration answering the contract’s 404 route_not_found: no function or backend behind it, nothing to authorize';
  const rootAny = api.root.node.tryFindChild('ANY');
  for (const method of [stack.httpApi.catchAll, ...(rootAny ? [rootAny] : [])]) {
    suppress(method, [
      { id: 'AwsSolutions-APIG4', reason: catchAllReason },
      { id: 'AwsSolutions-COG4', reason: catchAllReason },
    ]);
  }

  const openApiReason =
    'GET /openapi.json: a MOCK integration answering the public OpenAPI document (no function or backend behind it, nothing secret in it)';
  suppress(stack.openApi.method, [
    { id: 'AwsSolutions-APIG4', reason: openApiReason },
    { id: 'AwsSolutions-COG4', reason: openApiReason },
  ]);

  // EventBridge Scheduler's role for the reconciler target (one per stack, made by the LambdaInvoke target).
  for (const child of stack.node.children.filter((c) => c.node.id.startsWith('SchedulerRoleForTarget'))) {
    suppress(
      child,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            "CDK's LambdaInvoke target lets the scheduler invoke the reconciler's versions and aliases (`{arn}:*`); the function itself is the only one named",
          appliesTo: [`Resource::${arnToken(stack.reconciler.function)}:*`],
        },
      ],
      true,
    );
  }
};
