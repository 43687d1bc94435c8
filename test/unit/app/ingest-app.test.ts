import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../lambdas/app/ingest-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { INGEST_WINDOW_MS } from '../../../lambdas/core/timing.js';
import {
  apiEvent,
  appOverrides,
  ATTENTION_URL,
  conditionFailed,
  FULL_ENV,
  jsonCaller,
  QUEUE_URL,
  sequentialIds,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);

const task = { eventId: 'evt-1', type: 'inventory.update', payload: { sku: 'SKU-1', quantity: 4 } };
const idleItem = { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {} };

const setup = (env: Record<string, string> = {}) => {
  const { overrides, telemetry, logs } = appOverrides({ ids: sequentialIds('slot-1', 'slot-2') });
  const call = jsonCaller(createIngestHandler(loadConfig('ingest', { ...FULL_ENV, ...env }), overrides));
  return { call, telemetry, logs };
};

const submit = (body: unknown, overrides: Partial<APIGatewayProxyEvent> = {}) =>
  apiEvent({ body: JSON.stringify(body), ...overrides });

const sendsTo = (url: string) =>
  sqs.commandCalls(SendMessageCommand).filter((c) => c.args[0].input.QueueUrl === url);

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord() });
  ddb.on(UpdateCommand).resolves({ Attributes: idleItem });
});

describe('POST /v1/stores/{storeId}/tasks', () => {
  it('answers 202 accepted', async () => {
    const { call } = setup();
    await expect(call(submit(task))).resolves.toEqual({
      status: 202,
      body: { storeId: 'store-1', eventId: 'evt-1', status: 'accepted' },
    });
  });

  it('puts the task on the store’s queue with when and by which request it was accepted', async () => {
    const { call } = setup();
    await call(submit(task));
    const sent = sendsTo(QUEUE_URL)[0]?.args[0].input;
    expect(JSON.parse(sent?.MessageBody ?? '')).toEqual({
      v: 1,
      storeId: 'store-1',
      ...task,
      priority: 'normal',
      acceptedAt: T0,
      correlationId: 'req-1',
    });
  });

  describe('the request’s trace (issue #12)', () => {
    const TRACE_ID = '1-5759e988-bd862e3fe1be46a994272793';
    const sentBody = () => JSON.parse(sendsTo(QUEUE_URL)[0]?.args[0].input.MessageBody ?? '{}');
    const traced = (value: string) => ({ 'Content-Type': 'application/json', 'X-Amzn-Trace-Id': value });
    afterEach(() => {
      delete process.env['_X_AMZN_TRACE_ID'];
    });

    it('puts the trace id of the request’s X-Amzn-Trace-Id on the task’s message', async () => {
      const { call } = setup();
      await call(submit(task, { headers: traced(`Root=${TRACE_ID};Parent=53995c3f42cd8ad8;Sampled=1`) }));
      expect(sentBody().traceId).toBe(TRACE_ID);
    });

    it('prefers the Lambda invocation’s own trace (_X_AMZN_TRACE_ID) to the request’s header', async () => {
      process.env['_X_AMZN_TRACE_ID'] = `Root=${TRACE_ID};Parent=53995c3f42cd8ad8;Sampled=1`;
      const { call } = setup();
      await call(submit(task, { headers: traced('Root=1-00000000-000000000000000000000000') }));
      expect(sentBody().traceId).toBe(TRACE_ID);
    });

    it('puts it on every task of a batch', async () => {
      const { call } = setup();
      await call(
        submit(
          { tasks: [task, { ...task, eventId: 'evt-2' }] },
          {
            resource: '/v1/stores/{storeId}/tasks/batch',
            path: '/v1/stores/store-1/tasks/batch',
            headers: traced(`Root=${TRACE_ID}`),
          },
        ),
      );
      const entries = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? [];
      expect(entries.map((e) => JSON.parse(e.MessageBody ?? '{}').traceId)).toEqual([TRACE_ID, TRACE_ID]);
    });

    it('ignores a malformed trace header and still accepts the task', async () => {
      const { call } = setup();
      const answer = await call(submit(task, { headers: traced('Root=not-a-trace') }));
      expect({ status: answer.status, traceId: sentBody().traceId }).toEqual({
        status: 202,
        traceId: undefined,
      });
    });
  });

  it('writes ahead before the send (enqSeq bumped, store active, one ingest in flight) and ends after it', async () => {
    const { call } = setup();
    await call(submit(task));
    const send = sendsTo(QUEUE_URL)[0];
    const [ahead, end] = ddb.commandCalls(UpdateCommand);
    expect({
      ahead: ahead?.args[0].input.UpdateExpression,
      aheadBefore: ahead?.calledBefore(send!),
      until: ahead?.args[0].input.ExpressionAttributeValues?.[':until'],
      end: end?.args[0].input.UpdateExpression,
      endAfter: end?.calledAfter(send!),
    }).toEqual({
      ahead: expect.stringMatching(/ADD enqSeq :n, ingesting :one$/),
      aheadBefore: true,
      until: T0 + INGEST_WINDOW_MS,
      end: expect.stringContaining('ADD ingesting :minus'),
      endAfter: true,
    });
  });

  it('answers 503 and sends nothing when the write-ahead fails', async () => {
    ddb.on(UpdateCommand).rejects(new Error('DynamoDB unavailable'));
    const { call } = setup();
    const result = await call(submit(task));
    expect({ status: result.status, sends: sendsTo(QUEUE_URL).length }).toEqual({ status: 503, sends: 0 });
  });

  it('issues the first slot of an idle store and publishes its attention', async () => {
    const { call } = setup();
    await call(submit(task));
    expect(sendsTo(ATTENTION_URL).map((c) => JSON.parse(c.args[0].input.MessageBody ?? ''))).toEqual([
      {
        v: 1,
        storeId: 'store-1',
        slotId: 'slot-1',
        reason: 'ingest',
        issuedAt: T0,
        dueAt: T0,
        priority: 'low',
        correlationId: 'req-1',
      },
    ]);
  });

  it('ends an idle store’s write-ahead and issues its slot in one conditional write, before the attention', async () => {
    const { call } = setup();
    await call(submit(task));
    const writes = ddb.commandCalls(UpdateCommand);
    const endIssue = writes[1]?.args[0].input;
    expect({
      writes: writes.length,
      update: endIssue?.UpdateExpression,
      condition: endIssue?.ConditionExpression,
      slot: endIssue?.ExpressionAttributeNames?.['#id'],
      value: endIssue?.ExpressionAttributeValues?.[':slot'],
      before: writes[1]?.calledBefore(sendsTo(ATTENTION_URL)[0]!),
    }).toEqual({
      writes: 2,
      update: expect.stringMatching(
        /^SET slots\.#id = :slot, activeShard .* ADD ingesting :minus, enqSeq :one$/,
      ),
      condition: 'attribute_exists(slots) AND size(slots) < :one',
      slot: 'slot-1',
      value: { s: 'q', at: T0 },
      before: true,
    });
  });

  it('publishes no attention when the store already holds a slot (bounded signalling)', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { ...idleItem, slots: { a: { s: 'q', at: T0 } } } });
    const { call, telemetry } = setup();
    await call(submit(task));
    expect({
      attentions: sendsTo(ATTENTION_URL).length,
      coalesced: telemetry.total(MetricNames.attentionsCoalesced, { reason: 'ingest' }),
      // The write-ahead saw the slot: a plain end, no end-and-issue write.
      ends: ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ConditionExpression),
    }).toEqual({ attentions: 0, coalesced: 1, ends: [undefined, undefined] });
  });

  it('publishes no attention when another request took the last slot first', async () => {
    const { call } = setup();
    // The write-ahead saw no slot; the end-and-issue write finds the other request's slot and is refused, and the
    // plain end that follows returns it.
    const taken = { ...idleItem, slots: { other: { s: 'q', at: T0 } } };
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: idleItem })
      .rejectsOnce(conditionFailed(taken))
      .resolves({ Attributes: taken });
    const result = await call(submit(task));
    expect({
      status: result.status,
      attentions: sendsTo(ATTENTION_URL).length,
      writes: ddb.commandCalls(UpdateCommand).length,
    }).toEqual({
      status: 202,
      attentions: 0,
      writes: 3,
    });
  });

  it('accepts a task for a paused store without waking it', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord({ status: 'paused' }) });
    const { call } = setup();
    const result = await call(submit(task));
    expect({ status: result.status, attentions: sendsTo(ATTENTION_URL).length }).toEqual({
      status: 202,
      attentions: 0,
    });
  });

  it('still answers 202 when the dispatch state is unreachable after the send, and publishes a nudge', async () => {
    // The write-ahead lands (the store idle), then the end-and-issue write fails.
    ddb.on(UpdateCommand).resolvesOnce({ Attributes: idleItem }).rejects(new Error('DynamoDB unavailable'));
    const { call } = setup();
    const result = await call(submit(task));
    expect({
      status: result.status,
      writes: ddb.commandCalls(UpdateCommand).length,
      nudges: sendsTo(ATTENTION_URL).map((c) => JSON.parse(c.args[0].input.MessageBody ?? '')),
    }).toEqual({
      status: 202,
      writes: 2,
      nudges: [
        {
          v: 1,
          storeId: 'store-1',
          slotId: '*',
          reason: 'repair',
          issuedAt: T0,
          dueAt: T0,
          priority: 'low',
          correlationId: 'req-1',
        },
      ],
    });
  });

  it('reads the store strongly consistently', async () => {
    const { call } = setup();
    await call(submit(task));
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Key: { storeId: 'store-1' },
      ConsistentRead: true,
    });
  });

  it('answers an unknown store with the same 403 as a foreign one (no existence oracle)', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({});
    const { call } = setup();
    await expect(call(submit(task))).resolves.toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'this credential does not own the store' } },
    });
  });

  it('answers 403 when the caller’s tenant does not own the store', async () => {
    const { call } = setup();
    const event = submit(task, {
      requestContext: { requestId: 'r', authorizer: { tenantId: 'tenant-2' } } as never,
    });
    await expect(call(event)).resolves.toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });

  it('answers 409 for a disabled store and sends nothing', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord({ status: 'disabled' }) });
    const { call } = setup();
    const result = await call(submit(task));
    expect({ result, sends: sqs.calls().length }).toEqual({
      result: {
        status: 409,
        body: {
          error: { code: 'store_not_accepting', message: 'store store-1 is disabled and accepts no tasks' },
        },
      },
      sends: 0,
    });
  });

  it('answers 400 naming the invalid field and sends nothing', async () => {
    const { call } = setup();
    const result = await call(submit({ ...task, payload: { sku: 'SKU-1', quantity: -1 } }));
    expect({
      status: result.status,
      message: (result.body['error'] as { message: string }).message,
      sends: sqs.calls().length,
    }).toEqual({
      status: 400,
      message: expect.stringMatching(/^payload\.quantity: /),
      sends: 0,
    });
  });

  it('answers 400 for an invalid store id in the path', async () => {
    const { call } = setup();
    const result = await call(submit(task, { pathParameters: { storeId: 'bad store!' } }));
    expect(result).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/^storeId: /) } },
    });
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const { call } = setup();
    const result = await call(submit({ ...task, payload: { sku: 'x'.repeat(70 * 1024), quantity: 1 } }));
    expect(result).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
  });

  it('answers 503 and ends its write-ahead when the store queue refuses the task', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('SQS unavailable'));
    const { call } = setup();
    const result = await call(submit(task));
    expect({
      result,
      updates: ddb
        .commandCalls(UpdateCommand)
        .map((c) => c.args[0].input.UpdateExpression?.split(' ADD ')[1]),
    }).toEqual({
      result: {
        status: 503,
        body: {
          error: {
            code: 'dependency_unavailable',
            message: 'the store queue is unavailable; nothing was accepted',
          },
        },
      },
      updates: ['enqSeq :n, ingesting :one', 'ingesting :minus, enqSeq :one'],
    });
  });

  it('logs the dependency failure with its cause', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('SQS unavailable'));
    const { call, logs } = setup();
    await call(submit(task));
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'request failed',
        fields: expect.objectContaining({ route: 'submitTask', cause: 'Error: SQS unavailable' }),
      }),
    );
  });

  it('answers 503 when the store registry is unavailable', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).rejects(new Error('DynamoDB unavailable'));
    const { call } = setup();
    await expect(call(submit(task))).resolves.toMatchObject({
      status: 503,
      body: { error: { code: 'dependency_unavailable' } },
    });
  });

  it('counts the accepted task', async () => {
    const { call, telemetry } = setup();
    await call(submit(task));
    expect(telemetry.total(MetricNames.tasksAccepted)).toBe(1);
  });

  it('reads the store once per cache period when the store cache is on', async () => {
    const { call } = setup({ AQ_STORE_CACHE_SECONDS: '60' });
    await call(submit(task));
    await call(submit({ ...task, eventId: 'evt-2' }));
    expect(ddb.commandCalls(GetCommand, { TableName: TABLES.stores })).toHaveLength(1);
  });
});

describe('POST /v1/stores/{storeId}/tasks/batch', () => {
  const batch = (tasks: unknown[]) =>
    submit(
      { tasks },
      { resource: '/v1/stores/{storeId}/tasks/batch', path: '/v1/stores/store-1/tasks/batch' },
    );
  const task2 = {
    eventId: 'evt-2',
    type: 'price.update',
    payload: { sku: 'SKU-1', amount: 9.9, currency: 'BRL' },
  };

  beforeEach(() => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  });

  it('accepts the valid tasks and rejects the invalid ones with their field', async () => {
    const { call } = setup();
    const result = await call(batch([task, { ...task2, payload: { ...task2.payload, currency: 'real' } }]));
    expect(result).toEqual({
      status: 202,
      body: {
        accepted: ['evt-1'],
        rejected: [
          {
            eventId: 'evt-2',
            error: {
              code: 'invalid_request',
              message: 'tasks[1].payload.currency: must be an ISO-4217 code such as "BRL"',
            },
          },
        ],
      },
    });
  });

  it('sends the valid tasks in one SQS batch, ids by position', async () => {
    const { call } = setup();
    await call(batch([task, { eventId: 'bad id!' }, task2]));
    const entries = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? [];
    expect(entries.map((e) => ({ id: e.Id, eventId: JSON.parse(e.MessageBody ?? '').eventId }))).toEqual([
      { id: '0', eventId: 'evt-1' },
      { id: '2', eventId: 'evt-2' },
    ]);
  });

  it('bumps the enqueue sequence by the number accepted', async () => {
    const { call } = setup();
    await call(batch([task, task2]));
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues).toMatchObject({
      ':n': 2,
    });
  });

  it('publishes one attention for the whole batch', async () => {
    const { call } = setup();
    await call(batch([task, task2]));
    expect(sendsTo(ATTENTION_URL)).toHaveLength(1);
  });

  it('rejects a repeated eventId within the batch', async () => {
    const { call } = setup();
    const result = await call(batch([task, task]));
    expect(result.body).toEqual({
      accepted: ['evt-1'],
      rejected: [
        {
          eventId: 'evt-1',
          error: {
            code: 'invalid_request',
            message: 'tasks[1].eventId: duplicates an earlier task in this batch',
          },
        },
      ],
    });
  });

  it('rejects a single task over the 64 KiB task limit without sending it', async () => {
    const { call } = setup();
    const huge = { ...task2, payload: { ...task2.payload, sku: 'x'.repeat(70_000) } };
    const result = await call(batch([task, huge]));
    expect(result.body).toEqual({
      accepted: ['evt-1'],
      rejected: [
        {
          eventId: 'evt-2',
          error: { code: 'payload_too_large', message: 'task exceeds 65536 bytes' },
        },
      ],
    });
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries).toHaveLength(1);
  });

  it('names a task without an eventId by its position', async () => {
    const { call } = setup();
    const result = await call(batch([task, { type: 'orders.sync' }]));
    expect((result.body['rejected'] as { eventId: string }[])[0]?.eventId).toBe('#1');
  });

  it('reports the tasks SQS failed as retryable rejections', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }],
    });
    const { call } = setup();
    const result = await call(batch([task, task2]));
    expect(result.body).toEqual({
      accepted: ['evt-1'],
      rejected: [
        {
          eventId: 'evt-2',
          error: {
            code: 'dependency_unavailable',
            message: 'the store queue did not accept this task; retry it',
          },
        },
      ],
    });
  });

  it('answers 503 and ends its write-ahead when SQS accepted none of them', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('SQS unavailable'));
    const { call } = setup();
    const result = await call(batch([task, task2]));
    expect({
      status: result.status,
      updates: ddb
        .commandCalls(UpdateCommand)
        .map((c) => c.args[0].input.UpdateExpression?.split(' ADD ')[1]),
      counted: ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues?.[':n'],
    }).toEqual({
      status: 503,
      updates: ['enqSeq :n, ingesting :one', 'ingesting :minus, enqSeq :one'],
      counted: 2,
    });
  });

  it('answers 202 with nothing accepted and sends nothing when every task is invalid', async () => {
    const { call } = setup();
    const result = await call(batch([{ eventId: 'e' }]));
    expect({ status: result.status, accepted: result.body['accepted'], sends: sqs.calls().length }).toEqual({
      status: 202,
      accepted: [],
      sends: 0,
    });
  });

  it.each([
    ['no tasks', []],
    ['more than 100 tasks', Array.from({ length: 101 }, (_, i) => ({ ...task, eventId: `e${i}` }))],
  ])('answers 400 for %s', async (_name, tasks) => {
    const { call } = setup();
    await expect(call(batch(tasks))).resolves.toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/^tasks: /) } },
    });
  });
});

describe('GET /v1/stores/{storeId}/tasks/{eventId}', () => {
  const status = (eventId = 'evt-1') =>
    apiEvent({
      resource: '/v1/stores/{storeId}/tasks/{eventId}',
      httpMethod: 'GET',
      pathParameters: { storeId: 'store-1', eventId },
    });

  it('answers the recorded outcome', async () => {
    ddb.on(GetCommand, { TableName: TABLES.deliveries }).resolves({
      Item: {
        storeId: 'store-1',
        eventId: 'evt-1',
        status: 'dead_lettered',
        attempts: 10,
        lastError: 'retries_exhausted: 503',
        updatedAt: T0,
      },
    });
    const { call } = setup();
    await expect(call(status())).resolves.toEqual({
      status: 200,
      body: {
        storeId: 'store-1',
        eventId: 'evt-1',
        status: 'dead_lettered',
        attempts: 10,
        lastError: 'retries_exhausted: 503',
      },
    });
  });

  it('reads the delivery record by its idempotency key', async () => {
    ddb.on(GetCommand, { TableName: TABLES.deliveries }).resolves({});
    const { call } = setup();
    await call(status());
    expect(ddb.commandCalls(GetCommand, { TableName: TABLES.deliveries })[0]?.args[0].input.Key).toEqual({
      deliveryKey: 'store-1:evt-1',
    });
  });

  it('answers pending for a task with no record', async () => {
    ddb.on(GetCommand, { TableName: TABLES.deliveries }).resolves({});
    const { call } = setup();
    await expect(call(status())).resolves.toEqual({
      status: 200,
      body: { storeId: 'store-1', eventId: 'evt-1', status: 'pending' },
    });
  });

  it('answers 403 for another tenant’s store', async () => {
    const { call } = setup();
    const event = {
      ...status(),
      requestContext: { requestId: 'r', authorizer: { tenantId: 'tenant-2' } },
    } as never;
    await expect(call(event)).resolves.toMatchObject({ status: 403 });
  });

  it('answers 400 for an invalid eventId', async () => {
    const { call } = setup();
    await expect(call(status('bad id!'))).resolves.toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/^eventId: /) } },
    });
  });
});
