import { beforeEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { HttpRequest } from '../../../lambdas/core/http.js';
import { submitBatch, submitTask, taskStatus, type IngestDeps } from '../../../lambdas/core/ingest.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { SendFailure } from '../../../lambdas/core/ports.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { HIGH_QUEUE_URL, QUEUE_URL, storeRecord, T0 } from '../support/fixtures.js';

// Ingest's edges, called on the core with in-memory ports: the high queue of a batch, a queue failing after
// another took its tasks, the queue's own refusals, and what the signal after the send counts and logs.

type Sent = { url: string; ids: string[] };

const request = (body: unknown, resource = '/v1/stores/{storeId}/tasks/batch'): HttpRequest => ({
  method: 'POST',
  resource,
  pathParameters: { storeId: 'store-1' },
  headers: {},
  body: JSON.stringify(body),
  tenantId: 'tenant-1',
  requestId: 'req-1',
});

const task = (eventId: string, priority?: 'high' | 'normal') => ({
  eventId,
  type: 'inventory.update',
  payload: { sku: 'SKU-1', quantity: 1 },
  ...(priority ? { priority } : {}),
});

describe('ingest edges', () => {
  let dispatch: MemoryDispatchState;
  let sent: Sent[];
  let published: AttentionMessage[];
  let logs: LogRecord[];
  let telemetry: RecordingTelemetry;
  let failBatch: (url: string, ids: string[]) => SendFailure[] | Error;
  let deps: IngestDeps;

  beforeEach(() => {
    dispatch = new MemoryDispatchState();
    sent = [];
    published = [];
    logs = [];
    telemetry = new RecordingTelemetry((record) => logs.push(record), 'info');
    failBatch = () => [];
    const store = storeRecord({ priorityQueueUrl: HIGH_QUEUE_URL });
    deps = {
      dispatch,
      attention: { publish: async (message) => void published.push(message) },
      clock: { now: () => T0, sleep: async () => undefined },
      ids: { next: () => 'slot-1' },
      telemetry,
      stores: {
        get: async (id) => (id === store.storeId ? store : undefined),
        create: async () => true,
        replace: async () => true,
        scan: async () => ({ stores: [] }),
      },
      tasks: {
        send: async (url, body) => void sent.push({ url, ids: [JSON.parse(body).eventId as string] }),
        sendBatch: async (url, entries) => {
          const outcome = failBatch(
            url,
            entries.map((e) => e.id),
          );
          if (outcome instanceof Error) throw outcome;
          sent.push({ url, ids: entries.map((e) => JSON.parse(e.body).eventId as string) });
          return { failed: outcome };
        },
        receive: async () => [],
        deleteBatch: async () => undefined,
        changeVisibility: async () => undefined,
        deadLetter: async () => undefined,
        resend: async () => undefined,
      },
      deliveries: new MemoryDeliveryLog(),
    };
  });

  it('sends a batch’s high tasks to the high queue first and the rest to the work queue', async () => {
    const result = await submitBatch(
      deps,
      request({ tasks: [task('n1'), task('h1', 'high'), task('n2', 'normal')] }),
    );
    expect({ status: result.status, sent }).toEqual({
      status: 202,
      sent: [
        { url: HIGH_QUEUE_URL, ids: ['h1'] },
        { url: QUEUE_URL, ids: ['n1', 'n2'] },
      ],
    });
  });

  it('sends a single high task to the high queue', async () => {
    await submitTask(deps, request(task('h1', 'high'), '/v1/stores/{storeId}/tasks'));
    expect(sent).toEqual([{ url: HIGH_QUEUE_URL, ids: ['h1'] }]);
  });

  it('keeps the tasks one queue took when the next queue throws, and rejects only the others as retryable', async () => {
    failBatch = (url) => (url === QUEUE_URL ? new Error('SQS unavailable') : []);
    const result = await submitBatch(deps, request({ tasks: [task('n1'), task('h1', 'high')] }));
    expect({ status: result.status, body: result.body }).toEqual({
      status: 202,
      body: {
        accepted: ['h1'],
        rejected: [
          {
            eventId: 'n1',
            error: {
              code: 'dependency_unavailable',
              message: 'the store queue did not accept this task; retry it',
            },
          },
        ],
      },
    });
    expect(published).toHaveLength(1);
  });

  it('reports a task the queue found too large as that task’s 413, naming its position', async () => {
    failBatch = () => [{ id: '1', message: 'too big', refused: 'too_large' }];
    const result = await submitBatch(deps, request({ tasks: [task('n1'), task('n2')] }));
    expect(result.body).toEqual({
      accepted: ['n1'],
      rejected: [
        {
          eventId: 'n2',
          error: { code: 'payload_too_large', message: 'tasks[1]: too large for the store queue' },
        },
      ],
    });
  });

  it('counts the rejected tasks of a batch, and the accepted ones', async () => {
    await submitBatch(deps, request({ tasks: [task('n1'), { eventId: 'bad id!' }, task('n1')] }));
    expect({
      rejected: telemetry.total(MetricNames.tasksRejected),
      accepted: telemetry.total(MetricNames.tasksAccepted),
    }).toEqual({ rejected: 2, accepted: 1 });
  });

  it('counts the attention it did not publish because the store already holds a slot', async () => {
    await dispatch.recordEnqueued('store-1', 1, T0);
    expect((await dispatch.issueSlot('store-1', 'held', T0, 1, T0)).ok).toBe(true);
    await submitTask(deps, request(task('n1'), '/v1/stores/{storeId}/tasks'));
    expect({
      coalesced: telemetry.total(MetricNames.attentionsCoalesced, { reason: 'ingest' }),
      published,
    }).toEqual({ coalesced: 1, published: [] });
  });

  it('publishes the ingest attention at the store’s level with the request as correlation', async () => {
    await submitTask(deps, request(task('n1'), '/v1/stores/{storeId}/tasks'));
    expect(published).toEqual([
      {
        v: 1,
        storeId: 'store-1',
        slotId: 'slot-1',
        reason: 'ingest',
        issuedAt: T0,
        priority: 'low',
        dueAt: T0,
        correlationId: 'req-1',
      },
    ]);
  });

  it('answers 202 when both the signal and its nudge fail, logging that the reconciler will repair it', async () => {
    // The store is idle: its ingest ends with the end-and-issue write, which fails like any DynamoDB write.
    dispatch.endEnqueueIssuing = async () => {
      throw new Error('DynamoDB unavailable');
    };
    deps.attention.publish = async () => {
      throw new Error('SQS unavailable');
    };
    const result = await submitTask(deps, request(task('n1'), '/v1/stores/{storeId}/tasks'));
    expect({
      status: result.status,
      failures: telemetry.total(MetricNames.signalFailures),
      errors: logs
        .filter((l) => l.level === 'error')
        .map((l) => [l.message, l.fields?.['storeId'], l.fields?.['error']]),
    }).toEqual({
      status: 202,
      failures: 1,
      errors: [
        ['signal after enqueue failed; publishing a nudge', 'store-1', 'Error: DynamoDB unavailable'],
        ['nudge failed; the reconciler will repair the active store', 'store-1', 'Error: SQS unavailable'],
      ],
    });
  });

  it('still answers 503 for a refused send when ending the write-ahead fails too, and warns', async () => {
    deps.tasks.send = async () => {
      throw new Error('SQS unavailable');
    };
    dispatch.endEnqueue = async () => {
      throw new Error('DynamoDB unavailable');
    };
    await expect(submitTask(deps, request(task('n1'), '/v1/stores/{storeId}/tasks'))).rejects.toMatchObject({
      status: 503,
    });
    expect(logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields?.['error']])).toEqual([
      ['ingest end not recorded; its window ends it', 'Error: DynamoDB unavailable'],
    ]);
  });
  /** A post-sale task whose JSON is `bytes` long, its note made of `char` (ASCII by default). */
  const sized = (eventId: string, bytes: number, char = 'x') => {
    const base = {
      eventId,
      type: 'postsale.event',
      payload: { orderId: 'o1', kind: 'message', details: { note: '' } },
    };
    const room = bytes - Buffer.byteLength(JSON.stringify(base), 'utf8');
    const note = char.repeat(Math.floor(room / Buffer.byteLength(char, 'utf8')));
    return { ...base, payload: { ...base.payload, details: { note } } };
  };
  const single = '/v1/stores/{storeId}/tasks';

  it('accepts a task of exactly 64 KiB, alone or in a batch', async () => {
    await expect(submitTask(deps, request(sized('e1', 65_536), single))).resolves.toMatchObject({
      status: 202,
    });
    await expect(submitBatch(deps, request({ tasks: [sized('e2', 65_536)] }))).resolves.toMatchObject({
      body: { accepted: ['e2'], rejected: [] },
    });
  });

  it('answers 413 for a task under 64 KiB as sent but over it once encoded, saying so', async () => {
    const task = sized('e1', 65_000, '\u{1F600}');
    expect(Buffer.byteLength(JSON.stringify(task), 'utf8')).toBeLessThanOrEqual(65_536);
    await expect(submitTask(deps, request(task, single))).rejects.toMatchObject({
      status: 413,
      message: 'task, once encoded, exceeds 65536 bytes',
    });
    expect(sent).toEqual([]);
  });

  it.each([
    ['the store registry', () => (deps.stores.get = async () => Promise.reject(new Error('down')))],
    ['the dispatch state', () => (dispatch.beginEnqueue = async () => Promise.reject(new Error('down')))],
  ])('answers 503 naming %s when it fails', async (what, breakIt) => {
    breakIt();
    await expect(submitTask(deps, request(task('n1'), single))).rejects.toMatchObject({
      status: 503,
      message: `${what} is unavailable; nothing was accepted`,
    });
  });

  it('answers 503 naming the delivery log when a status read fails', async () => {
    deps.deliveries.get = async () => Promise.reject(new Error('down'));
    const read: HttpRequest = {
      ...request(undefined, ''),
      method: 'GET',
      pathParameters: { storeId: 'store-1', eventId: 'n1' },
    };
    await expect(taskStatus(deps, read)).rejects.toMatchObject({
      status: 503,
      message: 'the delivery log is unavailable; nothing was accepted',
    });
  });

  it.each([
    ['a delivered task without an earlier attempt’s error', 'delivered', { attempts: 2 }],
    [
      'a task still retrying with its last error',
      'pending',
      { attempts: 1, lastError: 'marketplace answered 503' },
    ],
    [
      'a dead-lettered task with its last error',
      'dead_lettered',
      { attempts: 2, lastError: 'marketplace answered 503' },
    ],
  ] as const)('reads %s', async (_name, status, expected) => {
    deps.deliveries.get = async () =>
      ({
        storeId: 'store-1',
        eventId: 'n1',
        status,
        attempts: expected.attempts,
        lastError: 'marketplace answered 503',
      }) as Awaited<ReturnType<IngestDeps['deliveries']['get']>>;
    const read: HttpRequest = {
      ...request(undefined, ''),
      method: 'GET',
      pathParameters: { storeId: 'store-1', eventId: 'n1' },
    };
    expect((await taskStatus(deps, read)).body).toStrictEqual({
      storeId: 'store-1',
      eventId: 'n1',
      status,
      ...expected,
    });
  });

  it('answers 400 for an invalid eventId in a status read, naming the field and its rule', async () => {
    const read: HttpRequest = {
      ...request(undefined, ''),
      method: 'GET',
      pathParameters: { storeId: 'store-1', eventId: 'bad id!' },
    };
    await expect(taskStatus(deps, read)).rejects.toMatchObject({
      status: 400,
      message: 'eventId: must be 1–128 characters of [A-Za-z0-9._:-]',
    });
  });

  it('names a null task of a batch by its position', async () => {
    const result = await submitBatch(deps, request({ tasks: [null, task('n1')] }));
    expect(result.body).toMatchObject({ accepted: ['n1'], rejected: [{ eventId: '#0' }] });
  });

  it('writes nothing to the dispatch state for a batch with no valid task', async () => {
    await submitBatch(deps, request({ tasks: [{ eventId: 'bad id!' }] }));
    expect(dispatch.items.has('store-1')).toBe(false);
  });

  it('sends to the work queue only when a batch holds no high task', async () => {
    await submitBatch(deps, request({ tasks: [task('n1'), task('n2')] }));
    expect(sent).toEqual([{ url: QUEUE_URL, ids: ['n1', 'n2'] }]);
  });

  it('answers 503 when nothing was accepted and one task failed for the queue’s unavailability', async () => {
    failBatch = () => [
      { id: '0', message: 'refused', refused: 'content' },
      { id: '1', message: 'down' },
    ];
    await expect(submitBatch(deps, request({ tasks: [task('n1'), task('n2')] }))).rejects.toMatchObject({
      status: 503,
      message: 'the store queue is unavailable; nothing was accepted',
    });
  });

  it('signals nothing for a batch whose every task the queue refused for its content (202, the ingest ended)', async () => {
    failBatch = () => [
      { id: '0', message: 'refused', refused: 'content' },
      { id: '1', message: 'refused', refused: 'content' },
    ];
    const result = await submitBatch(deps, request({ tasks: [task('n1'), task('n2')] }));
    expect({
      status: result.status,
      published,
      slots: (await dispatch.read('store-1'))?.slots,
      ingesting: (await dispatch.read('store-1'))?.ingesting,
    }).toEqual({ status: 202, published: [], slots: {}, ingesting: 0 });
  });

  it('signals a store whose slot, held at the write-ahead, was gone by its end: issueSlot, then the attention', async () => {
    await dispatch.ensure('store-1');
    await dispatch.issueSlot('store-1', 'old', T0, 1, T0);
    const release = dispatch.endEnqueue.bind(dispatch);
    // The store's last slot goes (its slice marked it idle, the ingest not counted yet) between the two writes.
    dispatch.endEnqueue = async (storeId) => {
      delete dispatch.items.get(storeId)?.slots['old'];
      return release(storeId);
    };
    await submitTask(deps, request(task('n1'), '/v1/stores/{storeId}/tasks'));
    expect({
      published: published.map((m) => [m.slotId, m.reason]),
      slots: (await dispatch.read('store-1'))?.slots,
    }).toEqual({ published: [['slot-1', 'ingest']], slots: { 'slot-1': { s: 'q', at: T0 } } });
  });

  it('records no rejection datum for a batch with nothing rejected', async () => {
    await submitBatch(deps, request({ tasks: [task('n1')] }));
    expect(telemetry.counters.has(MetricNames.tasksRejected)).toBe(false);
  });
});
