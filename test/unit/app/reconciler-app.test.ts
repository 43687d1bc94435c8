import { WAKE_MARGIN_MS, ZOMBIE_HIDE_MS } from '../../../lambdas/core/timing.js';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { createReconcilerHandler } from '../../../lambdas/app/reconciler-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import {
  ACTIVE_SHARDS,
  activeShardOf,
  deadLetterTallyId,
  INDEX_BACKFILL_CURSOR_ID,
} from '../../../lambdas/core/names.js';
import type { FlushableTelemetry } from '../../../lambdas/app/runtime.js';

import {
  answerQueueAttributes,
  appOverrides,
  ATTENTION_URL,
  DLQ_URL,
  FULL_ENV,
  QUEUE_URL,
  sequentialIds,
  storeRecord,
  T0,
  TABLES,
} from '../support/fixtures.js';

/** The run's correlation id: its start time; every attention it publishes and every line it logs carries it. */
const RUN = `reconcile-${new Date(T0).toISOString()}`;

const sqs = mockClient(SQSClient);
const ddb = mockClient(DynamoDBDocumentClient);
const NO_SWEEP = { AQ_SWEEP_STORES_PER_RUN: '0' };
const TALLY_ID = deadLetterTallyId('store-1');

const setup = (env: Record<string, string> = NO_SWEEP, telemetry?: FlushableTelemetry) => {
  const { overrides, ...recorded } = appOverrides({
    ids: sequentialIds('slot-new'),
    ...(telemetry ? { telemetry } : {}),
  });
  const handler = createReconcilerHandler(loadConfig('reconciler', { ...FULL_ENV, ...env }), overrides);
  return { handler, ...recorded };
};

/** The active index lists these stores, each on its own shard. */
const activeStores = (...storeIds: string[]) =>
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => ({
    Items: storeIds
      .filter((id) => activeShardOf(id) === input.ExpressionAttributeValues?.[':shard'])
      .map((storeId) => ({ storeId })),
  }));
const dispatchItem = (slots: Record<string, unknown>, storeId = 'store-1') =>
  ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId } }).resolves({
    Item: { storeId, enqSeq: 5, fence: 3, slots, activeShard: activeShardOf(storeId), activeSince: T0 },
  });
const attentions = () =>
  sqs
    .commandCalls(SendMessageCommand)
    .filter((c) => c.args[0].input.QueueUrl === ATTENTION_URL)
    .map((c) => ({ ...JSON.parse(c.args[0].input.MessageBody ?? ''), delay: c.args[0].input.DelaySeconds }));

beforeEach(() => {
  sqs.reset();
  ddb.reset();
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord() });
  ddb.on(UpdateCommand).resolves({ Attributes: { storeId: 'store-1', slots: {} } });
  // The index backfill has read the table (every deployment after its first run): one read a run.
  backfillCursor('done');
});

const backfillCursor = (cursor: string | undefined) =>
  ddb
    .on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: INDEX_BACKFILL_CURSOR_ID } })
    .resolves({ Item: { storeId: INDEX_BACKFILL_CURSOR_ID, ...(cursor ? { cursor } : {}) } });

describe('createReconcilerHandler', () => {
  it('reads every shard of the active index', async () => {
    const { handler } = setup();
    await handler();
    expect(
      ddb.commandCalls(QueryCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':shard']),
    ).toEqual(Array.from({ length: ACTIVE_SHARDS }, (_, i) => String(i)));
  });

  it('touches nothing else when no store is active (idle costs nothing): the shards, and the backfill’s done mark', async () => {
    const { handler } = setup();
    await handler();
    expect({
      sqs: sqs.calls().length,
      other: ddb.calls().length - ACTIVE_SHARDS,
      backfillMark: ddb.commandCalls(GetCommand).map((c) => c.args[0].input.Key),
    }).toEqual({ sqs: 0, other: 1, backfillMark: [{ storeId: INDEX_BACKFILL_CURSOR_ID }] });
  });

  describe('index backfill (stores activated before f267a90, issue #10)', () => {
    const SET_HEAD = 'SET headSentAt = if_not_exists(activeSince, :now)';
    /** The Scan finds store-1 marked active without headSentAt, and the conditional write gives it the key. */
    const legacyStoreFound = () => {
      ddb.on(ScanCommand, { TableName: TABLES.dispatch }).resolves({ Items: [{ storeId: 'store-1' }] });
      indexWriteSucceeds();
    };
    const indexWriteSucceeds = () =>
      ddb
        .on(UpdateCommand, { TableName: TABLES.dispatch, UpdateExpression: SET_HEAD })
        .resolves({ Attributes: { storeId: 'store-1', slots: {}, activeShard: '1', headSentAt: T0 } });
    const stateOf = (state: Record<string, unknown>) => ({
      storeId: INDEX_BACKFILL_CURSOR_ID,
      cursor: JSON.stringify(state),
    });

    it('puts a store marked active without headSentAt into the index and repairs it in the same run, though the index does not list it yet', async () => {
      backfillCursor(undefined);
      legacyStoreFound();
      // The index (a GSI) is updated asynchronously: its Query still lists nothing (beforeEach).
      dispatchItem({});
      const { handler } = setup();
      const report = await handler();
      const scan = ddb.commandCalls(ScanCommand, { TableName: TABLES.dispatch })[0]?.args[0].input;
      expect({
        scan: {
          filter: scan?.FilterExpression,
          names: scan?.ExpressionAttributeNames,
          limit: scan?.Limit,
          consistent: scan?.ConsistentRead,
          start: scan?.ExclusiveStartKey,
        },
        indexed: ddb
          .commandCalls(UpdateCommand, { UpdateExpression: SET_HEAD })
          .map((c) => [
            c.args[0].input.Key,
            c.args[0].input.ConditionExpression,
            c.args[0].input.ExpressionAttributeValues,
          ]),
        written: ddb
          .commandCalls(PutCommand, { TableName: TABLES.dispatch })
          .map((c) => c.args[0].input.Item),
        repairs: report.repairs,
        attentions: attentions().map((a) => a.reason),
      }).toEqual({
        scan: {
          filter: 'attribute_exists(#shard) AND attribute_not_exists(#head)',
          names: { '#key': 'storeId', '#shard': 'activeShard', '#head': 'headSentAt' },
          limit: 1_000,
          consistent: true,
          start: undefined,
        },
        indexed: [
          [
            { storeId: 'store-1' },
            'attribute_exists(activeShard) AND attribute_not_exists(headSentAt)',
            { ':now': T0 },
          ],
        ],
        // A pass that began with the first run: the next one reads the table again (older code may still run).
        written: [stateOf({ since: T0, pass: T0 })],
        repairs: { reclaim: 0, resend: 0, repair: 1, sweep: 0, backfill: 1 },
        attentions: ['repair'],
      });
    });

    it('repairs a store once when the index already lists it', async () => {
      backfillCursor(undefined);
      legacyStoreFound();
      activeStores('store-1');
      dispatchItem({});
      const { handler } = setup();
      const report = await handler();
      expect({ repairs: report.repairs, attentions: attentions().length }).toEqual({
        repairs: { reclaim: 0, resend: 0, repair: 1, sweep: 0, backfill: 1 },
        attentions: 1,
      });
    });

    it('goes on from its place, keeps each page’s, and repairs what it indexed before a failure', async () => {
      const key = { storeId: 'store-500' };
      const start = {
        since: T0 - 60_000,
        pass: T0 - 60_000,
        cursor: Buffer.from(JSON.stringify(key)).toString('base64url'),
      };
      backfillCursor(JSON.stringify(start));
      ddb
        .on(ScanCommand, { TableName: TABLES.dispatch })
        .resolvesOnce({ Items: [{ storeId: 'store-1' }], LastEvaluatedKey: { storeId: 'store-1500' } })
        .rejects(new Error('throttled'));
      indexWriteSucceeds();
      dispatchItem({});
      const { handler, logs } = setup();
      const report = await handler();
      expect({
        starts: ddb
          .commandCalls(ScanCommand, { TableName: TABLES.dispatch })
          .map((c) => c.args[0].input.ExclusiveStartKey),
        written: ddb
          .commandCalls(PutCommand, { TableName: TABLES.dispatch })
          .map((c) => c.args[0].input.Item),
        repairs: report.repairs,
        logged: logs.filter((l) => l.message === 'index backfill failed').map((l) => l.fields?.['error']),
      }).toEqual({
        starts: [key, { storeId: 'store-1500' }],
        written: [
          stateOf({
            ...start,
            cursor: Buffer.from(JSON.stringify({ storeId: 'store-1500' })).toString('base64url'),
          }),
        ],
        repairs: { reclaim: 0, resend: 0, repair: 1, sweep: 0, backfill: 1 },
        logged: ['Error: throttled'],
      });
    });
  });

  it('reclaims an expired lease with the same fence', async () => {
    activeStores('store-1');
    dispatchItem({ a: { s: 'l', at: T0 - 3_000, f: 3 } });
    const { handler } = setup();
    await handler();
    const [wake, reclaim] = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    // First the guard (race B, and a zombie holder's late hides): no one marks the store idle before the
    // dead lease's messages are surely back.
    expect(wake?.ExpressionAttributeValues).toEqual({
      ':until': T0 - 3_000 + ZOMBIE_HIDE_MS + WAKE_MARGIN_MS,
    });
    expect(reclaim).toMatchObject({
      UpdateExpression: 'SET slots.#id = :slot',
      ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence',
      ExpressionAttributeNames: { '#id': 'a', '#s': 's', '#f': 'f' },
      // Due once the dead worker's messages are visible again (lease + 5 s margin + 1 s).
      ExpressionAttributeValues: { ':slot': { s: 'q', at: T0 + 3_000 }, ':l': 'l', ':fence': 3 },
    });
  });

  it('re-announces a reclaimed slot when it is due', async () => {
    activeStores('store-1');
    dispatchItem({ a: { s: 'l', at: T0 - 3_000, f: 3 } });
    const { handler } = setup();
    await handler();
    expect(attentions()).toEqual([
      {
        v: 1,
        storeId: 'store-1',
        slotId: 'a',
        reason: 'reclaim',
        issuedAt: T0,
        dueAt: T0 + 3_000,
        priority: 'low',
        correlationId: RUN,
        delay: 3,
      },
    ]);
  });

  it('leaves a lease alone within the clock-skew allowance', async () => {
    activeStores('store-1');
    dispatchItem({ a: { s: 'l', at: T0 - 1_999, f: 3 } });
    const { handler } = setup();
    await handler();
    expect([ddb.commandCalls(UpdateCommand).length, attentions().length]).toEqual([0, 0]);
  });

  it('resends the attention of a queued slot past its grace period', async () => {
    activeStores('store-1');
    dispatchItem({ q: { s: 'q', at: T0 - 20_001 } });
    const { handler } = setup();
    await handler();
    expect({
      noted: ddb.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues,
      attentions: attentions(),
    }).toEqual({
      noted: { ':q': 'q', ':at': T0 - 20_001, ':next': 1, ':one': 1 },
      attentions: [
        {
          v: 1,
          storeId: 'store-1',
          slotId: 'q',
          reason: 'resend',
          issuedAt: T0,
          dueAt: T0 - 20_001,
          priority: 'low',
          correlationId: RUN,
        },
      ],
    });
  });

  it('waits twice as long before each further resend', async () => {
    activeStores('store-1');
    dispatchItem({ q: { s: 'q', at: T0 - 40_000, r: 1 } });
    const { handler } = setup();
    await handler();
    expect(attentions()).toEqual([]);
  });

  it('gives a store with no slot at all a new one', async () => {
    activeStores('store-1');
    dispatchItem({});
    const { handler } = setup();
    const report = await handler();
    expect({ report: report.repairs, attentions: attentions() }).toEqual({
      report: { reclaim: 0, resend: 0, repair: 1, sweep: 0, backfill: 0 },
      attentions: [
        {
          v: 1,
          storeId: 'store-1',
          slotId: 'slot-new',
          reason: 'repair',
          issuedAt: T0,
          dueAt: T0,
          priority: 'low',
          correlationId: RUN,
        },
      ],
    });
  });

  it('skips a store that is not active', async () => {
    activeStores('store-1');
    dispatchItem({});
    ddb.on(GetCommand, { TableName: TABLES.stores }).resolves({ Item: storeRecord({ status: 'paused' }) });
    const { handler } = setup();
    const report = await handler();
    expect({ checked: report.checked, attentions: attentions().length }).toEqual({
      checked: 0,
      attentions: 0,
    });
  });

  it('carries on with the other stores when one cannot be checked', async () => {
    activeStores('store-1', 'store-2');
    dispatchItem({});
    ddb
      .on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: 'store-2' } })
      .rejects(new Error('throttled'));
    const { handler, logs } = setup();
    const report = await handler();
    expect({ repaired: report.repairs.repair, logged: logs.filter((l) => l.level === 'error') }).toEqual({
      repaired: 1,
      logged: [
        {
          level: 'error',
          message: 'reconciler could not check a store',
          fields: { correlationId: RUN, storeId: 'store-2', error: 'Error: throttled' },
        },
      ],
    });
  });

  it('follows the active index’s pages', async () => {
    const shard = activeShardOf('store-1');
    ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
      if (input.ExpressionAttributeValues?.[':shard'] !== shard) return { Items: [] };
      return input.ExclusiveStartKey
        ? { Items: [{ storeId: 'store-2' }] }
        : { Items: [{ storeId: 'store-1' }], LastEvaluatedKey: { storeId: 'store-1', activeShard: shard } };
    });
    dispatchItem({});
    dispatchItem({}, 'store-2');
    const { handler } = setup();
    const report = await handler();
    expect(report.checked).toBe(2);
  });

  it('logs its report', async () => {
    const { handler, logs } = setup();
    await handler();
    expect(logs).toContainEqual({
      level: 'info',
      message: 'reconciler run',
      fields: {
        checked: 0,
        refreshed: 0,
        repairs: { reclaim: 0, resend: 0, repair: 0, sweep: 0, backfill: 0 },
        swept: 0,
        deadLettersUnaccounted: 0,
        deadLettersRefreshed: 0,
      },
    });
  });

  it('flushes telemetry even when the run fails', async () => {
    ddb.on(QueryCommand).rejects(new Error('DynamoDB unavailable'));
    const telemetry = Object.assign(new RecordingTelemetry(), { flush: vi.fn() });
    const { handler } = setup(NO_SWEEP, telemetry);
    await expect(handler()).rejects.toThrow('DynamoDB unavailable');
    expect(telemetry.flush).toHaveBeenCalledTimes(1);
  });
});

describe('createReconcilerHandler: the sweep', () => {
  const SWEEP = { AQ_SWEEP_STORES_PER_RUN: '2' };

  beforeEach(() => {
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: '#sweep-cursor' } }).resolves({
      Item: { storeId: '#sweep-cursor', cursor: 'eyJzdG9yZUlkIjoic3RvcmUtMCJ9' },
    });
    ddb.on(ScanCommand).resolves({ Items: [storeRecord()], LastEvaluatedKey: { storeId: 'store-1' } });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: 'store-1' } }).resolves({
      Item: { storeId: 'store-1', enqSeq: 9, fence: 0, slots: {} },
    });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: TALLY_ID } }).resolves({});
  });

  it('scans the configured number of stores from where the last run stopped', async () => {
    answerQueueAttributes(sqs);
    const { handler } = setup(SWEEP);
    await handler();
    expect(ddb.commandCalls(ScanCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.stores,
      Limit: 2,
      ExclusiveStartKey: { storeId: 'store-0' },
    });
  });

  it('saves where it stopped for the next run', async () => {
    answerQueueAttributes(sqs);
    const { handler } = setup(SWEEP);
    await handler();
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.dispatch,
      Item: { storeId: '#sweep-cursor', cursor: 'eyJzdG9yZUlkIjoic3RvcmUtMSJ9' },
    });
  });

  it('signals a store with an untracked backlog', async () => {
    answerQueueAttributes(sqs, { backlog: 4 });
    const { handler } = setup(SWEEP);
    const report = await handler();
    expect({ sweep: report.repairs.sweep, attentions: attentions() }).toEqual({
      sweep: 1,
      attentions: [
        {
          v: 1,
          storeId: 'store-1',
          slotId: 'slot-new',
          reason: 'sweep',
          issuedAt: T0,
          dueAt: T0,
          priority: 'low',
          correlationId: RUN,
        },
      ],
    });
  });

  it('marks the found store active first, so the reconciler tracks it from then on', async () => {
    answerQueueAttributes(sqs, { backlog: 4 });
    const { handler } = setup(SWEEP);
    await handler();
    // The store's first write (its DLQ's tally, written by the audit before, is another item).
    const storeWrites = ddb
      .commandCalls(UpdateCommand)
      .filter((call) => !String(call.args[0].input.Key?.['storeId']).startsWith('#dead-letters:'));
    expect(storeWrites[0]?.args[0].input.UpdateExpression).toContain(
      'activeShard = if_not_exists(activeShard, :shard)',
    );
  });

  it('asks the store’s DLQ (its audit) and its work queue for their depths', async () => {
    answerQueueAttributes(sqs, { backlog: 4 });
    const { handler } = setup(SWEEP);
    await handler();
    expect(sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([
      DLQ_URL,
      QUEUE_URL,
    ]);
  });

  it('reports the dead letters the worker did not write (issue #12)', async () => {
    answerQueueAttributes(sqs, { deadLetters: 3 });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: TALLY_ID } }).resolves({
      Item: { storeId: TALLY_ID, written: 2, writtenAt: T0 - 120_000 },
    });
    const { handler, logs } = setup(SWEEP);
    const report = await handler();
    expect({
      report: report.deadLettersUnaccounted,
      log: logs.find((l) => l.message === 'dead letters the worker did not write')?.fields,
    }).toEqual({
      report: 1,
      log: { storeId: 'store-1', tenantId: 'tenant-1', unaccounted: 1, depth: 3, correlationId: RUN },
    });
  });

  it('keeps what the audit saw as the next audit’s baseline', async () => {
    answerQueueAttributes(sqs, { deadLetters: 3 });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: TALLY_ID } }).resolves({
      Item: { storeId: TALLY_ID, written: 2, writtenAt: T0 - 120_000 },
    });
    const { handler } = setup(SWEEP);
    await handler();
    expect(
      ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.Key?.['storeId'] === TALLY_ID)?.args[0]
        .input,
    ).toEqual({
      TableName: TABLES.dispatch,
      Key: { storeId: TALLY_ID },
      UpdateExpression: 'SET seenDepth = :depth, seenWritten = :written',
      ExpressionAttributeValues: { ':depth': 3, ':written': 2 },
    });
  });

  it('counts in-flight and delayed messages as backlog', async () => {
    answerQueueAttributes(sqs, { inFlight: 1, delayed: 1 });
    const { handler } = setup(SWEEP);
    const report = await handler();
    expect(report.repairs.sweep).toBe(1);
  });

  it('leaves a store with an empty queue alone', async () => {
    answerQueueAttributes(sqs, { deadLetters: 8 });
    const { handler } = setup(SWEEP);
    const report = await handler();
    const storeUpdates = ddb
      .commandCalls(UpdateCommand)
      .filter((c) => c.args[0].input.Key?.['storeId'] === 'store-1');
    expect({ swept: report.swept, updates: storeUpdates.length }).toEqual({
      swept: 1,
      updates: 0,
    });
  });

  it('leaves a store the active index already tracks to the active pass', async () => {
    answerQueueAttributes(sqs, { backlog: 4 });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: 'store-1' } }).resolves({
      Item: {
        storeId: 'store-1',
        enqSeq: 9,
        fence: 0,
        slots: {},
        activeShard: '1',
        activeSince: T0,
        headSentAt: T0,
      },
    });
    const { handler } = setup(SWEEP);
    await handler();
    expect(attentions()).toEqual([]);
  });

  it('signals a store whose active mark predates the index’s sort key (activeShard without headSentAt)', async () => {
    answerQueueAttributes(sqs, { backlog: 4 });
    ddb.on(GetCommand, { TableName: TABLES.dispatch, Key: { storeId: 'store-1' } }).resolves({
      Item: { storeId: 'store-1', enqSeq: 9, fence: 0, slots: {}, activeShard: '1', activeSince: T0 },
    });
    const { handler } = setup(SWEEP);
    await handler();
    expect(attentions().map((a) => a.reason)).toEqual(['sweep']);
  });

  it('reads only the DLQ of a store that is not active (its audit), not its work queue', async () => {
    answerQueueAttributes(sqs);
    ddb.on(ScanCommand).resolves({ Items: [storeRecord({ status: 'paused' })] });
    const { handler } = setup(SWEEP);
    await handler();
    expect(sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([
      DLQ_URL,
    ]);
  });
});
