import { describe, expect, it } from 'vitest';
import type { FunctionName } from '../../lambdas/config/runtime-config.js';
import { FUNCTIONS } from '../../lambdas/config/topology.js';
import type { TableKey } from '../../lambdas/core/names.js';
import {
  actionsAllowedOn,
  arnOf,
  asArray,
  resourcesOfType,
  roleIdOf,
  synthStack,
  type PolicyStatement,
} from './synth-stack.js';

const { stack, template } = synthStack();
const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];
const roleOf = (fn: FunctionName): string => roleIdOf(stack.functions[fn]);

const allStatements: PolicyStatement[] = resourcesOfType(template, 'AWS::IAM::Policy').flatMap(
  ([, policy]) => (policy.Properties?.PolicyDocument as { Statement: PolicyStatement[] }).Statement,
);
const isDataAction = (action: string): boolean => action.startsWith('sqs:') || action.startsWith('dynamodb:');

const patternArn = (pattern: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':sqs:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:${pattern}`,
    ],
  ],
});
/** Store queues and store DLQs of the default prefix `aq`. */
const storeQueuesArns = ['aq-s-*', 'aq-d-*'].map(patternArn);
const attentionQueueArn = arnOf(stack.attention.queue);

describe('no broad grants', () => {
  it('no statement allows *, sqs:* or dynamodb:*', () => {
    const broad = allStatements
      .flatMap((s) => asArray(s.Action))
      .filter((a) => ['*', 'sqs:*', 'dynamodb:*'].includes(a));
    expect(broad).toEqual([]);
  });

  it('no SQS or DynamoDB action is allowed on resource *', () => {
    const wildcard = allStatements.filter(
      (s) => asArray(s.Action).some(isDataAction) && asArray(s.Resource).some((r) => r === '*'),
    );
    expect(wildcard).toEqual([]);
  });

  it('SQS actions name only the attention queue or the store-queue pattern', () => {
    const allowed = [attentionQueueArn, ...storeQueuesArns].map((arn) => JSON.stringify(arn));
    const others = allStatements
      .filter((s) => asArray(s.Action).some((a) => a.startsWith('sqs:')))
      .flatMap((s) => asArray(s.Resource))
      .filter((r) => !allowed.includes(JSON.stringify(r)));
    expect(others).toEqual([]);
  });
});

describe('store queues (created at run time, granted by name pattern)', () => {
  const expected: Record<FunctionName, string[]> = {
    admin: [
      'sqs:CreateQueue',
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:SetQueueAttributes',
      'sqs:TagQueue',
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:SendMessage',
      'sqs:StartMessageMoveTask',
      'sqs:ListMessageMoveTasks',
      'sqs:PurgeQueue',
    ],
    ingest: ['sqs:SendMessage'],
    worker: [
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:SendMessage',
      'sqs:GetQueueAttributes',
    ],
    reconciler: ['sqs:GetQueueAttributes'],
    authorizer: [],
  };

  it.each(FUNCTION_NAMES)('%s gets exactly its store-queue actions on the queue pattern', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), storeQueuesArns[0]).sort()).toEqual(
      [...expected[fn]].sort(),
    );
  });

  it.each(FUNCTION_NAMES)('%s gets exactly the same actions on the DLQ pattern', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), storeQueuesArns[1]).sort()).toEqual(
      [...expected[fn]].sort(),
    );
  });
});

describe('attention queue', () => {
  it.each(['ingest', 'admin', 'worker', 'reconciler'] as const)('%s can send attentions', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), attentionQueueArn)).toContain('sqs:SendMessage');
  });

  it('the authorizer has no access to it', () => {
    expect(actionsAllowedOn(template, roleOf('authorizer'), attentionQueueArn)).toEqual([]);
  });

  it.each(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'])(
    'the worker can %s (its event source consumes)',
    (action) => {
      expect(actionsAllowedOn(template, roleOf('worker'), attentionQueueArn)).toContain(action);
    },
  );

  it.each(['ingest', 'admin', 'reconciler'] as const)('%s cannot consume attentions', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), attentionQueueArn)).not.toContain('sqs:ReceiveMessage');
  });
});

describe('tables', () => {
  type Access = 'none' | 'read' | 'readWrite';
  const ACCESS: Record<FunctionName, Record<TableKey, Access>> = {
    ingest: { stores: 'read', dispatch: 'readWrite', tokens: 'none', deliveries: 'read' },
    admin: { stores: 'readWrite', dispatch: 'readWrite', tokens: 'readWrite', deliveries: 'none' },
    authorizer: { stores: 'none', dispatch: 'none', tokens: 'read', deliveries: 'none' },
    worker: { stores: 'read', dispatch: 'readWrite', tokens: 'none', deliveries: 'readWrite' },
    reconciler: { stores: 'read', dispatch: 'readWrite', tokens: 'none', deliveries: 'none' },
  };
  const cases = FUNCTION_NAMES.flatMap((fn) =>
    (Object.keys(ACCESS[fn]) as TableKey[]).map((table) => ({ fn, table, access: ACCESS[fn][table] })),
  );
  const actionsOn = (fn: FunctionName, table: TableKey): string[] =>
    actionsAllowedOn(template, roleOf(fn), arnOf(stack.tables.all[table]));

  it.each(cases.filter((c) => c.access === 'none'))('$fn has no access to $table', ({ fn, table }) => {
    expect(actionsOn(fn, table)).toEqual([]);
  });

  it.each(cases.filter((c) => c.access !== 'none'))('$fn can read $table', ({ fn, table }) => {
    expect(actionsOn(fn, table)).toContain('dynamodb:GetItem');
  });

  it.each(cases.filter((c) => c.access === 'read'))('$fn cannot write $table', ({ fn, table }) => {
    expect(actionsOn(fn, table)).not.toContain('dynamodb:PutItem');
  });

  it.each(cases.filter((c) => c.access === 'readWrite'))('$fn can write $table', ({ fn, table }) => {
    expect(actionsOn(fn, table)).toContain('dynamodb:UpdateItem');
  });

  it("the reconciler can query the dispatch table's active index", () => {
    const indexes = { 'Fn::Join': ['', [arnOf(stack.tables.dispatch), '/index/*']] };
    expect(actionsAllowedOn(template, roleOf('reconciler'), indexes)).toContain('dynamodb:Query');
  });
});
