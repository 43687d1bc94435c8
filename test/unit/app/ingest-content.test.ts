import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../lambdas/app/ingest-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import { apiEvent, appOverrides, FULL_ENV, jsonCaller, storeRecord, TABLES } from '../support/fixtures.js';

/** Issue #15: a task's content earns a 202 and travels intact, or a 400/413 — never a retryable 503. */
const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);

const catalog = (eventId: string, title: string) => ({
  eventId,
  type: 'catalog.update',
  payload: { sku: 'x', title },
});

const call = (body: unknown, route: { resource: string; path: string }) =>
  jsonCaller(createIngestHandler(loadConfig('ingest', FULL_ENV), appOverrides().overrides))(
    apiEvent({ ...route, body: JSON.stringify(body) }),
  );
const submit = (body: unknown) =>
  call(body, { resource: '/v1/stores/{storeId}/tasks', path: '/v1/stores/store-1/tasks' });
const submitBatch = (tasks: unknown[]) =>
  call({ tasks }, { resource: '/v1/stores/{storeId}/tasks/batch', path: '/v1/stores/store-1/tasks/batch' });

const sqsError = (name: string, message: string) =>
  Object.assign(new Error(message), { name, $fault: 'client' });

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord() });
  ddb.on(UpdateCommand).resolves({ Attributes: { storeId: 'store-1', enqSeq: 1, fence: 0, slots: {} } });
});

describe('one task', () => {
  it('sends an emoji and a noncharacter as JSON escapes, which decode to the same title', async () => {
    const title = 'Camiseta 😀 promo \uFFFF';
    await expect(submit(catalog('e1', title))).resolves.toMatchObject({ status: 202 });
    const body = sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? '';
    expect({
      raw: body.includes('😀'),
      escaped: body.includes('\\ud83d\\ude00 promo \\uffff'),
      title: JSON.parse(body).payload.title,
    }).toEqual({
      raw: false,
      escaped: true,
      title,
    });
  });

  it('refuses an unpaired surrogate with 400 naming the field, sending nothing', async () => {
    const result = await submit(catalog('e1', 'broken \uD800 title'));
    expect({ result, sends: sqs.commandCalls(SendMessageCommand).length }).toEqual({
      result: {
        status: 400,
        body: {
          error: expect.objectContaining({
            code: 'invalid_request',
            message: expect.stringMatching(/^payload\.title: holds an unpaired surrogate/),
          }),
        },
      },
      sends: 0,
    });
  });

  it('holds the 64 KiB task limit on the encoded size (emoji grow threefold), with 413', async () => {
    // 20 attributes of 500 emoji: 40 KB as UTF-8, 120 KB once escaped.
    const attributes = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, '😀'.repeat(500)]));
    const task = { eventId: 'e1', type: 'catalog.update', payload: { sku: 'x', attributes } };
    expect(Buffer.byteLength(JSON.stringify(task))).toBeLessThan(64 * 1024);
    const result = await submit(task);
    expect({
      status: result.status,
      code: (result.body as { error: { code: string } }).error.code,
      sends: sqs.commandCalls(SendMessageCommand).length,
    }).toEqual({
      status: 413,
      code: 'payload_too_large',
      sends: 0,
    });
  });

  it.each([
    ['AWS.SimpleQueueService.InvalidMessageContents', 'Invalid characters found', 400],
    ['InvalidParameterValue', 'Message must be shorter than 262144 bytes.', 413],
  ])(
    'answers the queue refusing the message itself (%s: %s) with %i, not 503',
    async (name, message, status) => {
      sqs.on(SendMessageCommand).rejects(sqsError(name, message));
      const result = await submit(catalog('e1', 'plain'));
      // The write-ahead and its end only: the store is signalled for nothing.
      expect({
        status: result.status,
        updates: ddb
          .commandCalls(UpdateCommand)
          .map((c) => c.args[0].input.UpdateExpression?.split(' ADD ')[1]),
      }).toEqual({ status, updates: ['enqSeq :n, ingesting :one', 'ingesting :minus, enqSeq :one'] });
    },
  );
});

describe('a batch', () => {
  it('rejects the task the queue refused with invalid_request and accepts the rest', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: '0', MessageId: 'm0', MD5OfMessageBody: '' }],
      Failed: [
        { Id: '1', SenderFault: true, Code: 'InvalidMessageContents', Message: 'Invalid characters found' },
      ],
    });
    const result = await submitBatch([catalog('e0', 'a'), catalog('e1', 'b')]);
    expect(result).toEqual({
      status: 202,
      body: {
        accepted: ['e0'],
        rejected: [
          {
            eventId: 'e1',
            error: { code: 'invalid_request', message: 'tasks[1]: the store queue refused its content' },
          },
        ],
      },
    });
  });

  it('answers 202 with every task rejected, not 503, when the queue refused all of them for their content', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [
        {
          Id: '0',
          SenderFault: true,
          Code: 'InvalidParameterValue',
          Message: 'Message must be shorter than 262144 bytes.',
        },
      ],
    });
    const result = await submitBatch([catalog('e0', 'a')]);
    expect(result).toEqual({
      status: 202,
      body: {
        accepted: [],
        rejected: [
          {
            eventId: 'e0',
            error: { code: 'payload_too_large', message: 'tasks[0]: too large for the store queue' },
          },
        ],
      },
    });
  });

  it('still answers 503 when the queue was unavailable for every task', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError', Message: 'try again' }],
    });
    await expect(submitBatch([catalog('e0', 'a')])).resolves.toMatchObject({ status: 503 });
  });

  it('rejects an unpaired surrogate in one task with 400 and sends the others', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [{ Id: '0', MessageId: 'm0', MD5OfMessageBody: '' }], Failed: [] });
    const result = await submitBatch([catalog('e0', 'ok 😀'), catalog('e1', '\uDC00')]);
    expect({
      body: result.body,
      sent: sqs
        .commandCalls(SendMessageBatchCommand)[0]
        ?.args[0].input.Entries?.map((e) => JSON.parse(e.MessageBody ?? '').eventId),
    }).toEqual({
      body: {
        accepted: ['e0'],
        rejected: [
          {
            eventId: 'e1',
            error: {
              code: 'invalid_request',
              message: expect.stringMatching(/^tasks\[1\]\.payload\.title: holds an unpaired surrogate/),
            },
          },
        ],
      },
      sent: ['e0'],
    });
  });

  it('answers 413 for a batch over 1 MiB once encoded, sending nothing', async () => {
    // 30 tasks of 20 attributes × 200 emoji: 16 KB each as UTF-8 (0.5 MB), 48 KB each escaped (1.4 MB).
    const attributes = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, '😀'.repeat(200)]));
    const tasks = Array.from({ length: 30 }, (_, i) => ({
      eventId: `e${i}`,
      type: 'catalog.update',
      payload: { sku: 'x', attributes },
    }));
    expect(Buffer.byteLength(JSON.stringify({ tasks }))).toBeLessThan(1024 * 1024);
    const result = await submitBatch(tasks);
    expect({ status: result.status, sends: sqs.commandCalls(SendMessageBatchCommand).length }).toEqual({
      status: 413,
      sends: 0,
    });
  });
});
