import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  DynamoDBDocumentClient,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { LATENESS_REACH_MS } from '../../../lambdas/core/rate.js';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import {
  decodeCursor,
  DynamoDispatchState,
  encodeCursor,
} from '../../../lambdas/adapters/dynamo-dispatch-state.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import { activeShardOf } from '../../../lambdas/core/names.js';
import type { Conditional } from '../../../lambdas/core/ports.js';
import { conditionFailed, T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
const TABLE = TABLES.dispatch;
const STORE = 'store-1';
const SHARD = activeShardOf(STORE);

let state: DynamoDispatchState;

beforeEach(() => {
  ddb.reset();
  state = new DynamoDispatchState(createAwsClients({ region: 'us-east-1' }).doc, TABLE);
});

/** The fields every dispatch write carries; each case adds its expressions. */
const update = (fields: Omit<UpdateCommandInput, 'TableName' | 'Key'>): UpdateCommandInput => ({
  TableName: TABLE,
  Key: { storeId: STORE },
  ReturnValues: 'ALL_NEW',
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  ...fields,
});

/**
 * A restart at the ceiling lateness or above (`late`): it follows a schedule whose last block was as late, or one
 * written before lateness was kept, or one whose end is a reach behind (`:clear`).
 */
const ceilingRestart = (
  title: string,
  late: number,
): [string, (s: DynamoDispatchState) => Promise<unknown>, UpdateCommandInput] => [
  `restartTat ${title} also follows a schedule written before lateness was kept`,
  (s) => s.restartTat(STORE, T0, 250, 3, late),
  update({
    UpdateExpression: 'SET tat = :next, tatLate = :late ADD tatSeq :one, tatCalls :calls',
    ConditionExpression:
      'attribute_not_exists(tat) OR (tat <= :now AND (attribute_not_exists(tatLate) OR tatLate <= :late OR tat <= :clear))',
    ExpressionAttributeValues: {
      ':next': T0 + 250,
      ':now': T0,
      ':one': 1,
      ':calls': 3,
      ':late': late,
      ':clear': T0 - (LATENESS_REACH_MS - late),
    },
  }),
];

/** The slot-adding writes' SET: the queued slot, and the store's active mark where it has none. */
const ADD_SLOT =
  'SET slots.#id = :slot, activeShard = if_not_exists(activeShard, :shard), activeSince = if_not_exists(activeSince, :now), headSentAt = if_not_exists(headSentAt, :now)';

const updateInputs = (): unknown[] => ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);

/** A dispatch item as DynamoDB holds it while a worker leases slot-a. */
const leasedItem = {
  storeId: STORE,
  enqSeq: 7,
  fence: 4,
  slots: { 'slot-a': { s: 'l', at: T0 + 30_000, f: 4 } },
  activeShard: SHARD,
  activeSince: T0 - 5_000,
};

describe('DynamoDispatchState writes', () => {
  beforeEach(() => {
    ddb.on(UpdateCommand).resolves({ Attributes: leasedItem });
  });

  it.each<[string, (s: DynamoDispatchState) => Promise<unknown>, UpdateCommandInput]>([
    [
      'ensure initialises slots, fence and enqSeq without touching existing values',
      (s) => s.ensure(STORE),
      update({
        UpdateExpression:
          'SET slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero), enqSeq = if_not_exists(enqSeq, :zero)',
        ExpressionAttributeValues: { ':empty': {}, ':zero': 0 },
      }),
    ],
    [
      'recordEnqueued bumps enqSeq by the count and marks the store active on its shard',
      (s) => s.recordEnqueued(STORE, 3, T0),
      update({
        UpdateExpression:
          'SET slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero), activeShard = if_not_exists(activeShard, :shard), activeSince = if_not_exists(activeSince, :now), headSentAt = if_not_exists(headSentAt, :now) ADD enqSeq :n',
        ExpressionAttributeValues: { ':empty': {}, ':zero': 0, ':n': 3, ':shard': SHARD, ':now': T0 },
      }),
    ],
    [
      'beginEnqueue bumps enqSeq, marks the store active and counts one ingest in flight until its window ends',
      (s) => s.beginEnqueue(STORE, 3, T0, T0 + 12_000),
      update({
        UpdateExpression:
          'SET slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero), activeShard = if_not_exists(activeShard, :shard), activeSince = if_not_exists(activeSince, :now), headSentAt = if_not_exists(headSentAt, :now), ingestUntil = :until ADD enqSeq :n, ingesting :one',
        ExpressionAttributeValues: {
          ':empty': {},
          ':zero': 0,
          ':n': 3,
          ':one': 1,
          ':until': T0 + 12_000,
          ':shard': SHARD,
          ':now': T0,
        },
      }),
    ],
    [
      'endEnqueue counts the ingest out and bumps enqSeq once more',
      (s) => s.endEnqueue(STORE),
      update({
        UpdateExpression:
          'SET slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero) ADD ingesting :minus, enqSeq :one',
        ExpressionAttributeValues: { ':empty': {}, ':zero': 0, ':minus': -1, ':one': 1 },
      }),
    ],
    [
      'issueSlot adds a queued slot only while the store holds fewer than the limit',
      (s) => s.issueSlot(STORE, 'slot-b', T0 + 1_000, 2, T0),
      update({
        UpdateExpression: ADD_SLOT,
        ConditionExpression: 'attribute_exists(slots) AND size(slots) < :limit',
        ExpressionAttributeNames: { '#id': 'slot-b' },
        ExpressionAttributeValues: {
          ':slot': { s: 'q', at: T0 + 1_000 },
          ':limit': 2,
          ':shard': SHARD,
          ':now': T0,
        },
      }),
    ],
    [
      'endEnqueueIssuing counts the ingest out, bumps enqSeq and adds a queued slot, only while the store holds none',
      (s) => s.endEnqueueIssuing(STORE, 'slot-b', T0 + 1_000, T0),
      update({
        UpdateExpression: `${ADD_SLOT} ADD ingesting :minus, enqSeq :one`,
        ConditionExpression: 'attribute_exists(slots) AND size(slots) < :one',
        ExpressionAttributeNames: { '#id': 'slot-b' },
        ExpressionAttributeValues: {
          ':slot': { s: 'q', at: T0 + 1_000 },
          ':minus': -1,
          ':one': 1,
          ':shard': SHARD,
          ':now': T0,
        },
      }),
    ],
    [
      'acquire turns a due queued slot into a lease with the next fencing token, within max',
      (s) => s.acquire(STORE, 'slot-a', { now: T0, expiresAt: T0 + 35_000, max: 3 }),
      update({
        UpdateExpression:
          'SET slots.#id.#s = :l, slots.#id.#at = :exp, slots.#id.#f = fence + :one, fence = fence + :one',
        ConditionExpression: 'slots.#id.#s = :q AND slots.#id.#at <= :due AND size(slots) <= :max',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#at': 'at', '#f': 'f' },
        ExpressionAttributeValues: {
          ':q': 'q',
          ':l': 'l',
          ':exp': T0 + 35_000,
          ':one': 1,
          ':due': T0 + 2_000,
          ':max': 3,
        },
      }),
    ],
    [
      'requeue hands my lease back as a queued slot carrying its pacing and the head age, counting a republish',
      (s) =>
        s.requeue(STORE, 'slot-a', 4, { dueAt: T0 + 500, max: 3, nextCallAt: T0 + 200, headSentAt: T0 - 9 }),
      update({
        UpdateExpression: 'SET slots.#id = :slot, headSentAt = :head ADD nRepublished :one',
        ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence AND size(slots) <= :max',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: {
          ':slot': { s: 'q', at: T0 + 500, n: T0 + 200 },
          ':l': 'l',
          ':fence': 4,
          ':max': 3,
          ':one': 1,
          ':head': T0 - 9,
        },
      }),
    ],
    [
      'requeue without a head age leaves headSentAt alone',
      (s) => s.requeue(STORE, 'slot-a', 4, { dueAt: T0 + 500, max: 3, nextCallAt: T0 + 200 }),
      update({
        UpdateExpression: 'SET slots.#id = :slot ADD nRepublished :one',
        ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence AND size(slots) <= :max',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: {
          ':slot': { s: 'q', at: T0 + 500, n: T0 + 200 },
          ':l': 'l',
          ':fence': 4,
          ':max': 3,
          ':one': 1,
        },
      }),
    ],
    [
      'requeue after a marketplace 429 also counts a rate-limit block',
      (s) =>
        s.requeue(STORE, 'slot-a', 4, { dueAt: T0 + 500, max: 3, nextCallAt: T0 + 200, throttled: true }),
      update({
        UpdateExpression: 'SET slots.#id = :slot ADD nRepublished :one, nThrottled :one',
        ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence AND size(slots) <= :max',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: {
          ':slot': { s: 'q', at: T0 + 500, n: T0 + 200 },
          ':l': 'l',
          ':fence': 4,
          ':max': 3,
          ':one': 1,
        },
      }),
    ],
    [
      'release removes my lease only while I still hold it (fence), and never the last slot',
      (s) => s.release(STORE, 'slot-a', 4),
      update({
        UpdateExpression: 'REMOVE slots.#id',
        ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence AND size(slots) > :one',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: { ':l': 'l', ':fence': 4, ':one': 1 },
      }),
    ],
    [
      'markIdle removes the last slot and the active mark only if nothing was enqueued since and no wake is pending',
      (s) => s.markIdle(STORE, 'slot-a', 4, { seenSeq: 7, now: T0 }),
      update({
        UpdateExpression:
          'REMOVE slots.#id, activeShard, activeSince, headSentAt, refreshedAt, ingesting, ingestUntil SET idleSeq = :seen, lastIdleAt = :now',
        ConditionExpression:
          'slots.#id.#s = :l AND slots.#id.#f = :fence AND enqSeq = :seen AND size(slots) = :one AND ' +
          '(attribute_not_exists(wakeAt) OR wakeAt <= :now) AND attribute_not_exists(redriveAt) AND ' +
          '(attribute_not_exists(ingesting) OR ingesting <= :zero OR ingestUntil <= :now)',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: { ':l': 'l', ':fence': 4, ':seen': 7, ':one': 1, ':zero': 0, ':now': T0 },
      }),
    ],
    [
      'markIdle with a drain time records it as the store’s last time to drain',
      (s) => s.markIdle(STORE, 'slot-a', 4, { seenSeq: 7, now: T0, drainMs: 5_000 }),
      update({
        UpdateExpression:
          'REMOVE slots.#id, activeShard, activeSince, headSentAt, refreshedAt, ingesting, ingestUntil SET idleSeq = :seen, lastIdleAt = :now, lastDrainMs = :drain',
        ConditionExpression:
          'slots.#id.#s = :l AND slots.#id.#f = :fence AND enqSeq = :seen AND size(slots) = :one AND ' +
          '(attribute_not_exists(wakeAt) OR wakeAt <= :now) AND attribute_not_exists(redriveAt) AND ' +
          '(attribute_not_exists(ingesting) OR ingesting <= :zero OR ingestUntil <= :now)',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: {
          ':l': 'l',
          ':fence': 4,
          ':seen': 7,
          ':one': 1,
          ':zero': 0,
          ':now': T0,
          ':drain': 5_000,
        },
      }),
    ],
    [
      'dropQueued removes a slot only while it is queued, counting a discarded attention',
      (s) => s.dropQueued(STORE, 'slot-b'),
      update({
        UpdateExpression: 'REMOVE slots.#id ADD nDiscarded :one',
        ConditionExpression: 'slots.#id.#s = :q',
        ExpressionAttributeNames: { '#id': 'slot-b', '#s': 's' },
        ExpressionAttributeValues: { ':q': 'q', ':one': 1 },
      }),
    ],
    [
      'dropQueued with ifOver removes it only while the store holds more slots than that, counting a lease block',
      (s) => s.dropQueued(STORE, 'slot-b', 2),
      update({
        UpdateExpression: 'REMOVE slots.#id ADD nDiscarded :one, nLeaseBlocked :one',
        ConditionExpression: 'slots.#id.#s = :q AND size(slots) > :over',
        ExpressionAttributeNames: { '#id': 'slot-b', '#s': 's' },
        ExpressionAttributeValues: { ':q': 'q', ':one': 1, ':over': 2 },
      }),
    ],
    [
      'noteDiscarded counts a discarded attention without creating a store’s item',
      (s) => s.noteDiscarded(STORE),
      update({
        UpdateExpression: 'ADD nDiscarded :one',
        ConditionExpression: 'attribute_exists(slots)',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    ],
    [
      'holdTat only ever moves the rate schedule later, on an existing item',
      (s) => s.holdTat(STORE, T0 + 30_000),
      update({
        UpdateExpression: 'SET tat = :until ADD tatSeq :one',
        ConditionExpression: 'attribute_exists(slots) AND (attribute_not_exists(tat) OR tat < :until)',
        ExpressionAttributeValues: { ':until': T0 + 30_000, ':one': 1 },
      }),
    ],
    [
      'restartTat restarts only a schedule that lags the clock, counting the write and the calls it reserves',
      (s) => s.restartTat(STORE, T0, 250, 3),
      update({
        UpdateExpression: 'SET tat = :next ADD tatSeq :one, tatCalls :calls',
        ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
        ExpressionAttributeValues: { ':next': T0 + 250, ':now': T0, ':one': 1, ':calls': 3 },
      }),
    ],
    [
      'restartTat with a lateness also needs the last block to call no later, or to have ended the largest gap before',
      (s) => s.restartTat(STORE, T0, 250, 3, 50),
      update({
        UpdateExpression: 'SET tat = :next, tatLate = :late ADD tatSeq :one, tatCalls :calls',
        ConditionExpression:
          'attribute_not_exists(tat) OR (tat <= :now AND (tatLate <= :late OR tat <= :clear))',
        ExpressionAttributeValues: {
          ':next': T0 + 250,
          ':now': T0,
          ':one': 1,
          ':calls': 3,
          ':late': 50,
          ':clear': T0 - (LATENESS_REACH_MS - 50),
        },
      }),
    ],
    ceilingRestart('at the ceiling lateness or more', 270),
    ceilingRestart('at the ceiling lateness exactly', 100),
    [
      'advanceTat with a lateness follows only a block that calls no later, and records it',
      (s) => s.advanceTat(STORE, 250, 3, { ms: 50 }),
      update({
        UpdateExpression: 'SET tatLate = :late ADD tat :interval, tatSeq :one, tatCalls :calls',
        ConditionExpression: 'attribute_not_exists(tat) OR tatLate <= :late',
        ExpressionAttributeValues: { ':late': 50, ':interval': 250, ':one': 1, ':calls': 3 },
      }),
    ],
    [
      'advanceTat raising the lateness only where the schedule does not reach past deepFrom',
      (s) => s.advanceTat(STORE, 250, 3, { ms: 270, deepFrom: T0 }),
      update({
        UpdateExpression: 'SET tatLate = :late ADD tat :interval, tatSeq :one, tatCalls :calls',
        ConditionExpression:
          'attribute_not_exists(tat) OR ((attribute_not_exists(tatLate) OR tatLate <= :late) AND (tatLate >= :late OR tat <= :deep))',
        ExpressionAttributeValues: { ':late': 270, ':interval': 250, ':one': 1, ':calls': 3, ':deep': T0 },
      }),
    ],
    [
      'advanceTat at or under the ceiling lateness raises nothing over a schedule written before it was kept',
      (s) => s.advanceTat(STORE, 250, 3, { ms: 80, deepFrom: T0 }),
      update({
        UpdateExpression: 'SET tatLate = :late ADD tat :interval, tatSeq :one, tatCalls :calls',
        ConditionExpression:
          'attribute_not_exists(tat) OR (tatLate <= :late AND (attribute_not_exists(tatLate) OR tatLate >= :late OR tat <= :deep))',
        ExpressionAttributeValues: { ':late': 80, ':interval': 250, ':one': 1, ':calls': 3, ':deep': T0 },
      }),
    ],
    [
      'advanceTat at the ceiling lateness exactly: an old schedule fits it, and it raises nothing over one',
      (s) => s.advanceTat(STORE, 250, 3, { ms: 100, deepFrom: T0 }),
      update({
        UpdateExpression: 'SET tatLate = :late ADD tat :interval, tatSeq :one, tatCalls :calls',
        ConditionExpression:
          'attribute_not_exists(tat) OR ((attribute_not_exists(tatLate) OR tatLate <= :late) AND (attribute_not_exists(tatLate) OR tatLate >= :late OR tat <= :deep))',
        ExpressionAttributeValues: { ':late': 100, ':interval': 250, ':one': 1, ':calls': 3, ':deep': T0 },
      }),
    ],
    [
      'placeTat places a lowering only over the schedule its refusal saw',
      (s) => s.placeTat(STORE, { tat: T0 + 500, seq: 7 }, T0 + 950, 250, 2, 50),
      update({
        UpdateExpression: 'SET tat = :next, tatLate = :late ADD tatSeq :one, tatCalls :calls',
        ConditionExpression: 'tat = :tat AND tatSeq = :seq',
        ExpressionAttributeValues: {
          ':next': T0 + 1_200,
          ':late': 50,
          ':one': 1,
          ':calls': 2,
          ':tat': T0 + 500,
          ':seq': 7,
        },
      }),
    ],
    [
      'placeTat over a schedule no pacer wrote (no tatSeq)',
      (s) => s.placeTat(STORE, { tat: T0 + 500 }, T0 + 950, 250, 2, 50),
      update({
        UpdateExpression: 'SET tat = :next, tatLate = :late ADD tatSeq :one, tatCalls :calls',
        ConditionExpression: 'tat = :tat AND attribute_not_exists(tatSeq)',
        ExpressionAttributeValues: {
          ':next': T0 + 1_200,
          ':late': 50,
          ':one': 1,
          ':calls': 2,
          ':tat': T0 + 500,
        },
      }),
    ],
    [
      'returnTat gives a reservation back only over the schedule as the reservation left it, and its calls',
      (s) => s.returnTat(STORE, { tat: T0 + 500, seq: 7 }, 250, 2),
      update({
        UpdateExpression: 'SET tat = :back ADD tatSeq :one, tatCalls :unreserved',
        ConditionExpression: 'tat = :tat AND tatSeq = :seq',
        ExpressionAttributeValues: {
          ':back': T0 + 250,
          ':tat': T0 + 500,
          ':seq': 7,
          ':one': 1,
          ':unreserved': -2,
        },
      }),
    ],
    [
      'noteRate sets the learnt rate over the state the caller saw (compare-and-set on its `at`)',
      (s) => s.noteRate(STORE, { why: 'backoff', r: 5, c: 10, at: T0 + 1_000 }, T0),
      update({
        UpdateExpression: 'SET #rate = :rate',
        ConditionExpression: 'attribute_exists(slots) AND #rate.#at = :seen',
        ExpressionAttributeNames: { '#rate': 'rate', '#at': 'at' },
        ExpressionAttributeValues: { ':rate': { why: 'backoff', r: 5, c: 10, at: T0 + 1_000 }, ':seen': T0 },
      }),
    ],
    [
      'noteRate with nothing seen needs no rate yet',
      (s) => s.noteRate(STORE, { why: 'header', r: 3, at: T0 }, undefined),
      update({
        UpdateExpression: 'SET #rate = :rate',
        ConditionExpression: 'attribute_exists(slots) AND attribute_not_exists(#rate)',
        ExpressionAttributeNames: { '#rate': 'rate' },
        ExpressionAttributeValues: { ':rate': { why: 'header', r: 3, at: T0 } },
      }),
    ],
    [
      'deferWake only ever moves wakeAt later',
      (s) => s.deferWake(STORE, T0 + 60_000),
      update({
        UpdateExpression: 'SET wakeAt = :until',
        ConditionExpression: 'attribute_not_exists(wakeAt) OR wakeAt < :until',
        ExpressionAttributeValues: { ':until': T0 + 60_000 },
      }),
    ],
    [
      'reclaim turns an expired lease (same fence) back into a queued slot',
      (s) => s.reclaim(STORE, 'slot-a', 4, T0 + 6_000),
      update({
        UpdateExpression: 'SET slots.#id = :slot',
        ConditionExpression: 'slots.#id.#s = :l AND slots.#id.#f = :fence',
        ExpressionAttributeNames: { '#id': 'slot-a', '#s': 's', '#f': 'f' },
        ExpressionAttributeValues: { ':slot': { s: 'q', at: T0 + 6_000 }, ':l': 'l', ':fence': 4 },
      }),
    ],
    [
      'noteResend marks the first resend of a slot never re-announced',
      (s) => s.noteResend(STORE, 'slot-b', 0, T0),
      update({
        UpdateExpression: 'SET slots.#id.#r = :next ADD nResent :one',
        ConditionExpression:
          'slots.#id.#s = :q AND slots.#id.#at = :at AND attribute_not_exists(slots.#id.#r)',
        ExpressionAttributeNames: { '#id': 'slot-b', '#s': 's', '#at': 'at', '#r': 'r' },
        ExpressionAttributeValues: { ':q': 'q', ':at': T0, ':next': 1, ':one': 1 },
      }),
    ],
    [
      'noteResend counts a further resend only at the count and due time the caller saw',
      (s) => s.noteResend(STORE, 'slot-b', 2, T0),
      update({
        UpdateExpression: 'SET slots.#id.#r = :next ADD nResent :one',
        ConditionExpression: 'slots.#id.#s = :q AND slots.#id.#at = :at AND slots.#id.#r = :r',
        ExpressionAttributeNames: { '#id': 'slot-b', '#s': 's', '#at': 'at', '#r': 'r' },
        ExpressionAttributeValues: { ':q': 'q', ':at': T0, ':next': 3, ':one': 1, ':r': 2 },
      }),
    ],
    [
      'markActive initialises the item and sets the active mark unconditionally',
      (s) => s.markActive(STORE, T0),
      update({
        UpdateExpression:
          'SET slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero), enqSeq = if_not_exists(enqSeq, :zero), activeShard = if_not_exists(activeShard, :shard), activeSince = if_not_exists(activeSince, :now), headSentAt = if_not_exists(headSentAt, :now)',
        ExpressionAttributeValues: { ':empty': {}, ':zero': 0, ':shard': SHARD, ':now': T0 },
      }),
    ],
  ])('%s', async (_name, call, expected) => {
    await call(state);
    expect(updateInputs()).toStrictEqual([expected]);
  });

  it('markActive with a wake time also defers the wake', async () => {
    await state.markActive(STORE, T0, T0 + 45_000);
    expect(updateInputs()[1]).toEqual(
      update({
        UpdateExpression: 'SET wakeAt = :until',
        ConditionExpression: 'attribute_not_exists(wakeAt) OR wakeAt < :until',
        ExpressionAttributeValues: { ':until': T0 + 45_000 },
      }),
    );
  });

  it('a won condition comes back as { ok: true, item } parsed from ALL_NEW', async () => {
    const result = await state.release(STORE, 'slot-a', 4);
    expect(result).toEqual<Conditional>({ ok: true, item: leasedItem as DispatchItem });
  });

  it('recordEnqueued returns the item after the write, with defaults for absent fields', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { storeId: STORE, enqSeq: 1 } });
    await expect(state.recordEnqueued(STORE, 1, T0)).resolves.toEqual({
      storeId: STORE,
      enqSeq: 1,
      fence: 0,
      slots: {},
    });
  });
});

describe('DynamoDispatchState lost conditions', () => {
  // The SDK retries a write whose answer it lost; the retry of a slot-adding write then fails on its own result.
  const withSlotB = (slot: object) => ({ ...leasedItem, slots: { ...leasedItem.slots, 'slot-b': slot } });
  it.each([
    ['issueSlot', (s: DynamoDispatchState) => s.issueSlot(STORE, 'slot-b', T0 + 1_000, 2, T0)],
    ['endEnqueueIssuing', (s: DynamoDispatchState) => s.endEnqueueIssuing(STORE, 'slot-b', T0 + 1_000, T0)],
  ] as const)(
    '%s refused by the very slot it writes had applied (its retry failed on its own result): won',
    async (_name, write) => {
      const after = withSlotB({ s: 'q', at: T0 + 1_000 });
      ddb.on(UpdateCommand).rejects(conditionFailed(after));
      await expect(write(state)).resolves.toEqual({ ok: true, item: after });
    },
  );
  it.each([
    ['another slot', { ...leasedItem }],
    ['its slot id leased already', withSlotB({ s: 'l', at: T0 + 1_000, f: 5 })],
    ['its slot id due at another time', withSlotB({ s: 'q', at: T0 + 2_000 })],
  ])('a slot-adding write refused with %s stays refused', async (_case, found) => {
    ddb.on(UpdateCommand).rejects(conditionFailed(found));
    await expect(state.endEnqueueIssuing(STORE, 'slot-b', T0 + 1_000, T0)).resolves.toEqual({
      ok: false,
      current: found,
    });
  });

  it('a ConditionalCheckFailedException carrying the old item comes back as { ok: false, current }', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ ...leasedItem, enqSeq: 8 }));
    await expect(state.markIdle(STORE, 'slot-a', 4, { seenSeq: 7, now: T0 })).resolves.toEqual({
      ok: false,
      current: { ...leasedItem, enqSeq: 8 },
    });
  });

  it('a refused advance answers the schedule as it stood: its tat, tatSeq and lateness (absent: none kept)', async () => {
    ddb
      .on(UpdateCommand)
      .rejects(conditionFailed({ ...leasedItem, tat: T0 + 900, tatSeq: 12, tatLate: 500 }));
    await expect(state.advanceTat(STORE, 250, 3, { ms: 50 })).resolves.toStrictEqual({
      tat: T0 + 900,
      seq: 12,
      refused: { late: 500 },
    });
    ddb.on(UpdateCommand).rejects(conditionFailed({ ...leasedItem, tat: T0 + 900 }));
    await expect(state.advanceTat(STORE, 250, 3, { ms: 50 })).resolves.toStrictEqual({
      tat: T0 + 900,
      refused: {},
    });
  });

  it('a refused restart or placement answers undefined; an accepted one the schedule it left', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ ...leasedItem, tat: T0 + 900 }));
    await expect(state.restartTat(STORE, T0, 250, 3, 50)).resolves.toBeUndefined();
    await expect(state.placeTat(STORE, { tat: T0, seq: 1 }, T0 + 10, 250, 3, 50)).resolves.toBeUndefined();
    // The table's own `tat` (another write's ADD may have landed in the same item), not the one the call computed.
    ddb.on(UpdateCommand).resolves({ Attributes: { ...leasedItem, tat: T0 + 270, tatSeq: 3, tatCalls: 9 } });
    await expect(state.placeTat(STORE, { tat: T0, seq: 1 }, T0 + 10, 250, 3, 50)).resolves.toStrictEqual({
      tat: T0 + 270,
      seq: 3,
      calls: 9,
    });
    await expect(state.restartTat(STORE, T0, 250, 3, 50)).resolves.toStrictEqual({
      tat: T0 + 270,
      seq: 3,
      calls: 9,
    });
  });

  it('an accepted advance answers the schedule it left, with the learnt rate; no key for what the item lacks', async () => {
    const rate = { why: 'backoff', r: 5, c: 10, at: T0 } as const;
    ddb
      .on(UpdateCommand)
      .resolves({ Attributes: { ...leasedItem, tat: T0 + 750, tatSeq: 4, tatCalls: 12, rate } });
    await expect(state.advanceTat(STORE, 250, 3, { ms: 50 })).resolves.toStrictEqual({
      tat: T0 + 750,
      seq: 4,
      calls: 12,
      rate,
    });
    ddb.on(UpdateCommand).resolves({ Attributes: { ...leasedItem, tat: T0 + 750 } });
    await expect(state.advanceTat(STORE, 250, 3, { ms: 270, deepFrom: T0 })).resolves.toStrictEqual({
      tat: T0 + 750,
    });
  });

  it.each([
    ['issueSlot', (s: DynamoDispatchState) => s.issueSlot(STORE, 'slot-b', T0, 1, T0)],
    ['endEnqueueIssuing', (s: DynamoDispatchState) => s.endEnqueueIssuing(STORE, 'slot-b', T0, T0)],
  ] as const)(
    '%s: won, the item after it (ALL_NEW); refused on no item, current undefined',
    async (_name, write) => {
      ddb.on(UpdateCommand).resolvesOnce({ Attributes: leasedItem }).rejectsOnce(conditionFailed());
      expect([await write(state), await write(state)]).toEqual([
        { ok: true, item: leasedItem },
        { ok: false, current: undefined },
      ]);
    },
  );

  it('a lost condition on an item that does not exist comes back with current undefined', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());
    await expect(state.acquire(STORE, 'gone', { now: T0, expiresAt: T0 + 1, max: 1 })).resolves.toEqual({
      ok: false,
      current: undefined,
    });
  });

  it('a hold inside the reserved schedule (tat already past it) moves tatSeq on, so no earlier block gives back under it', async () => {
    ddb
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed({ ...leasedItem, tat: T0 + 40_000, tatSeq: 6 }))
      .resolves({ Attributes: { ...leasedItem, tat: T0 + 40_000, tatSeq: 7 } });
    await state.holdTat(STORE, T0 + 30_000);
    expect(ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input)).toEqual([
      update({
        UpdateExpression: 'SET tat = :until ADD tatSeq :one',
        ConditionExpression: 'attribute_exists(slots) AND (attribute_not_exists(tat) OR tat < :until)',
        ExpressionAttributeValues: { ':until': T0 + 30_000, ':one': 1 },
      }),
      update({
        UpdateExpression: 'ADD tatSeq :one',
        ConditionExpression: 'attribute_exists(slots) AND tat >= :until',
        ExpressionAttributeValues: { ':until': T0 + 30_000, ':one': 1 },
      }),
    ]);
  });

  it('a hold whose schedule a give-back lowered between its two writes raises it after all', async () => {
    ddb
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed({ ...leasedItem, tat: T0 + 40_000, tatSeq: 6 }))
      .rejectsOnce(conditionFailed({ ...leasedItem, tat: T0 + 20_000, tatSeq: 7 }))
      .resolves({ Attributes: { ...leasedItem, tat: T0 + 30_000, tatSeq: 8 } });
    await state.holdTat(STORE, T0 + 30_000);
    expect(ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.UpdateExpression)).toEqual([
      'SET tat = :until ADD tatSeq :one',
      'ADD tatSeq :one',
      'SET tat = :until ADD tatSeq :one',
    ]);
  });

  it('a hold on a store with no item writes once (it creates none)', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());
    await state.holdTat(STORE, T0 + 30_000);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it('any other DynamoDB error is rethrown', async () => {
    ddb
      .on(UpdateCommand)
      .rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    await expect(state.release(STORE, 'slot-a', 4)).rejects.toThrow('slow down');
  });

  it('deferWake swallows a lost condition: a later wake is already recorded', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed({ ...leasedItem, wakeAt: T0 + 99_000 }));
    await expect(state.deferWake(STORE, T0 + 1_000)).resolves.toBeUndefined();
  });

  it('deferWake rethrows other errors', async () => {
    ddb.on(UpdateCommand).rejects(new Error('network down'));
    await expect(state.deferWake(STORE, T0 + 1_000)).rejects.toThrow('network down');
  });

  it.each([
    ['recordEnqueued', (s: DynamoDispatchState) => s.recordEnqueued(STORE, 1, T0)],
    ['beginEnqueue', (s: DynamoDispatchState) => s.beginEnqueue(STORE, 1, T0, T0 + 12_000)],
    ['endEnqueue', (s: DynamoDispatchState) => s.endEnqueue(STORE)],
  ] as const)('%s treats a lost condition as impossible and throws', async (_name, write) => {
    ddb.on(UpdateCommand).rejects(conditionFailed(leasedItem));
    await expect(write(state)).rejects.toThrow('unconditional update reported a failed condition');
  });
});

describe('DynamoDispatchState reads', () => {
  it('advanceTat adds the interval and the calls, and hands back the schedule and the learnt rate (ALL_NEW)', async () => {
    const rate = { why: 'header', r: 4, at: T0 };
    ddb.on(UpdateCommand).resolves({
      Attributes: { storeId: STORE, tat: T0 + 250, tatSeq: 4, tatCalls: 12, rate },
    });
    await expect(state.advanceTat(STORE, 250, 2)).resolves.toEqual({
      tat: T0 + 250,
      seq: 4,
      calls: 12,
      rate,
    });
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: TABLE,
      Key: { storeId: STORE },
      UpdateExpression: 'ADD tat :interval, tatSeq :one, tatCalls :calls',
      ExpressionAttributeValues: { ':interval': 250, ':one': 1, ':calls': 2 },
      ReturnValues: 'ALL_NEW',
    });
  });

  it('advanceTat without a learnt rate hands back the schedule alone', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { storeId: STORE, tat: T0, tatSeq: 1, tatCalls: 1 } });
    await expect(state.advanceTat(STORE, 250, 1)).resolves.toEqual({ tat: T0, seq: 1, calls: 1 });
  });

  it('read is strongly consistent', async () => {
    ddb.on(GetCommand).resolves({ Item: leasedItem });
    await state.read(STORE);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLE,
      Key: { storeId: STORE },
      ConsistentRead: true,
    });
  });

  it('read parses the item', async () => {
    ddb.on(GetCommand).resolves({ Item: leasedItem });
    await expect(state.read(STORE)).resolves.toEqual(leasedItem);
  });

  it('read of a missing item is undefined', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(state.read(STORE)).resolves.toBeUndefined();
  });

  it('read rejects an item that is not a dispatch item', async () => {
    ddb.on(GetCommand).resolves({ Item: { storeId: STORE, slots: { a: { s: 'x', at: 1 } } } });
    await expect(state.read(STORE)).rejects.toThrow();
  });

  it('listActive queries one shard of the active index', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await state.listActive('5', undefined, 100);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual({
      TableName: TABLE,
      IndexName: 'active',
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': 'activeShard' },
      ExpressionAttributeValues: { ':shard': '5' },
      Limit: 100,
    });
  });

  it('listActive returns the store ids and a cursor that resumes after the last key', async () => {
    const lastKey = { storeId: 'store-2', activeShard: '5', activeSince: T0 };
    ddb
      .on(QueryCommand)
      .resolves({ Items: [{ storeId: 'store-1' }, { storeId: 'store-2' }], LastEvaluatedKey: lastKey });
    const page = await state.listActive('5', undefined, 2);
    await state.listActive('5', page.cursor, 2);
    expect({
      storeIds: page.storeIds,
      next: ddb.commandCalls(QueryCommand)[1]?.args[0].input.ExclusiveStartKey,
    }).toEqual({ storeIds: ['store-1', 'store-2'], next: lastKey });
  });

  it('listActive omits the cursor on the last page', async () => {
    ddb.on(QueryCommand).resolves({ Items: [{ storeId: 'store-1' }] });
    await expect(state.listActive('0', undefined, 100)).resolves.toEqual({ storeIds: ['store-1'] });
  });

  it('readCursor reads the cursor item', async () => {
    ddb.on(GetCommand).resolves({ Item: { storeId: '#sweep-cursor', cursor: 'abc' } });
    await expect(state.readCursor('#sweep-cursor')).resolves.toBe('abc');
  });

  it('readCursor is undefined when no cursor is stored', async () => {
    ddb.on(GetCommand).resolves({ Item: { storeId: '#sweep-cursor' } });
    await expect(state.readCursor('#sweep-cursor')).resolves.toBeUndefined();
  });

  it('writeCursor stores the cursor under the reserved id', async () => {
    await state.writeCursor('#sweep-cursor', 'abc');
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLE,
      Item: { storeId: '#sweep-cursor', cursor: 'abc' },
    });
  });

  it('writeCursor without a cursor clears it (the sweep starts over)', async () => {
    await state.writeCursor('#sweep-cursor', undefined);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: TABLE,
      Item: { storeId: '#sweep-cursor' },
    });
  });
});

describe('cursor encoding', () => {
  it('round-trips a DynamoDB key', () => {
    const key = { storeId: 'a/b+c', activeSince: 12 };
    expect(decodeCursor(encodeCursor(key))).toEqual(key);
  });

  it('is URL-safe', () => {
    expect(encodeCursor({ storeId: '\u00ff\u00fe\u00fd???>>>' })).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each([undefined, ''])('decodes %j to undefined', (cursor) => {
    expect(decodeCursor(cursor)).toBeUndefined();
  });
});
