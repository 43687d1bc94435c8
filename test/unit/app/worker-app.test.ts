import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { createWorkerHandler } from '../../../lambdas/app/worker-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import type { AttentionMessage, WorkMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { WAKE_MARGIN_MS } from '../../../lambdas/core/timing.js';
import type { DeliveryOutcome, Marketplace } from '../../../lambdas/core/ports.js';
import {
  appOverrides,
  ATTENTION_URL,
  conditionFailed,
  DLQ_URL,
  FULL_ENV,
  QUEUE_URL,
  sequentialIds,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);

/** basic plan: lease TTL = 20 s slice + 5 s marketplace timeout + 10 s margin. */
const LEASE_EXPIRY = T0 + 35_000;
const attention: AttentionMessage = {
  v: 1,
  storeId: 'store-1',
  slotId: 'slot-a',
  reason: 'ingest',
  issuedAt: T0,
};
const leasedItem = {
  storeId: 'store-1',
  enqSeq: 4,
  fence: 1,
  slots: { 'slot-a': { s: 'l', at: LEASE_EXPIRY, f: 1 } },
  activeShard: '3',
  activeSince: T0 - 1_000,
};
const work: WorkMessage = {
  v: 1,
  storeId: 'store-1',
  eventId: 'evt-1',
  type: 'inventory.update',
  payload: { sku: 'SKU-1', quantity: 2 },
  acceptedAt: T0 - 500,
};

const record = (body: string, messageId = 'att-1'): SQSRecord => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: String(T0),
    SenderId: 'AIDA',
    ApproximateFirstReceiveTimestamp: String(T0),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:aq-attention',
  awsRegion: 'us-east-1',
});
const eventOf = (...records: SQSRecord[]) => ({ Records: records });
const attentionEvent = (message: Partial<AttentionMessage> = {}) =>
  eventOf(record(JSON.stringify({ ...attention, ...message })));

const marketplaceAnswering = (outcome: DeliveryOutcome) => {
  const deliver = vi.fn<Marketplace['deliver']>(async () => outcome);
  return { deliver };
};

const setup = (marketplace: Marketplace = marketplaceAnswering({ kind: 'ok', status: 202 })) => {
  const { overrides, telemetry, logs } = appOverrides({
    ids: sequentialIds('slot-new'),
    marketplace,
    random: () => 0.5,
  });
  const handler = createWorkerHandler(loadConfig('worker', FULL_ENV), overrides);
  return { handler, telemetry, logs };
};

/** Which dispatch write an UpdateCommand is, by its expression. */
const dispatchWrite = (input: UpdateCommandInput): string => {
  const update = input.UpdateExpression ?? '';
  if (update.startsWith('SET slots.#id.#s = :l')) return 'acquire';
  if (update.startsWith('REMOVE slots.#id, activeShard')) return 'markIdle';
  if (update === 'SET wakeAt = :until') return 'deferWake';
  if (update.startsWith('SET slots.#id = :slot, activeShard')) return 'issueSlot';
  if (update.startsWith('SET slots.#id = :slot')) return 'requeue';
  if (update.startsWith('REMOVE slots.#id ADD nDiscarded')) return 'dropQueued';
  if (update === 'ADD nDiscarded :one') return 'noteDiscarded';
  if (update === 'REMOVE slots.#id') return 'release';
  return 'other';
};
const writes = () => ddb.commandCalls(UpdateCommand).map((c) => dispatchWrite(c.args[0].input));
const writeInput = (name: string) =>
  ddb.commandCalls(UpdateCommand).find((c) => dispatchWrite(c.args[0].input) === name)?.args[0].input;
const sendsTo = (url: string) =>
  sqs.commandCalls(SendMessageCommand).filter((c) => c.args[0].input.QueueUrl === url);

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord() });
  ddb.on(GetCommand, { TableName: TABLES.deliveries }).resolves({});
  // No campaign windows (their lists are items of the dispatch table).
  ddb.on(GetCommand, { TableName: TABLES.dispatch }).resolves({});
  // The delivered settles of a receive batch: one BatchWriteItem, everything processed.
  ddb.on(BatchWriteCommand).resolves({});
  ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) =>
    input.TableName === TABLES.deliveries
      ? {
          Attributes: {
            deliveryKey: 'store-1:evt-1',
            storeId: 'store-1',
            eventId: 'evt-1',
            status: 'processing',
            updatedAt: T0,
          },
        }
      : { Attributes: dispatchWrite(input) === 'markIdle' ? { ...leasedItem, slots: {} } : leasedItem },
  );
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  sqs.on(ReceiveMessageCommand).resolves({});
  sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
});

describe('createWorkerHandler: records it cannot use', () => {
  it.each([
    ['not JSON', 'not json'],
    ['JSON of another shape', JSON.stringify({ hello: 'world' })],
    ['an attention of an unknown version', JSON.stringify({ ...attention, v: 2 })],
    ['an attention with an unknown reason', JSON.stringify({ ...attention, reason: 'because' })],
  ])('drops %s without failing the record', async (_name, body) => {
    const { handler } = setup();
    await expect(handler(eventOf(record(body)))).resolves.toEqual({ batchItemFailures: [] });
  });

  it('makes no AWS call for a malformed attention', async () => {
    const { handler } = setup();
    await handler(eventOf(record('not json')));
    expect([sqs.calls().length, ddb.calls().length]).toEqual([0, 0]);
  });

  it('logs the dropped attention', async () => {
    const { handler, logs } = setup();
    await handler(eventOf(record('not json', 'm-7')));
    expect(logs).toContainEqual({
      level: 'warn',
      message: 'malformed attention dropped',
      fields: { messageId: 'm-7' },
    });
  });
});

describe('createWorkerHandler: partial batch failures', () => {
  it('fails the record whose store could not be looked up, so SQS retries it', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).rejects(new Error('DynamoDB unavailable'));
    const { handler } = setup();
    await expect(handler(attentionEvent())).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'att-1' }],
    });
  });

  it('fails only that record in a batch', async () => {
    ddb
      .on(GetCommand, { TableName: TABLES.stores, Key: { storeId: 'store-down' } })
      .rejects(new Error('DynamoDB unavailable'));
    ddb.on(GetCommand, { TableName: TABLES.stores, Key: { storeId: 'store-gone' } }).resolves({});
    const { handler } = setup();
    const result = await handler(
      eventOf(
        record(JSON.stringify({ ...attention, storeId: 'store-gone' }), 'ok-1'),
        record(JSON.stringify({ ...attention, storeId: 'store-down' }), 'bad-1'),
        record('not json', 'ok-2'),
      ),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-1' }] });
  });

  it('runs the slices of a batch concurrently: the second store is looked up before the first slice ends', async () => {
    const { handler } = setup();
    await handler(
      eventOf(
        record(JSON.stringify({ ...attention, storeId: 'store-1' }), 'a-1'),
        record(JSON.stringify({ ...attention, storeId: 'store-2' }), 'a-2'),
      ),
    );
    const order = ddb.calls().map((c) => {
      const input = c.args[0].input as {
        TableName?: string;
        Key?: { storeId?: string };
      } & UpdateCommandInput;
      return input.TableName === TABLES.stores
        ? `get ${input.Key?.storeId}`
        : 'UpdateExpression' in input
          ? dispatchWrite(input)
          : 'other';
    });
    expect(order.indexOf('get store-2')).toBeGreaterThan(-1);
    expect(order.indexOf('get store-2')).toBeLessThan(order.indexOf('markIdle'));
  });

  it('flushes telemetry after every invocation, failed records included', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).rejects(new Error('DynamoDB unavailable'));
    const telemetry = Object.assign(new RecordingTelemetry(), { flush: vi.fn() });
    const handler = createWorkerHandler(
      loadConfig('worker', FULL_ENV),
      appOverrides({ telemetry }).overrides,
    );
    await handler(attentionEvent());
    expect(telemetry.flush).toHaveBeenCalledTimes(1);
  });
});

describe('createWorkerHandler: attentions it discards', () => {
  it('drops the queued slot of an unknown store', async () => {
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({});
    const { handler } = setup();
    await handler(attentionEvent());
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: TABLES.dispatch,
      Key: { storeId: 'store-1' },
      UpdateExpression: 'REMOVE slots.#id ADD nDiscarded :one',
      ConditionExpression: 'slots.#id.#s = :q',
      ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's' },
    });
  });

  it.each(['paused', 'maintenance', 'disabled'] as const)(
    'discards the attention of a %s store and holds its backlog',
    async (status) => {
      ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord({ status }) });
      const { handler, telemetry } = setup();
      await handler(attentionEvent());
      expect({
        writes: writes(),
        receives: sqs.commandCalls(ReceiveMessageCommand).length,
        discarded: telemetry.total(MetricNames.attentionsDiscarded, { reason: status }),
      }).toEqual({ writes: ['dropQueued'], receives: 0, discarded: 1 });
    },
  );

  it('discards a duplicate attention whose slot is already leased', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(leasedItem));
    const { handler, telemetry } = setup();
    await handler(attentionEvent());
    expect({
      receives: sqs.commandCalls(ReceiveMessageCommand).length,
      stale: telemetry.total(MetricNames.attentionsDiscarded, { reason: 'stale' }),
      // The store's own count of discarded attentions (its measures) goes up too.
      writes: writes(),
    }).toEqual({ receives: 0, stale: 1, writes: ['acquire', 'noteDiscarded'] });
  });
});

describe('createWorkerHandler: counting a discard', () => {
  it('does not turn a discard into a retry when the store’s count cannot be written', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(leasedItem));
    ddb.on(UpdateCommand, { UpdateExpression: 'ADD nDiscarded :one' }).rejects(new Error('DynamoDB down'));
    const { handler, logs } = setup();
    const response = await handler(attentionEvent());
    expect({
      failures: response.batchItemFailures,
      warned: logs.filter((l) => l.message === 'discard not counted').map((l) => l.fields?.['error']),
    }).toEqual({ failures: [], warned: ['Error: DynamoDB down'] });
  });
});

describe('createWorkerHandler: a slice', () => {
  it('takes the lease its slot grants, expiring after slice + marketplace timeout + margin', async () => {
    const { handler } = setup();
    await handler(attentionEvent());
    expect(writeInput('acquire')?.ExpressionAttributeValues).toEqual({
      ':q': 'q',
      ':l': 'l',
      ':exp': LEASE_EXPIRY,
      ':one': 1,
      ':due': T0 + 2_000,
      ':max': 1,
    });
  });

  it('short-polls the store’s queue, then decides "empty" with a long poll, hiding what it receives until past the lease', async () => {
    const { handler } = setup();
    await handler(attentionEvent());
    const receive = (waitSeconds: number) => ({
      QueueUrl: QUEUE_URL,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: 40,
      MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
    });
    expect(sqs.commandCalls(ReceiveMessageCommand).map((c) => c.args[0].input)).toEqual([
      receive(0),
      receive(1),
    ]);
  });

  it('marks an empty store idle at the enqueue sequence it saw under its fence', async () => {
    const { handler } = setup();
    await handler(attentionEvent());
    expect(writeInput('markIdle')?.ExpressionAttributeValues).toEqual({
      ':l': 'l',
      ':fence': 1,
      ':seen': 4,
      ':one': 1,
      ':zero': 0,
      ':now': T0,
      // A single-consumer store hands its rate pacing to its next lease, calling on time (no lateness).
      ':tat': T0,
      ':zeroLate': 0,
      // Busy since T0 - 1 s (the leased item's activeSince): its time to drain.
      ':drain': 1_000,
    });
  });

  it('ends the slice as empty', async () => {
    const { handler, telemetry } = setup();
    await handler(attentionEvent());
    expect(telemetry.total(MetricNames.slicesEnded, { reason: 'empty' })).toBe(1);
  });

  it('records the enqueue ingest could not, then issues a slot itself, for an ensure-slot nudge', async () => {
    const { handler } = setup();
    await handler(attentionEvent({ slotId: '*', reason: 'repair' }));
    expect({
      bump: ddb.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression?.includes('ADD enqSeq :n'),
      writes: writes().slice(1, 3),
      names: writeInput('issueSlot')?.ExpressionAttributeNames,
    }).toEqual({
      bump: true,
      writes: ['issueSlot', 'acquire'],
      names: { '#id': 'slot-new' },
    });
  });

  describe('with a task submitted under a trace (issue #12)', () => {
    const TRACE_ID = '1-5759e988-bd862e3fe1be46a994272793';
    beforeEach(() => {
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            {
              MessageId: 'm1',
              ReceiptHandle: 'rh-task',
              Body: JSON.stringify({ ...work, traceId: TRACE_ID }),
              Attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(T0 - 500) },
            },
          ],
        })
        .resolves({});
    });

    it('hands the marketplace call the trace id read back from the message', async () => {
      const marketplace = marketplaceAnswering({ kind: 'ok', status: 202 });
      const { handler } = setup(marketplace);
      await handler(attentionEvent());
      expect(marketplace.deliver.mock.calls[0]?.[0].traceId).toBe(TRACE_ID);
    });
  });

  describe('with a task in the queue', () => {
    beforeEach(() => {
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            {
              MessageId: 'm1',
              ReceiptHandle: 'rh-task',
              Body: JSON.stringify(work),
              Attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(T0 - 500) },
            },
          ],
        })
        .resolves({});
    });

    it('delivers it to the marketplace with the store’s idempotency key', async () => {
      const marketplace = marketplaceAnswering({ kind: 'ok', status: 202 });
      const { handler } = setup(marketplace);
      await handler(attentionEvent());
      expect(marketplace.deliver.mock.calls).toEqual([
        [
          {
            marketplace: 'acme',
            storeId: 'store-1',
            idempotencyKey: 'store-1:evt-1',
            body: { eventId: 'evt-1', type: 'inventory.update', payload: { sku: 'SKU-1', quantity: 2 } },
          },
        ],
      ]);
    });

    it('claims the task, settles it delivered with its batch, and then deletes the message', async () => {
      const { handler } = setup();
      await handler(attentionEvent());
      const claims = ddb
        .commandCalls(UpdateCommand)
        .filter((c) => c.args[0].input.TableName === TABLES.deliveries);
      const settle = ddb.commandCalls(BatchWriteCommand)[0];
      const del = sqs.commandCalls(DeleteMessageBatchCommand)[0];
      expect({
        claimed: claims.map((c) => c.args[0].input.ExpressionAttributeValues?.[':processing']),
        settled: settle?.args[0].input.RequestItems?.[TABLES.deliveries]?.map(
          (r) => r.PutRequest?.Item?.['status'],
        ),
        deleted: del?.args[0].input.Entries,
        settledFirst: settle?.calledBefore(del!),
      }).toEqual({
        claimed: ['processing'],
        settled: ['delivered'],
        deleted: [{ Id: '0', ReceiptHandle: 'rh-task' }],
        settledFirst: true,
      });
    });

    it('does not call the marketplace again for a task already delivered', async () => {
      ddb.on(UpdateCommand, { TableName: TABLES.deliveries }).rejects(
        conditionFailed({
          deliveryKey: 'store-1:evt-1',
          storeId: 'store-1',
          eventId: 'evt-1',
          status: 'delivered',
          updatedAt: T0 - 10,
        }),
      );
      const marketplace = marketplaceAnswering({ kind: 'ok', status: 202 });
      const { handler } = setup(marketplace);
      await handler(attentionEvent());
      expect({
        calls: marketplace.deliver.mock.calls.length,
        deleted: sqs.commandCalls(DeleteMessageBatchCommand).length,
      }).toEqual({ calls: 0, deleted: 1 });
    });

    it('dead-letters a task the marketplace rejects', async () => {
      const { handler } = setup(
        marketplaceAnswering({ kind: 'permanent', status: 422, error: 'marketplace answered 422' }),
      );
      await handler(attentionEvent());
      expect(sendsTo(DLQ_URL)[0]?.args[0].input).toMatchObject({
        MessageBody: JSON.stringify(work),
        MessageAttributes: expect.objectContaining({
          errorCode: { DataType: 'String', StringValue: 'marketplace_rejected' },
          lastStatus: { DataType: 'Number', StringValue: '422' },
        }),
      });
    });

    it('names the store, tenant and correlation id on every log line of the attention', async () => {
      const { handler, logs } = setup(
        marketplaceAnswering({ kind: 'permanent', status: 422, error: 'marketplace answered 422' }),
      );
      await handler(attentionEvent({ correlationId: 'req-7' }));
      expect(
        logs.map((line) => ({
          message: line.message,
          storeId: line.fields?.['storeId'],
          tenantId: line.fields?.['tenantId'],
          correlationId: line.fields?.['correlationId'],
        })),
      ).toEqual([
        // The task carries no correlation id of its own here, so the attention's names it.
        { message: 'task dead-lettered', storeId: 'store-1', tenantId: 'tenant-1', correlationId: 'req-7' },
        { message: 'store drained', storeId: 'store-1', tenantId: 'tenant-1', correlationId: 'req-7' },
        { message: 'slice ended', storeId: 'store-1', tenantId: 'tenant-1', correlationId: 'req-7' },
      ]);
    });

    it('logs whether the slice re-published the store’s attention (summable per store)', async () => {
      const { handler, logs } = setup(
        marketplaceAnswering({ kind: 'throttled', status: 429, retryAfterSeconds: 30 }),
      );
      await handler(attentionEvent());
      expect(logs.find((line) => line.message === 'slice ended')?.fields).toMatchObject({
        end: 'throttled',
        republished: 1,
      });
    });

    describe('when the marketplace throttles the store', () => {
      const throttled = () =>
        setup(marketplaceAnswering({ kind: 'throttled', status: 429, retryAfterSeconds: 30 }));

      it('forbids idling until Retry-After, then re-sends the message as a fresh copy delayed as long', async () => {
        const { handler } = throttled();
        await handler(attentionEvent());
        expect({
          wake: writeInput('deferWake')?.ExpressionAttributeValues,
          copies: sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries,
          originals: sqs.commandCalls(DeleteMessageBatchCommand)[0]?.args[0].input.Entries,
          hidden: sqs.commandCalls(ChangeMessageVisibilityBatchCommand).length,
        }).toEqual({
          wake: { ':until': T0 + 30_000 + WAKE_MARGIN_MS },
          copies: [{ Id: '0', MessageBody: JSON.stringify(work), DelaySeconds: 30 }],
          originals: [{ Id: '0', ReceiptHandle: 'rh-task' }],
          hidden: 0,
        });
      });

      it('hands its slot back due at Retry-After and re-announces it with that delay', async () => {
        const { handler } = throttled();
        await handler(attentionEvent());
        expect({
          slot: writeInput('requeue')?.ExpressionAttributeValues?.[':slot'],
          attention: sendsTo(ATTENTION_URL)[0]?.args[0].input,
        }).toEqual({
          // Its next call waits for Retry-After too (the pace it carries), whatever ends a later slice.
          slot: { s: 'q', at: T0 + 30_000, n: T0 + 30_000 },
          attention: {
            QueueUrl: ATTENTION_URL,
            MessageBody: JSON.stringify({
              v: 1,
              storeId: 'store-1',
              slotId: 'slot-a',
              reason: 'requeue',
              issuedAt: T0,
              priority: 'low',
              dueAt: T0 + 30_000,
            }),
            DelaySeconds: 30,
          },
        });
      });

      it('does not mark the store idle', async () => {
        const { handler } = throttled();
        await handler(attentionEvent());
        expect(writes()).not.toContain('markIdle');
      });
    });
  });
});
