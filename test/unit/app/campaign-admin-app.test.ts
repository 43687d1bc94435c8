import { SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
  type GetCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../../lambdas/app/admin-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import {
  answerQueueAttributes,
  apiEvent,
  appOverrides,
  FULL_ENV,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

/** The campaign routes through the admin handler, on a DynamoDB whose campaign items a map keeps. */
const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const OPERATOR = 'arn:aws:iam::123456789012:user/ops';
const H = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();
let items: Map<string, Record<string, unknown>>;
/** Campaign writes that lose to another write first, before the next one lands. */
let racing = 0;

const keyOf = (input: { Key?: Record<string, unknown> }) => String(input.Key?.['storeId']);

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  items = new Map();
  racing = 0;
  answerQueueAttributes(sqs);
  ddb
    .on(GetCommand, { TableName: TABLES.stores })
    .callsFake((input: GetCommandInput) => (keyOf(input) === 'store-1' ? { Item: storeRecord() } : {}));
  ddb.on(GetCommand, { TableName: TABLES.dispatch }).callsFake((input: GetCommandInput) => {
    const key = keyOf(input);
    if (key.startsWith('#campaigns:')) return items.has(key) ? { Item: items.get(key) } : {};
    return { Item: { storeId: key, enqSeq: 0, fence: 0, slots: {} } };
  });
  ddb.on(UpdateCommand, { TableName: TABLES.dispatch }).callsFake((input: UpdateCommandInput) => {
    const key = keyOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    const current = items.get(key);
    const fails =
      racing-- > 0 ||
      (input.ConditionExpression === 'attribute_not_exists(rev)'
        ? current !== undefined
        : current?.['rev'] !== values[':seen']);
    if (fails) throw new ConditionalCheckFailedException({ message: 'condition', $metadata: {} });
    items.set(key, { storeId: key, rev: values[':next'], campaigns: values[':campaigns'] });
    return {};
  });
});

const setup = () => {
  const { overrides, logs } = appOverrides();
  const handler = createAdminHandler(loadConfig('admin', FULL_ENV), overrides);
  const call = async (event: APIGatewayProxyEvent) => {
    const result = await handler(event);
    return {
      status: result.statusCode,
      body: (result.body ? JSON.parse(result.body) : undefined) as Record<string, unknown> | undefined,
    };
  };
  return { call, logs };
};

type Scope = 'store' | 'tenant';
const routeFor = (scope: Scope, method: string, campaignId?: string, body?: unknown, id?: string) => {
  const owner = scope === 'store' ? 'stores/{storeId}' : 'tenants/{tenantId}';
  const params: Record<string, string> =
    scope === 'store' ? { storeId: id ?? 'store-1' } : { tenantId: id ?? 'tenant-1' };
  if (campaignId !== undefined) params['campaignId'] = campaignId;
  return apiEvent({
    httpMethod: method,
    resource: `/admin/${owner}/campaigns${campaignId === undefined ? '' : '/{campaignId}'}`,
    pathParameters: params,
    body: body === undefined ? null : JSON.stringify(body),
    requestContext: { requestId: 'req-9', identity: { userArn: OPERATOR } } as never,
  });
};

const window = { from: iso(T0 + H), until: iso(T0 + 2 * H), plan: 'enterprise', note: 'Black Friday' };

describe.each<Scope>(['store', 'tenant'])('%s campaigns', (scope) => {
  const owner = scope === 'store' ? { storeId: 'store-1' } : { tenantId: 'tenant-1' };

  it('creates with 201, replaces with 200 keeping createdAt, lists them by from', async () => {
    const { call } = setup();
    const created = await call(routeFor(scope, 'PUT', 'bf', window));
    expect(created).toEqual({
      status: 201,
      body: {
        campaignId: 'bf',
        ...owner,
        from: window.from,
        until: window.until,
        plan: 'enterprise',
        note: 'Black Friday',
        createdAt: iso(T0),
        updatedAt: iso(T0),
        state: 'scheduled',
      },
    });
    const replaced = await call(
      routeFor(scope, 'PUT', 'bf', { from: iso(T0 - H), until: '2025-01-15T15:00:00+01:00' }),
    );
    expect(replaced).toMatchObject({
      status: 200,
      body: { from: iso(T0 - H), until: iso(T0 + 2 * H), state: 'active', createdAt: iso(T0) },
    });
    expect(replaced.body).not.toHaveProperty('plan');
    await call(routeFor(scope, 'PUT', 'early', { from: iso(T0 - 2 * H), until: iso(T0 - H) }));
    const listed = await call(routeFor(scope, 'GET'));
    expect(listed.status).toBe(200);
    expect(
      (listed.body?.['campaigns'] as { campaignId: string; state: string }[]).map((c) => [
        c.campaignId,
        c.state,
      ]),
    ).toEqual([
      ['early', 'ended'],
      ['bf', 'active'],
    ]);
  });

  it('deletes with 204 and no body, then 404 for the same id', async () => {
    const { call, logs } = setup();
    await call(routeFor(scope, 'PUT', 'bf', window));
    expect(await call(routeFor(scope, 'DELETE', 'bf'))).toEqual({ status: 204, body: undefined });
    expect(await call(routeFor(scope, 'GET'))).toEqual({ status: 200, body: { campaigns: [] } });
    expect(await call(routeFor(scope, 'DELETE', 'bf'))).toMatchObject({
      status: 404,
      body: { error: { code: 'campaign_not_found', message: 'campaign bf does not exist' } },
    });
    expect(
      logs
        .filter((l) => l.message.startsWith('campaign '))
        .map((l) => [l.message, l.fields?.['campaignId'], l.fields?.['caller']]),
    ).toEqual([
      ['campaign saved', 'bf', OPERATOR],
      ['campaign deleted', 'bf', OPERATOR],
    ]);
  });

  it.each([
    ['until = from', { from: window.from, until: window.from }, 'until: must be after from'],
    ['until < from', { from: window.until, until: window.from }, 'until: must be after from'],
    [
      'a window over 90 days',
      { from: iso(T0), until: iso(T0 + 90 * 24 * H + 1000) },
      'until: must be at most 90 days after from',
    ],
    ['no from', { until: window.until }, 'from: Invalid input: expected string, received undefined'],
    ['an unknown plan', { ...window, plan: 'gold' }, 'plan'],
    [
      'a bad override',
      { ...window, overrides: { maxConcurrentConsumers: 0 } },
      'overrides.maxConcurrentConsumers',
    ],
  ])('answers 400 for %s, naming the field, and writes nothing', async (_name, body, message) => {
    const { call } = setup();
    const res = await call(routeFor(scope, 'PUT', 'bf', body));
    expect(res.status).toBe(400);
    expect((res.body?.['error'] as { message: string }).message).toContain(message);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('answers 400 naming campaignId for a bad id', async () => {
    const { call } = setup();
    const res = await call(routeFor(scope, 'PUT', 'bad id!', window));
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect((res.body?.['error'] as { message: string }).message).toMatch(/^campaignId: /);
  });

  it('refuses a 21st campaign with 400 and keeps the 20', async () => {
    const { call } = setup();
    for (let i = 0; i < 20; i++)
      expect((await call(routeFor(scope, 'PUT', `c${i}`, window))).status).toBe(201);
    const res = await call(routeFor(scope, 'PUT', 'c20', window));
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect((res.body?.['error'] as { message: string }).message).toContain('20 campaigns');
    // Replacing one of the 20 is still fine.
    expect((await call(routeFor(scope, 'PUT', 'c3', window))).status).toBe(200);
    expect(((await call(routeFor(scope, 'GET'))).body?.['campaigns'] as unknown[]).length).toBe(20);
  });

  it('retries a write another write beat, and answers 409 when it keeps losing', async () => {
    const { call } = setup();
    racing = 2;
    expect((await call(routeFor(scope, 'PUT', 'bf', window))).status).toBe(201);
    racing = 3;
    expect(await call(routeFor(scope, 'PUT', 'other', window))).toMatchObject({
      status: 409,
      body: { error: { code: 'concurrent_update' } },
    });
  });
});

describe('store campaigns of an unknown store', () => {
  it.each([
    ['PUT', 'bf', window],
    ['GET', undefined, undefined],
    ['DELETE', 'bf', undefined],
  ])('%s answers 404 store_not_found', async (method, campaignId, body) => {
    const { call } = setup();
    expect(await call(routeFor('store', method, campaignId, body, 'store-x'))).toMatchObject({
      status: 404,
      body: { error: { code: 'store_not_found' } },
    });
  });
});

describe('the store view under a campaign', () => {
  it('keeps policy as the store’s own and shows the campaign’s as effective, store over tenant', async () => {
    const { call } = setup();
    const view = async () =>
      (
        await call(
          apiEvent({
            httpMethod: 'GET',
            resource: '/admin/stores/{storeId}',
            pathParameters: { storeId: 'store-1' },
            body: null,
            requestContext: { requestId: 'r', identity: { userArn: OPERATOR } } as never,
          }),
        )
      ).body as {
        policy: { maxConcurrentConsumers: number };
        effective: Record<string, unknown>;
        rate: Record<string, unknown>;
      };
    expect((await view()).effective).toMatchObject({ source: 'store', plan: 'basic' });
    await call(
      routeFor('tenant', 'PUT', 'tenant-wide', {
        from: iso(T0 - H),
        until: iso(T0 + H),
        overrides: { maxConcurrentConsumers: 2 },
      }),
    );
    expect((await view()).effective).toMatchObject({
      source: 'campaign',
      campaignId: 'tenant-wide',
      scope: 'tenant',
      plan: 'basic',
      policy: { maxConcurrentConsumers: 2 },
    });
    await call(
      routeFor('store', 'PUT', 'own', { from: iso(T0 - H), until: iso(T0 + H), plan: 'enterprise' }),
    );
    const under = await view();
    expect(under.policy.maxConcurrentConsumers).toBe(1);
    // The rate shown is the one the workers run under the campaign (enterprise: 50/s), not the store's own (5/s).
    expect(under.rate).toEqual({ configured: 50, effective: 50, reason: 'policy' });
    expect(under.effective).toMatchObject({
      source: 'campaign',
      campaignId: 'own',
      scope: 'store',
      plan: 'enterprise',
      policy: { maxConcurrentConsumers: 10 },
    });
  });
});
