import { PurgeQueueCommand, PurgeQueueInProgress, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../../lambdas/app/admin-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { ACTIVE_SHARDS, MetricNames } from '../../../lambdas/core/names.js';
import {
  answerQueueAttributes,
  apiEvent,
  appOverrides,
  FULL_ENV,
  jsonCaller,
  QUEUE_URL,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const OPERATOR = 'arn:aws:iam::123456789012:user/ops';

const setup = () => {
  const { overrides, telemetry, logs } = appOverrides();
  const call = jsonCaller(createAdminHandler(loadConfig('admin', FULL_ENV), overrides));
  return { call, telemetry, logs };
};

const admin = (
  httpMethod: string,
  resource: string,
  opts: { pathParameters?: Record<string, string>; query?: Record<string, string>; body?: unknown } = {},
): APIGatewayProxyEvent =>
  apiEvent({
    httpMethod,
    resource,
    pathParameters: opts.pathParameters ?? null,
    queryStringParameters: opts.query ?? null,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    requestContext: { requestId: 'req-7', identity: { userArn: OPERATOR } } as never,
  });

/**
 * The active index as DynamoDB would answer it: per shard, entries with headSentAt (the oldest-task
 * estimate) ≥ :from, ascending; and each listed store's dispatch item, busy since `since` (default: oldest).
 */
const activeIndex = (entries: { storeId: string; shard: string; oldest: number; since?: number }[]) => {
  for (const e of entries)
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: e.storeId } }).resolves({
      Item: {
        storeId: e.storeId,
        enqSeq: 1,
        fence: 0,
        slots: {},
        activeShard: e.shard,
        activeSince: e.since ?? e.oldest,
        headSentAt: e.oldest,
      },
    });
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const shard = input.ExpressionAttributeValues?.[':shard'] as string;
    const from = input.ExpressionAttributeValues?.[':from'] as number;
    const start = input.ExclusiveStartKey ? Number(input.ExclusiveStartKey['i']) : 0;
    const rows = entries
      .filter((e) => e.shard === shard && e.oldest >= from)
      .sort((a, b) => a.oldest - b.oldest);
    const page = rows.slice(start, start + (input.Limit ?? 100));
    return {
      Items: page.map((e) => ({ storeId: e.storeId, activeShard: e.shard, headSentAt: e.oldest })),
      ...(start + page.length < rows.length ? { LastEvaluatedKey: { i: start + page.length } } : {}),
    };
  });
};

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).callsFake((input: { Key: { storeId: string } }) => ({
    Item: storeRecord({ storeId: input.Key.storeId }),
  }));
  ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({
    Item: { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {}, activeShard: '3', activeSince: T0 - 90_000 },
  });
  answerQueueAttributes(sqs, { backlog: 7, inFlight: 2, delayed: 1, deadLetters: 4 });
});

describe('GET /admin/backlog', () => {
  const list = (query?: Record<string, string>) => admin('GET', '/admin/backlog', query ? { query } : {});

  it(`queries each of the ${ACTIVE_SHARDS} shards of the active index, oldest first`, async () => {
    activeIndex([]);
    const { call } = setup();
    await call(list());
    expect(
      ddb
        .commandCalls(QueryCommand)
        .map((c) => c.args[0].input)
        .sort(
          (a, b) =>
            Number(a.ExpressionAttributeValues?.[':shard']) - Number(b.ExpressionAttributeValues?.[':shard']),
        ),
    ).toEqual(
      Array.from({ length: ACTIVE_SHARDS }, (_, i) => ({
        TableName: TABLES.dispatch,
        IndexName: 'active',
        KeyConditionExpression: '#shard = :shard AND #oldest >= :from',
        ExpressionAttributeNames: { '#shard': 'activeShard', '#oldest': 'headSentAt' },
        ExpressionAttributeValues: { ':shard': String(i), ':from': 0 },
        ScanIndexForward: true,
        Limit: 21,
      })),
    );
  });

  it('merges the shards by oldest task and returns store views with their age and how long each has been busy', async () => {
    activeIndex([
      // b has been busy longest, but its oldest task is younger than a's: a comes first.
      { storeId: 'b', shard: '1', oldest: T0 - 20_000, since: T0 - 70_000 },
      { storeId: 'a', shard: '9', oldest: T0 - 60_000 },
      { storeId: 'c', shard: '1', oldest: T0 - 5_000 },
    ]);
    const { call } = setup();
    const { status, body } = await call(list());
    expect({
      status,
      order: (
        body['stores'] as { storeId: string; busySeconds: number; queue: { oldestAgeSeconds: number } }[]
      ).map((s) => [s.storeId, s.queue.oldestAgeSeconds, s.busySeconds]),
      cursor: body['cursor'],
    }).toEqual({
      status: 200,
      order: [
        ['a', 60, 60],
        ['b', 20, 70],
        ['c', 5, 5],
      ],
      cursor: undefined,
    });
  });

  it('gives each listed store the contract’s store view', async () => {
    activeIndex([{ storeId: 'store-1', shard: '3', oldest: T0 - 90_000 }]);
    const { call } = setup();
    const { body } = await call(list());
    expect((body['stores'] as Record<string, unknown>[])[0]).toMatchObject({
      storeId: 'store-1',
      tenantId: 'tenant-1',
      queue: { backlog: 7, inFlight: 2, delayed: 1, deadLetters: 4, oldestAgeSeconds: 90 },
      activeSince: new Date(T0 - 90_000).toISOString(),
    });
  });

  it('pages with a cursor that continues after the last store, ties included', async () => {
    activeIndex([
      { storeId: 'a', shard: '1', oldest: T0 - 10_000 },
      { storeId: 'b', shard: '2', oldest: T0 - 10_000 },
      { storeId: 'c', shard: '1', oldest: T0 - 10_000 },
      { storeId: 'd', shard: '4', oldest: T0 - 1_000 },
    ]);
    const { call } = setup();
    const first = await call(list({ limit: '2' }));
    const second = await call(list({ limit: '2', cursor: String(first.body['cursor']) }));
    const ids = (r: { body: Record<string, unknown> }) =>
      (r.body['stores'] as { storeId: string }[]).map((s) => s.storeId);
    expect([ids(first), ids(second), second.body['cursor']]).toEqual([['a', 'b'], ['c', 'd'], undefined]);
  });

  it('follows DynamoDB pages inside a shard', async () => {
    activeIndex(
      Array.from({ length: 5 }, (_, i) => ({ storeId: `s${i}`, shard: '0', oldest: T0 - 10_000 + i })),
    );
    const { call } = setup();
    const first = await call(list({ limit: '2' }));
    const second = await call(list({ limit: '2', cursor: String(first.body['cursor']) }));
    expect((second.body['stores'] as { storeId: string }[]).map((s) => s.storeId)).toEqual(['s2', 's3']);
  });

  it.each([
    [{ limit: '0' }, 'query.limit'],
    [{ limit: '51' }, 'query.limit'],
    [{ limit: 'x' }, 'query.limit'],
    [{ cursor: 'not-a-cursor' }, 'cursor'],
    [{ sort: 'size' }, 'query'],
  ])('rejects %o with a 400 naming %s', async (query, field) => {
    activeIndex([]);
    const { call } = setup();
    const { status, body } = await call(list(query));
    expect([status, (body['error'] as { message: string }).message.startsWith(field)]).toEqual([400, true]);
  });
});

describe('POST /admin/stores/{storeId}/queue/purge', () => {
  const purge = (body?: unknown, storeId = 'store-1') =>
    admin('POST', '/admin/stores/{storeId}/queue/purge', { pathParameters: { storeId }, body });

  it('purges the store’s work queue', async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    const { call } = setup();
    await call(purge({ confirm: 'store-1' }));
    expect(sqs.commandCalls(PurgeQueueCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: QUEUE_URL },
    ]);
  });

  it('answers 202 with the approximate number of tasks discarded', async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    const { call } = setup();
    await expect(call(purge({ confirm: 'store-1' }))).resolves.toEqual({
      status: 202,
      body: { storeId: 'store-1', discarded: 10, status: 'purged' },
    });
  });

  it('counts the purge and the tasks it discarded', async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    const { call, telemetry } = setup();
    await call(purge({ confirm: 'store-1' }));
    expect([telemetry.total(MetricNames.storePurges), telemetry.total(MetricNames.tasksPurged)]).toEqual([
      1, 10,
    ]);
  });

  it('logs who asked, and why, at warn', async () => {
    sqs.on(PurgeQueueCommand).resolves({});
    const { call, logs } = setup();
    await call(purge({ confirm: 'store-1', reason: 'integrator sent garbage' }));
    expect(logs.filter((l) => l.message === 'store queue purged')).toEqual([
      {
        level: 'warn',
        message: 'store queue purged',
        fields: {
          // The request's id is the correlation id every line of the request carries.
          correlationId: 'req-7',
          route: 'purgeStoreQueue',
          storeId: 'store-1',
          tenantId: 'tenant-1',
          discarded: 10,
          reason: 'integrator sent garbage',
          caller: OPERATOR,
        },
      },
    ]);
  });

  it.each([
    [undefined, 'body'],
    [{}, 'confirm'],
    [{ confirm: 'store-2' }, 'confirm'],
    [{ confirm: true }, 'confirm'],
  ])('refuses %o without purging (400 naming %s)', async (body, field) => {
    const { call } = setup();
    const result = await call(purge(body));
    expect([
      result.status,
      (result.body['error'] as { message: string }).message.startsWith(field),
      sqs.commandCalls(PurgeQueueCommand).length,
    ]).toEqual([400, true, 0]);
  });

  it('answers 404 for an unknown store', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({});
    const { call } = setup();
    const { status } = await call(purge({ confirm: 'store-1' }));
    expect([status, sqs.commandCalls(PurgeQueueCommand).length]).toEqual([404, 0]);
  });

  it('answers 409 while an earlier purge is still running, and counts nothing', async () => {
    sqs.on(PurgeQueueCommand).rejects(new PurgeQueueInProgress({ message: 'in progress', $metadata: {} }));
    const { call, telemetry } = setup();
    const { status, body } = await call(purge({ confirm: 'store-1' }));
    expect([
      status,
      (body['error'] as { code: string }).code,
      telemetry.total(MetricNames.storePurges),
    ]).toEqual([409, 'purge_in_progress', 0]);
  });

  it('answers 503 when SQS fails otherwise', async () => {
    sqs.on(PurgeQueueCommand).rejects(Object.assign(new Error('boom'), { $metadata: {} }));
    const { call } = setup();
    const { status } = await call(purge({ confirm: 'store-1' }));
    expect(status).toBe(503);
  });
});

describe('GET /admin/stores/{storeId}/measures', () => {
  const measures = (storeId = 'store-1') =>
    admin('GET', '/admin/stores/{storeId}/measures', { pathParameters: { storeId } });

  it('returns the store view plus the measures the API can read', async () => {
    const { call } = setup();
    const { status, body } = await call(measures());
    expect({ status, measures: body['measures'], queue: body['queue'] }).toEqual({
      status: 200,
      measures: {
        backlog: 10,
        oldestAgeSeconds: 90,
        deadLetters: 4,
        activeSince: new Date(T0 - 90_000).toISOString(),
        drainingSeconds: 90,
        lastDrainSeconds: null,
        lastIdleAt: null,
        attentions: { republished: 0, resent: 0, discarded: 0 },
        blocks: { lease: 0, rateLimit: 0 },
      },
      queue: { backlog: 7, inFlight: 2, delayed: 1, deadLetters: 4, oldestAgeSeconds: 90 },
    });
  });

  it('reads the store’s attention, block and drain counters from its dispatch item', async () => {
    ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({
      Item: {
        storeId: 'store-1',
        enqSeq: 40,
        fence: 9,
        slots: {},
        nRepublished: 12,
        nResent: 2,
        nDiscarded: 5,
        nLeaseBlocked: 1,
        nThrottled: 3,
        lastDrainMs: 61_400,
        lastIdleAt: T0 - 5_000,
      },
    });
    const { call } = setup();
    const { body } = await call(measures());
    expect(body['measures']).toMatchObject({
      lastDrainSeconds: 61,
      lastIdleAt: new Date(T0 - 5_000).toISOString(),
      attentions: { republished: 12, resent: 2, discarded: 5 },
      blocks: { lease: 1, rateLimit: 3 },
    });
  });

  it('reports an idle store as not draining', async () => {
    ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({
      Item: { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {} },
    });
    answerQueueAttributes(sqs);
    const { call } = setup();
    const { body } = await call(measures());
    expect(body['measures']).toEqual({
      backlog: 0,
      oldestAgeSeconds: 0,
      deadLetters: 0,
      activeSince: null,
      drainingSeconds: 0,
      lastDrainSeconds: null,
      lastIdleAt: null,
      attentions: { republished: 0, resent: 0, discarded: 0 },
      blocks: { lease: 0, rateLimit: 0 },
    });
  });

  it('answers 404 for an unknown store', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({});
    const { call } = setup();
    await expect(call(measures())).resolves.toMatchObject({ status: 404 });
  });
});
