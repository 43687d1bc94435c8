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
/** Store queues, store DLQs and store high-priority queues of the default prefix `aq`. */
const storeQueuesArns = ['aq-s-*', 'aq-d-*', 'aq-h-*'].map(patternArn);
const LEVELS = ['high', 'normal', 'low'] as const;
const attentionQueueArnOf = (level: (typeof LEVELS)[number]) => arnOf(stack.attention.levels[level]);

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

  it('SQS actions name only the attention queues, the confirm queue or the store-queue pattern', () => {
    const allowed = [
      ...LEVELS.map(attentionQueueArnOf),
      arnOf(stack.attention.confirm),
      ...storeQueuesArns,
    ].map((arn) => JSON.stringify(arn));
    const others = allStatements
      .filter((s) => asArray(s.Action).some((a) => a.startsWith('sqs:')))
      .flatMap((s) => asArray(s.Resource))
      .filter((r) => !allowed.includes(JSON.stringify(r)));
    expect(others).toEqual([]);
  });
});

describe('store queues (created at run time, granted by name pattern, per queue kind)', () => {
  // What each function calls on each kind (grep of the adapters each composes), written out here so a
  // change to lib/store-queue-access.ts has to be made twice.
  const expected: Record<FunctionName, { work: string[]; deadLetter: string[] }> = {
    admin: {
      work: [
        'sqs:CreateQueue',
        'sqs:TagQueue',
        'sqs:SetQueueAttributes',
        'sqs:GetQueueAttributes',
        'sqs:SendMessage',
        'sqs:PurgeQueue',
      ],
      deadLetter: [
        'sqs:CreateQueue',
        'sqs:TagQueue',
        'sqs:SetQueueAttributes',
        'sqs:GetQueueAttributes',
        'sqs:StartMessageMoveTask',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ListMessageMoveTasks',
      ],
    },
    ingest: { work: ['sqs:SendMessage'], deadLetter: [] },
    worker: {
      work: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:SendMessage'],
      deadLetter: ['sqs:SendMessage'],
    },
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
  };

  it.each(FUNCTION_NAMES)('%s gets exactly its actions on the work-queue pattern', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), storeQueuesArns[0]).sort()).toEqual(
      [...expected[fn].work].sort(),
    );
  });

  it.each(FUNCTION_NAMES)(
    '%s gets exactly its work-queue actions on the high-priority queue pattern',
    (fn) => {
      expect(actionsAllowedOn(template, roleOf(fn), storeQueuesArns[2]).sort()).toEqual(
        [...expected[fn].work].sort(),
      );
    },
  );

  it.each(FUNCTION_NAMES)('%s gets exactly its actions on the DLQ pattern', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), storeQueuesArns[1]).sort()).toEqual(
      [...expected[fn].deadLetter].sort(),
    );
  });

  it('ingest cannot send into a store DLQ', () => {
    expect(actionsAllowedOn(template, roleOf('ingest'), storeQueuesArns[1])).not.toContain('sqs:SendMessage');
  });

  it('the worker cannot receive from a store DLQ', () => {
    expect(actionsAllowedOn(template, roleOf('worker'), storeQueuesArns[1])).not.toContain(
      'sqs:ReceiveMessage',
    );
  });

  it('the admin function cannot purge a store DLQ', () => {
    expect(actionsAllowedOn(template, roleOf('admin'), storeQueuesArns[1])).not.toContain('sqs:PurgeQueue');
  });

  it('the reconciler reads a DLQ’s ARN and move tasks, and re-sends its letters into it (dead-letter keep), nothing more', () => {
    expect(actionsAllowedOn(template, roleOf('reconciler'), storeQueuesArns[1]).sort()).toEqual([
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ListMessageMoveTasks',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
  });

  it('the reconciler cannot purge, redrive or delete a store DLQ', () => {
    const allowed = actionsAllowedOn(template, roleOf('reconciler'), storeQueuesArns[1]);
    expect(
      ['sqs:PurgeQueue', 'sqs:StartMessageMoveTask', 'sqs:DeleteQueue'].filter((a) => allowed.includes(a)),
    ).toEqual([]);
  });
});

describe.each(LEVELS)('the %s attention queue', (level) => {
  const attentionQueueArn = attentionQueueArnOf(level);
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

describe('the confirm queue (issue #11)', () => {
  const confirmArn = arnOf(stack.attention.confirm);

  it('the worker gets exactly consume (its event source) and send (a slice hands its slot over)', () => {
    expect(actionsAllowedOn(template, roleOf('worker'), confirmArn).sort()).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
  });

  it.each(['ingest', 'admin', 'authorizer', 'reconciler'] as const)('%s has no access to it', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), confirmArn)).toEqual([]);
  });
});

describe('tables (only the actions the adapters call)', () => {
  type Actions = Partial<Record<TableKey, string[]>>;
  const TABLE_ACTIONS: Record<FunctionName, Actions> = {
    ingest: {
      stores: ['dynamodb:GetItem'],
      dispatch: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      deliveries: ['dynamodb:GetItem'],
    },
    admin: {
      stores: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      dispatch: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      tokens: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Scan'],
    },
    authorizer: { tokens: ['dynamodb:GetItem'] },
    worker: {
      stores: ['dynamodb:GetItem'],
      dispatch: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      deliveries: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    },
    reconciler: {
      stores: ['dynamodb:GetItem', 'dynamodb:Scan'],
      dispatch: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:Scan'],
    },
  };
  const TABLE_KEYS: TableKey[] = ['stores', 'dispatch', 'tokens', 'deliveries'];
  const cases = FUNCTION_NAMES.flatMap((fn) =>
    TABLE_KEYS.map((table) => ({ fn, table, actions: TABLE_ACTIONS[fn][table] ?? [] })),
  );
  const actionsOn = (fn: FunctionName, table: TableKey): string[] =>
    actionsAllowedOn(template, roleOf(fn), arnOf(stack.tables.all[table]));
  const indexesOf = (table: TableKey) => ({ 'Fn::Join': ['', [arnOf(stack.tables.all[table]), '/index/*']] });

  it.each(cases)('$fn gets exactly $actions on $table', ({ fn, table, actions }) => {
    expect(actionsOn(fn, table).sort()).toEqual([...actions].sort());
  });

  it.each(FUNCTION_NAMES)('%s gets no delete or batch write on any table', (fn) => {
    const all = TABLE_KEYS.flatMap((table) => actionsOn(fn, table));
    expect(all.filter((a) => /Delete|BatchWrite/.test(a))).toEqual([]);
  });

  it.each([
    ['reconciler', 'dispatch'],
    ['admin', 'dispatch'],
    ['admin', 'tokens'],
  ] as const)('%s can only Query the %s indexes', (fn, table) => {
    expect(actionsAllowedOn(template, roleOf(fn), indexesOf(table))).toEqual(['dynamodb:Query']);
  });

  it.each(['ingest', 'worker', 'authorizer'] as const)('%s has no access to the dispatch indexes', (fn) => {
    expect(actionsAllowedOn(template, roleOf(fn), indexesOf('dispatch'))).toEqual([]);
  });
});
