import {
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DerivedUsageKeys } from '../../../lambdas/adapters/derived-usage-keys.js';
import { createAdminHandler } from '../../../lambdas/app/admin-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { DEPLOYMENT_TAG_KEY } from '../../../lambdas/core/names.js';
import { hashToken, tokenIdOf } from '../../../lambdas/core/tokens.js';
import {
  answerQueueAttributes,
  apiEvent,
  appOverrides,
  ATTENTION_URL,
  conditionFailed,
  DLQ_ARN,
  DLQ_URL,
  FULL_ENV,
  jsonCaller,
  QUEUE_ARN,
  HIGH_QUEUE_URL,
  QUEUE_URL,
  sequentialIds,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const OPERATOR = 'arn:aws:iam::123456789012:user/ops';
const dispatchItem = { storeId: 'store-1', enqSeq: 3, fence: 2, slots: {} };

const setup = () => {
  const { overrides, telemetry, logs } = appOverrides({ ids: sequentialIds('slot-1') });
  const call = jsonCaller(createAdminHandler(loadConfig('admin', FULL_ENV), overrides));
  return { call, telemetry, logs };
};

const admin = (
  httpMethod: string,
  resource: string,
  pathParameters: Record<string, string>,
  body?: unknown,
): APIGatewayProxyEvent =>
  apiEvent({
    httpMethod,
    resource,
    pathParameters,
    body: body === undefined ? null : JSON.stringify(body),
    requestContext: { requestId: 'req-9', identity: { userArn: OPERATOR } } as never,
  });
const storeRoute = (method: string, body?: unknown) =>
  admin(method, '/admin/stores/{storeId}', { storeId: 'store-1' }, body);

const existing = (store = storeRecord()) =>
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: store });
const sendsTo = (url: string) =>
  sqs.commandCalls(SendMessageCommand).filter((c) => c.args[0].input.QueueUrl === url);
const attentions = () => sendsTo(ATTENTION_URL).map((c) => JSON.parse(c.args[0].input.MessageBody ?? ''));

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({});
  ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({ Item: dispatchItem });
  ddb.on(UpdateCommand).resolves({ Attributes: dispatchItem });
  sqs.on(CreateQueueCommand, { QueueName: 'aq-d-store-1' }).resolves({ QueueUrl: DLQ_URL });
  sqs.on(CreateQueueCommand, { QueueName: 'aq-s-store-1' }).resolves({ QueueUrl: QUEUE_URL });
  sqs.on(CreateQueueCommand, { QueueName: 'aq-h-store-1' }).resolves({ QueueUrl: HIGH_QUEUE_URL });
  answerQueueAttributes(sqs);
});

describe('PUT /admin/stores/{storeId}', () => {
  const body = { tenantId: 'tenant-1', marketplace: 'acme', plan: 'basic' };

  it('answers 201 with the new store’s view', async () => {
    const { call } = setup();
    await expect(call(storeRoute('PUT', body))).resolves.toEqual({
      status: 201,
      body: {
        storeId: 'store-1',
        tenantId: 'tenant-1',
        marketplace: 'acme',
        plan: 'basic',
        status: 'active',
        policy: {
          maxConcurrentConsumers: 1,
          maxMessagesPerSlice: 50,
          maxSliceSeconds: 20,
          ratePerSecond: 5,
          maxAttempts: 5,
          priority: 'low',
          throttleScope: 'store',
        },
        // No campaign window: the store's own policy is in force.
        effective: {
          plan: 'basic',
          policy: {
            maxConcurrentConsumers: 1,
            maxMessagesPerSlice: 50,
            maxSliceSeconds: 20,
            ratePerSecond: 5,
            maxAttempts: 5,
            priority: 'low',
            throttleScope: 'store',
          },
          source: 'store',
        },
        queue: { backlog: 0, inFlight: 0, delayed: 0, deadLetters: 0, oldestAgeSeconds: 0 },
        activeConsumers: 0,
        errorStreak: 0,
        rate: { configured: 5, effective: 5, reason: 'policy' },
      },
    });
  });

  it('creates the store’s queues (work, high-priority) and DLQ, tagged with store, tenant and deployment', async () => {
    const { call } = setup();
    await call(storeRoute('PUT', body));
    expect(
      sqs.commandCalls(CreateQueueCommand).map((c) => [c.args[0].input.QueueName, c.args[0].input.tags]),
    ).toEqual([
      ['aq-d-store-1', { storeId: 'store-1', tenantId: 'tenant-1', [DEPLOYMENT_TAG_KEY]: 'aq' }],
      ['aq-s-store-1', { storeId: 'store-1', tenantId: 'tenant-1', [DEPLOYMENT_TAG_KEY]: 'aq' }],
      ['aq-h-store-1', { storeId: 'store-1', tenantId: 'tenant-1', [DEPLOYMENT_TAG_KEY]: 'aq' }],
    ]);
  });

  it('creates the store record conditionally, with its queues and timestamps', async () => {
    const { call } = setup();
    await call(storeRoute('PUT', body));
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Item: storeRecord({ createdAt: T0, updatedAt: T0, priorityQueueUrl: HIGH_QUEUE_URL, revision: 1 }),
      ConditionExpression: 'attribute_not_exists(#key)',
      ExpressionAttributeNames: { '#key': 'storeId' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('initialises the store’s dispatch item', async () => {
    const { call } = setup();
    await call(storeRoute('PUT', body));
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: TABLES.dispatch,
      Key: { storeId: 'store-1' },
      UpdateExpression: expect.stringContaining('slots = if_not_exists(slots, :empty)'),
    });
  });

  it('answers 200 and keeps createdAt when the store exists', async () => {
    existing();
    const { call } = setup();
    const result = await call(storeRoute('PUT', { ...body, plan: 'pro' }));
    expect({ status: result.status, put: ddb.commandCalls(PutCommand)[0]?.args[0].input }).toEqual({
      status: 200,
      // A store created before task priority gains its high-priority queue on this PUT.
      // Written only over the record it read (one from before revisions: while it still has none).
      put: {
        TableName: TABLES.stores,
        Item: storeRecord({ plan: 'pro', updatedAt: T0, priorityQueueUrl: HIGH_QUEUE_URL, revision: 1 }),
        ConditionExpression: 'attribute_exists(#key) AND attribute_not_exists(#revision)',
        ExpressionAttributeNames: { '#key': 'storeId', '#revision': 'revision' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('answers 409 tenant_mismatch, and leaves the record alone, when another tenant’s PUT created the store first', async () => {
    const theirs = storeRecord({ tenantId: 'tenant-2', revision: 1 });
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolvesOnce({}).resolves({ Item: theirs });
    ddb
      .on(PutCommand, { ConditionExpression: 'attribute_not_exists(#key)' })
      .rejects(conditionFailed(theirs));
    const { call } = setup();
    await expect(call(storeRoute('PUT', body))).resolves.toMatchObject({
      status: 409,
      body: { error: { code: 'tenant_mismatch' } },
    });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('answers 200 when a concurrent PUT created the store first, updating what it created', async () => {
    ddb
      .on(GetCommand, { TableName: TABLES.stores })
      .resolvesOnce({})
      .resolves({ Item: storeRecord({ revision: 1 }) });
    ddb
      .on(PutCommand, { ConditionExpression: 'attribute_not_exists(#key)' })
      .rejects(conditionFailed(storeRecord({ revision: 1 })));
    const { call } = setup();
    await expect(call(storeRoute('PUT', body))).resolves.toMatchObject({ status: 200 });
    expect(ddb.commandCalls(PutCommand)[1]?.args[0].input).toMatchObject({
      Item: { revision: 2 },
      ConditionExpression: '#revision = :seen',
      ExpressionAttributeValues: { ':seen': 1 },
    });
  });

  it('stores and applies policy overrides', async () => {
    const { call } = setup();
    const result = await call(storeRoute('PUT', { ...body, overrides: { ratePerSecond: 12 } }));
    expect(result.body['policy']).toEqual({
      maxConcurrentConsumers: 1,
      maxMessagesPerSlice: 50,
      maxSliceSeconds: 20,
      ratePerSecond: 12,
      maxAttempts: 5,
      priority: 'low',
      throttleScope: 'store',
    });
  });

  it('answers 409 and creates nothing when the store belongs to another tenant', async () => {
    existing(storeRecord({ tenantId: 'tenant-2' }));
    const { call } = setup();
    const result = await call(storeRoute('PUT', body));
    expect({ result, queues: sqs.commandCalls(CreateQueueCommand).length }).toEqual({
      result: {
        status: 409,
        body: {
          error: {
            code: 'tenant_mismatch',
            message: 'store store-1 belongs to another tenant and cannot be moved',
          },
        },
      },
      queues: 0,
    });
  });

  it.each([
    ['plan', { ...body, plan: 'platinum' }],
    ['tenantId', { ...body, tenantId: 'a b' }],
    ['marketplace', { ...body, marketplace: 'ACME' }],
    ['overrides.maxConcurrentConsumers', { ...body, overrides: { maxConcurrentConsumers: 0 } }],
    ['status', { ...body, status: 'gone' }],
  ])('answers 400 naming %s', async (field, invalid) => {
    const { call } = setup();
    await expect(call(storeRoute('PUT', invalid))).resolves.toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', message: expect.stringMatching(new RegExp(`^${field}: `)) } },
    });
  });

  it('answers 400 for an unknown field', async () => {
    const { call } = setup();
    await expect(call(storeRoute('PUT', { ...body, colour: 'red' }))).resolves.toMatchObject({ status: 400 });
  });

  it('keeps the stored status when the PUT names none, and sets the one it names', async () => {
    existing(storeRecord({ status: 'paused' }));
    const { call } = setup();
    await call(storeRoute('PUT', body));
    await call(storeRoute('PUT', { ...body, status: 'maintenance' }));
    expect(ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item?.['status'])).toEqual([
      'paused',
      'maintenance',
    ]);
  });

  it('logs who saved the store, with the request’s correlation id and route', async () => {
    const { call, logs } = setup();
    await call(storeRoute('PUT', body));
    expect(logs).toContainEqual({
      level: 'info',
      message: 'store saved',
      fields: {
        correlationId: 'req-9',
        route: 'putStore',
        storeId: 'store-1',
        tenantId: 'tenant-1',
        plan: 'basic',
        status: 'active',
        caller: OPERATOR,
      },
    });
  });
});

describe('GET /admin/stores/{storeId}', () => {
  it('answers the store with queue depths, live consumers and backlog age', async () => {
    existing(storeRecord({ plan: 'pro' }));
    ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({
      Item: {
        ...dispatchItem,
        headSentAt: T0 - 90_400,
        slots: {
          a: { s: 'l', at: T0 + 10_000, f: 1 },
          b: { s: 'l', at: T0 - 1, f: 2 },
          c: { s: 'q', at: T0 },
        },
      },
    });
    answerQueueAttributes(sqs, { backlog: 7, inFlight: 2, delayed: 1, deadLetters: 4 });
    const { call } = setup();
    const result = await call(storeRoute('GET'));
    expect({
      status: result.status,
      queue: result.body['queue'],
      consumers: result.body['activeConsumers'],
    }).toEqual({
      status: 200,
      queue: { backlog: 7, inFlight: 2, delayed: 1, deadLetters: 4, oldestAgeSeconds: 90 },
      consumers: 1,
    });
  });

  it('answers 404 for an unknown store', async () => {
    const { call } = setup();
    await expect(call(storeRoute('GET'))).resolves.toEqual({
      status: 404,
      body: { error: { code: 'store_not_found', message: 'store store-1 does not exist' } },
    });
  });
});

describe('PATCH /admin/stores/{storeId}', () => {
  it('resuming a paused store marks it active and publishes a resume attention', async () => {
    existing(storeRecord({ status: 'paused' }));
    const { call } = setup();
    await call(storeRoute('PATCH', { status: 'active' }));
    expect(attentions()).toEqual([
      {
        v: 1,
        storeId: 'store-1',
        slotId: 'slot-1',
        reason: 'resume',
        issuedAt: T0,
        priority: 'low',
        dueAt: T0,
      },
    ]);
  });

  it('resuming writes the active mark before issuing the slot', async () => {
    existing(storeRecord({ status: 'paused' }));
    const { call } = setup();
    await call(storeRoute('PATCH', { status: 'active' }));
    expect(ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ConditionExpression)).toEqual([
      undefined,
      'attribute_exists(slots) AND size(slots) < :limit',
    ]);
  });

  it('pausing an active store publishes nothing', async () => {
    existing();
    const { call } = setup();
    const result = await call(storeRoute('PATCH', { status: 'paused' }));
    expect({ status: result.body['status'], attentions: attentions().length }).toEqual({
      status: 'paused',
      attentions: 0,
    });
  });

  it('saves the changed store, giving a store created before task priority its high-priority queue', async () => {
    existing(storeRecord({ overrides: { ratePerSecond: 2 } }));
    const { call } = setup();
    await call(storeRoute('PATCH', { plan: 'enterprise' }));
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Item: storeRecord({
        plan: 'enterprise',
        overrides: { ratePerSecond: 2 },
        updatedAt: T0,
        priorityQueueUrl: HIGH_QUEUE_URL,
        revision: 1,
      }),
      ConditionExpression: 'attribute_exists(#key) AND attribute_not_exists(#revision)',
      ExpressionAttributeNames: { '#key': 'storeId', '#revision': 'revision' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it.each([
    {
      case: 'sets the fields it names and keeps the others',
      set: { throttleScope: 'task' },
      overrides: { ratePerSecond: 2, throttleScope: 'task' },
    },
    {
      case: 'removes a field set to null',
      set: { ratePerSecond: null, maxAttempts: 3 },
      overrides: { maxAttempts: 3 },
    },
    {
      case: 'leaves no overrides when the last is removed',
      set: { ratePerSecond: null },
      overrides: undefined,
    },
  ])('setOverrides $case', async ({ set, overrides }) => {
    existing(storeRecord({ overrides: { ratePerSecond: 2 }, priorityQueueUrl: HIGH_QUEUE_URL }));
    const { call } = setup();
    const result = await call(storeRoute('PATCH', { setOverrides: set }));
    expect(result.status).toBe(200);
    const item = ddb.commandCalls(PutCommand)[0]?.args[0].input.Item;
    expect(item?.['overrides']).toEqual(overrides);
    if (overrides === undefined) expect(item).not.toHaveProperty('overrides');
  });

  it.each([
    { case: 'replaces them all', body: { overrides: { maxAttempts: 3 } }, overrides: { maxAttempts: 3 } },
    { case: 'null removes them all', body: { overrides: null }, overrides: undefined },
    { case: 'absent keeps them', body: { status: 'paused' }, overrides: { ratePerSecond: 2 } },
  ])('overrides $case', async ({ body, overrides }) => {
    existing(storeRecord({ overrides: { ratePerSecond: 2 }, priorityQueueUrl: HIGH_QUEUE_URL }));
    const { call } = setup();
    expect((await call(storeRoute('PATCH', body))).status).toBe(200);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item?.['overrides']).toEqual(overrides);
  });

  it('builds setOverrides on the record another write left: a field another operator set meanwhile holds', async () => {
    const read = storeRecord({
      revision: 3,
      priorityQueueUrl: HIGH_QUEUE_URL,
      overrides: { ratePerSecond: 2 },
    });
    const changed = { ...read, overrides: { ratePerSecond: 2, maxAttempts: 4 }, revision: 4 };
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolvesOnce({ Item: read }).resolves({ Item: changed });
    ddb.on(PutCommand, { ExpressionAttributeValues: { ':seen': 3 } }).rejects(conditionFailed(changed));
    const { call } = setup();
    await call(storeRoute('PATCH', { setOverrides: { throttleScope: 'task' } }));
    expect(ddb.commandCalls(PutCommand).at(-1)?.args[0].input.Item?.['overrides']).toEqual({
      ratePerSecond: 2,
      maxAttempts: 4,
      throttleScope: 'task',
    });
  });

  it.each([
    [{ overrides: { ratePerSecond: 2 }, setOverrides: { maxAttempts: 3 } }, 'not both'],
    [{ setOverrides: { throttleScope: 'tenant' } }, 'setOverrides.throttleScope'],
    [{ setOverrides: { ratePerSecond: 0 } }, 'setOverrides.ratePerSecond'],
    [{ setOverrides: { colour: 'red' } }, 'setOverrides'],
  ])('refuses %j with 400, writing nothing', async (body, mentions) => {
    existing(storeRecord({ priorityQueueUrl: HIGH_QUEUE_URL }));
    const { call } = setup();
    const result = await call(storeRoute('PATCH', body));
    expect(result.status).toBe(400);
    expect(JSON.stringify(result.body)).toContain(mentions);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('builds again on the record another write left, so a pause sent with a plan change keeps both', async () => {
    const read = storeRecord({ revision: 3, priorityQueueUrl: HIGH_QUEUE_URL });
    const changed = { ...read, plan: 'enterprise' as const, revision: 4 };
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolvesOnce({ Item: read }).resolves({ Item: changed });
    ddb.on(PutCommand, { ExpressionAttributeValues: { ':seen': 3 } }).rejects(conditionFailed(changed));
    const { call } = setup();
    const result = await call(storeRoute('PATCH', { status: 'paused' }));
    expect({ status: result.status, plan: result.body['plan'], state: result.body['status'] }).toEqual({
      status: 200,
      plan: 'enterprise',
      state: 'paused',
    });
    expect(ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item?.['revision'])).toEqual([4, 5]);
  });

  it('answers 409 concurrent_update when every try loses to another write', async () => {
    existing(storeRecord({ revision: 3, priorityQueueUrl: HIGH_QUEUE_URL }));
    ddb.on(PutCommand, { TableName: TABLES.stores }).rejects(conditionFailed(storeRecord({ revision: 4 })));
    const { call } = setup();
    await expect(call(storeRoute('PATCH', { status: 'paused' }))).resolves.toMatchObject({
      status: 409,
      body: { error: { code: 'concurrent_update' } },
    });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(5);
  });

  it('creates the missing high-priority queue with the store’s redrive net and tags', async () => {
    existing(storeRecord({ tenantId: 'tenant-7' }));
    const { call } = setup();
    await call(storeRoute('PATCH', { status: 'paused' }));
    const high = sqs
      .commandCalls(CreateQueueCommand)
      .find((c) => c.args[0].input.QueueName === 'aq-h-store-1')?.args[0].input;
    expect({
      tags: high?.tags,
      redrive: JSON.parse(high?.Attributes?.['RedrivePolicy'] ?? '{}'),
    }).toEqual({
      tags: { storeId: 'store-1', tenantId: 'tenant-7', [DEPLOYMENT_TAG_KEY]: 'aq' },
      redrive: { deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 100 },
    });
  });

  it('logs the change: who, from which status to which, and the plan', async () => {
    existing(storeRecord({ priorityQueueUrl: HIGH_QUEUE_URL }));
    const { call, logs } = setup();
    await call(storeRoute('PATCH', { status: 'paused', plan: 'pro' }));
    expect(logs).toContainEqual({
      level: 'info',
      message: 'store changed',
      fields: {
        correlationId: 'req-9',
        route: 'patchStore',
        storeId: 'store-1',
        from: 'active',
        to: 'paused',
        plan: 'pro',
        caller: OPERATOR,
      },
    });
  });

  it('creates no queue for a store that has its high-priority queue already', async () => {
    existing(storeRecord({ priorityQueueUrl: HIGH_QUEUE_URL }));
    const { call } = setup();
    await call(storeRoute('PATCH', { plan: 'enterprise' }));
    expect(sqs.commandCalls(CreateQueueCommand)).toEqual([]);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      priorityQueueUrl: HIGH_QUEUE_URL,
    });
  });

  it('overrides: null removes the overrides', async () => {
    existing(storeRecord({ overrides: { ratePerSecond: 2 } }));
    const { call } = setup();
    await call(storeRoute('PATCH', { overrides: null }));
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).not.toHaveProperty('overrides');
  });

  it('answers 400 for an empty change', async () => {
    existing();
    const { call } = setup();
    await expect(call(storeRoute('PATCH', {}))).resolves.toMatchObject({
      status: 400,
      body: { error: { message: 'body: give at least one of status, plan, overrides, setOverrides' } },
    });
  });

  it('answers 404 for an unknown store', async () => {
    const { call } = setup();
    await expect(call(storeRoute('PATCH', { status: 'paused' }))).resolves.toEqual({
      status: 404,
      body: { error: { code: 'store_not_found', message: 'store store-1 does not exist' } },
    });
  });
});

describe('POST /admin/stores/{storeId}/dead-letters/redrive', () => {
  const redrive = () => admin('POST', '/admin/stores/{storeId}/dead-letters/redrive', { storeId: 'store-1' });

  beforeEach(() => {
    sqs.on(ListMessageMoveTasksCommand).resolves({ Results: [{ Status: 'COMPLETED' }] });
  });

  it('starts moving the dead letters back and answers 202 with how many', async () => {
    existing();
    answerQueueAttributes(sqs, { deadLetters: 3 });
    const { call } = setup();
    const result = await call(redrive());
    expect({ result, move: sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input }).toEqual({
      result: { status: 202, body: { storeId: 'store-1', moving: 3 } },
      move: { SourceArn: DLQ_ARN, DestinationArn: QUEUE_ARN, MaxNumberOfMessagesPerSecond: 5 },
    });
  });

  it('marks the store active with a redrive mark before the move starts (the reconciler removes it at the end)', async () => {
    existing();
    answerQueueAttributes(sqs, { deadLetters: 3 });
    const { call } = setup();
    await call(redrive());
    const mark = ddb
      .commandCalls(UpdateCommand)
      .find((c) => c.args[0].input.UpdateExpression?.includes('redriveAt = :now'));
    const move = sqs.commandCalls(StartMessageMoveTaskCommand)[0];
    expect({
      now: mark?.args[0].input.ExpressionAttributeValues?.[':now'],
      activates: mark?.args[0].input.UpdateExpression?.includes(
        'activeShard = if_not_exists(activeShard, :shard)',
      ),
      before: mark !== undefined && move !== undefined && mark.calledBefore(move),
    }).toEqual({ now: T0, activates: true, before: true });
  });

  it('answers 409 redrive_in_progress while a move of this store runs, writing and starting nothing', async () => {
    existing();
    answerQueueAttributes(sqs, { deadLetters: 3 });
    sqs.on(ListMessageMoveTasksCommand).resolves({ Results: [{ Status: 'RUNNING' }] });
    const { call } = setup();
    const result = await call(redrive());
    expect({
      status: result.status,
      code: (result.body['error'] as { code: string }).code,
      updates: ddb.commandCalls(UpdateCommand).length,
      moves: sqs.commandCalls(StartMessageMoveTaskCommand).length,
    }).toEqual({ status: 409, code: 'redrive_in_progress', updates: 0, moves: 0 });
  });

  it('signals an active store so the moved tasks are consumed', async () => {
    existing();
    answerQueueAttributes(sqs, { deadLetters: 3 });
    const { call } = setup();
    await call(redrive());
    expect(attentions()).toEqual([
      {
        v: 1,
        storeId: 'store-1',
        slotId: 'slot-1',
        reason: 'redrive',
        issuedAt: T0,
        priority: 'low',
        dueAt: T0,
      },
    ]);
  });

  it('does not signal a paused store', async () => {
    existing(storeRecord({ status: 'paused' }));
    answerQueueAttributes(sqs, { deadLetters: 3 });
    const { call } = setup();
    await call(redrive());
    expect(attentions()).toEqual([]);
  });

  it('still signals the store when the DLQ looks empty (a retry, or an approximate count of 0)', async () => {
    existing();
    const { call } = setup();
    const result = await call(redrive());
    expect({ result, attentions: attentions().length }).toEqual({
      result: { status: 202, body: { storeId: 'store-1', moving: 0 } },
      attentions: 1,
    });
  });
});

describe('POST /admin/tenants/{tenantId}/tokens', () => {
  const tokenRoute = (body?: unknown, tenantId = 'tenant-1') =>
    admin('POST', '/admin/tenants/{tenantId}/tokens', { tenantId }, body);

  beforeEach(() => {
    ddb.on(QueryCommand).resolves({ Items: [] });
  });

  it('answers 201 with a new token for the tenant and its id', async () => {
    const { call } = setup();
    const result = await call(tokenRoute());
    expect(result).toEqual({
      status: 201,
      body: {
        token: expect.stringMatching(/^aqt_[A-Za-z0-9_-]{43}$/),
        tokenId: tokenIdOf(hashToken(result.body['token'] as string)),
        tenantId: 'tenant-1',
      },
    });
  });

  it('counts the tenant’s live tokens on the byTenant index first', async () => {
    const { call } = setup();
    await call(tokenRoute());
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      IndexName: 'byTenant',
      KeyConditionExpression: '#tenant = :tenant',
      ExpressionAttributeNames: { '#tenant': 'tenantId' },
      ExpressionAttributeValues: { ':tenant': 'tenant-1' },
    });
  });

  it('stores only the token’s hash, conditionally', async () => {
    const { call } = setup();
    const result = await call(tokenRoute());
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Item: {
        tokenHash: hashToken(result.body['token'] as string),
        tenantId: 'tenant-1',
        createdAt: T0,
        usageKey: await new DerivedUsageKeys('aq').ensure('tenant-1'),
      },
      ConditionExpression: 'attribute_not_exists(#key)',
      ExpressionAttributeNames: { '#key': 'tokenHash' },
    });
  });

  it('accepts an empty JSON object as the body', async () => {
    const { call } = setup();
    await expect(call(tokenRoute({}))).resolves.toMatchObject({ status: 201 });
  });

  it('answers 400 for a body', async () => {
    const { call } = setup();
    await expect(call(tokenRoute({ tenantId: 'x' }))).resolves.toMatchObject({
      status: 400,
      body: { error: { message: 'body: this route takes no body' } },
    });
  });

  it('answers 400 for an invalid tenant id', async () => {
    const { call } = setup();
    await expect(call(tokenRoute(undefined, 'a b'))).resolves.toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/^tenantId: /) } },
    });
  });
});

describe('POST /admin/tenants/{tenantId}/tokens on AWS (AQ_USAGE_PLAN_STAGE set)', () => {
  const apigw = mockClient(APIGatewayClient);
  const tokenRoute = () => admin('POST', '/admin/tenants/{tenantId}/tokens', { tenantId: 'tenant-1' });
  const awsSetup = () =>
    jsonCaller(
      createAdminHandler(
        loadConfig('admin', { ...FULL_ENV, AQ_USAGE_PLAN_STAGE: 'abc123:prod' }),
        appOverrides().overrides,
      ),
    );

  beforeEach(() => {
    apigw.reset();
    ddb.on(QueryCommand).resolves({ Items: [] });
    apigw
      .on(GetUsagePlansCommand)
      .resolves({ items: [{ id: 'plan-1', apiStages: [{ apiId: 'abc123', stage: 'prod' }] }] });
    apigw.on(GetApiKeysCommand).resolves({
      items: [{ id: 'key-1', name: 'aq-tenant-tenant-1', value: 'v'.repeat(40), enabled: true }],
    });
    apigw.on(CreateUsagePlanKeyCommand).resolves({});
  });

  it("stores the tenant's API Gateway key value on the token record", async () => {
    const call = awsSetup();
    await expect(call(tokenRoute())).resolves.toMatchObject({ status: 201 });
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({ usageKey: 'v'.repeat(40) });
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input).toEqual({
      usagePlanId: 'plan-1',
      keyId: 'key-1',
      keyType: 'API_KEY',
    });
    expect(apigw.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
  });

  it('answers 503 and writes no token when API Gateway fails', async () => {
    apigw
      .on(CreateUsagePlanKeyCommand)
      .rejects(
        Object.assign(new Error('rate exceeded'), { name: 'TooManyRequestsException', $metadata: {} }),
      );
    const call = awsSetup();
    await expect(call(tokenRoute())).resolves.toMatchObject({
      status: 503,
      body: { error: { code: 'dependency_unavailable' } },
    });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });
});

describe('token listing, revocation and rotation routes', () => {
  const hash = 'ab'.repeat(32);
  const tokenId = tokenIdOf(hash);
  beforeEach(() => {
    ddb.on(QueryCommand).resolves({ Items: [{ tokenHash: hash, tenantId: 'tenant-1', createdAt: T0 }] });
  });

  it('lists a tenant’s tokens without secrets or hashes', async () => {
    const { call } = setup();
    await expect(
      call(admin('GET', '/admin/tenants/{tenantId}/tokens', { tenantId: 'tenant-1' })),
    ).resolves.toEqual({
      status: 200,
      body: {
        tenantId: 'tenant-1',
        tokens: [{ tokenId, status: 'active', createdAt: new Date(T0).toISOString() }],
      },
    });
  });

  it('revokes a token by id with a conditional update', async () => {
    const { call } = setup();
    const result = await call(
      admin('POST', '/admin/tenants/{tenantId}/tokens/{tokenId}/revoke', { tenantId: 'tenant-1', tokenId }),
    );
    expect(result.status).toBe(200);
    const update = ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.TableName === TABLES.tokens);
    expect(update?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Key: { tokenHash: hash },
      UpdateExpression: 'SET #revokedAt = :revokedAt',
      ConditionExpression: 'attribute_exists(#key)',
      ExpressionAttributeNames: { '#key': 'tokenHash', '#revokedAt': 'revokedAt' },
      ExpressionAttributeValues: { ':revokedAt': T0 },
    });
  });

  it('rotates a token: a new one, and the old one expiring after the overlap', async () => {
    const { call } = setup();
    const result = await call(
      admin(
        'POST',
        '/admin/tenants/{tenantId}/tokens/{tokenId}/rotate',
        { tenantId: 'tenant-1', tokenId },
        { overlapSeconds: 600 },
      ),
    );
    expect(result.status).toBe(201);
    expect(result.body['replaced']).toEqual({
      tokenId,
      status: 'expiring',
      createdAt: new Date(T0).toISOString(),
      expiresAt: new Date(T0 + 600_000).toISOString(),
    });
  });
});

describe('admin routing', () => {
  it('answers 404 for an integrator route', async () => {
    const { call } = setup();
    await expect(call(apiEvent())).resolves.toMatchObject({
      status: 404,
      body: { error: { code: 'route_not_found' } },
    });
  });
});
