import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { RateStateSchema, type RateState } from '../core/adaptive-rate.js';
import { DispatchItemSchema, type DispatchItem, type Slot } from '../core/dispatch-model.js';
import { activeShardOf, Tables } from '../core/names.js';
import type {
  Conditional,
  DispatchState,
  LeaseRef,
  RequeueOptions,
  RetentionMarks,
  TatLate,
  TatReservation,
} from '../core/ports.js';
import { CLOCK_SKEW_MS } from '../core/timing.js';
import { LATENESS_CEILING_MS, LATENESS_REACH_MS } from '../core/rate.js';
import { conditional, sameAsWritten } from './dynamo-conditional.js';
import { decodeCursor, encodeCursor } from './dynamo-cursor.js';

const KEY = Tables.dispatch.partitionKey;

/** Placeholders for the slot fields (`at` is a DynamoDB reserved word); only those an expression uses are sent. */
const FIELD_NAMES: Record<string, string> = { '#s': 's', '#at': 'at', '#f': 'f', '#r': 'r', '#n': 'n' };
const namesUsed = (
  expressions: string[],
  extra: Record<string, string> | undefined,
): Record<string, string> | undefined => {
  const names: Record<string, string> = { ...extra };
  for (const token of expressions.join(' ').match(/#\w+/g) ?? []) {
    const field = FIELD_NAMES[token];
    if (field !== undefined) names[token] = field;
  }
  return Object.keys(names).length > 0 ? names : undefined;
};

/** Sub-expressions, named so each conditional write reads as the rule it enforces. */
const isQueued = 'slots.#id.#s = :q';
const isMyLease = 'slots.#id.#s = :l AND slots.#id.#f = :fence';
/** Marks the store active: the keys of the sparse `active` index (shard, and the oldest-task estimate). */
const ACTIVATE =
  'activeShard = if_not_exists(activeShard, :shard), activeSince = if_not_exists(activeSince, :now), headSentAt = if_not_exists(headSentAt, :now)';
const INIT = 'slots = if_not_exists(slots, :empty), fence = if_not_exists(fence, :zero)';

/**
 * The dispatch state in DynamoDB: one item per store, every change a single conditional UpdateItem on it
 * (strongly consistent), so no transaction is needed and a store's protocol state moves atomically.
 */
/**
 * The condition that a block of lateness `late` may follow the schedule's last block with no gap (`:late`): that
 * block calls no later. A schedule without `tatLate` was written before it was kept; its blocks called up to
 * LATENESS_CEILING_MS late.
 */
const lateFits = (late: number): string[] =>
  late >= LATENESS_CEILING_MS ? ['attribute_not_exists(tatLate)', 'tatLate <= :late'] : ['tatLate <= :late'];
/**
 * The condition that a block of lateness `late` raises nothing: the schedule's last block calls as late or later
 * (a schedule without `tatLate` as late as LATENESS_CEILING_MS: not a raise for a block of that or less; found in
 * review — an old item leading the clock cost a 100 ms block two refused writes).
 */
const noRaise = (late: number): string[] =>
  late <= LATENESS_CEILING_MS ? ['attribute_not_exists(tatLate)', 'tatLate >= :late'] : ['tatLate >= :late'];
/** Alternatives joined by OR, in parentheses when there are several (DynamoDB refuses redundant ones). */
const anyOf = (terms: string[]): string =>
  terms.length === 1 ? (terms[0] as string) : `(${terms.join(' OR ')})`;

/** A reservation's answer from the item a schedule write left (`tat` as the caller computed it). */
const reservationOf = (item: DispatchItem, tat: number): TatReservation => ({
  tat: item.tat ?? tat,
  ...(item.tatSeq === undefined ? {} : { seq: item.tatSeq }),
  ...(item.tatCalls === undefined ? {} : { calls: item.tatCalls }),
  ...(item.rate === undefined ? {} : { rate: item.rate }),
});

export class DynamoDispatchState implements DispatchState, RetentionMarks {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private parse(item: Record<string, unknown> | undefined): DispatchItem | undefined {
    return item ? DispatchItemSchema.parse(item) : undefined;
  }

  private async update(
    storeId: string,
    input: {
      update: string;
      condition?: string;
      names?: Record<string, string>;
      values?: Record<string, unknown>;
    },
  ): Promise<Conditional> {
    const names = namesUsed([input.update, input.condition ?? ''], input.names);
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [KEY]: storeId },
          UpdateExpression: input.update,
          ...(input.condition ? { ConditionExpression: input.condition } : {}),
          ...(names ? { ExpressionAttributeNames: names } : {}),
          ...(input.values ? { ExpressionAttributeValues: input.values } : {}),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (result.ok) return { ok: true, item: this.parse(result.value.Attributes) as DispatchItem };
    return { ok: false, current: this.parse(result.current) };
  }

  /** A write without a condition: its answer is the item after it (a refusal cannot happen, and throws). */
  private async unconditional(
    storeId: string,
    input: Parameters<DynamoDispatchState['update']>[1],
  ): Promise<DispatchItem> {
    const result = await this.update(storeId, input);
    if (!result.ok) throw new Error('unconditional update reported a failed condition');
    return result.item;
  }

  async ensure(storeId: string): Promise<void> {
    await this.update(storeId, {
      update: `SET ${INIT}, enqSeq = if_not_exists(enqSeq, :zero)`,
      values: { ':empty': {}, ':zero': 0 },
    });
  }

  async read(storeId: string): Promise<DispatchItem | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { [KEY]: storeId }, ConsistentRead: true }),
    );
    return this.parse(out.Item);
  }

  async recordEnqueued(storeId: string, count: number, now: number): Promise<DispatchItem> {
    return this.unconditional(storeId, {
      update: `SET ${INIT}, ${ACTIVATE} ADD enqSeq :n`,
      values: { ':empty': {}, ':zero': 0, ':n': count, ':shard': activeShardOf(storeId), ':now': now },
    });
  }

  async beginEnqueue(storeId: string, count: number, now: number, until: number): Promise<DispatchItem> {
    return this.unconditional(storeId, {
      update: `SET ${INIT}, ${ACTIVATE}, ingestUntil = :until ADD enqSeq :n, ingesting :one`,
      values: {
        ':empty': {},
        ':zero': 0,
        ':n': count,
        ':one': 1,
        ':until': until,
        ':shard': activeShardOf(storeId),
        ':now': now,
      },
    });
  }

  async endEnqueue(storeId: string): Promise<DispatchItem> {
    return this.unconditional(storeId, {
      update: `SET ${INIT} ADD ingesting :minus, enqSeq :one`,
      values: { ':empty': {}, ':zero': 0, ':minus': -1, ':one': 1 },
    });
  }

  /**
   * A slot-adding write whose refusal found the very slot it writes had applied: the SDK retried it after losing its
   * answer (a timeout), and the retry's condition failed on the write's own result. Slot ids are unique and nothing
   * leases a slot before its attention is out, so only this write can have put that slot there. Taken as refused,
   * the ingest would end twice and publish nothing (the slot left to the reconciler's resend).
   */
  private async addingSlot(
    storeId: string,
    slotId: string,
    slot: Slot,
    input: Parameters<DynamoDispatchState['update']>[1],
  ): Promise<Conditional> {
    const result = await this.update(storeId, input);
    if (!result.ok && result.current !== undefined && sameAsWritten(result.current.slots[slotId], slot))
      return { ok: true, item: result.current };
    return result;
  }

  endEnqueueIssuing(storeId: string, slotId: string, dueAt: number, now: number): Promise<Conditional> {
    const slot: Slot = { s: 'q', at: dueAt };
    return this.addingSlot(storeId, slotId, slot, {
      update: `SET slots.#id = :slot, ${ACTIVATE} ADD ingesting :minus, enqSeq :one`,
      condition: 'attribute_exists(slots) AND size(slots) < :one',
      names: { '#id': slotId },
      values: {
        ':slot': slot,
        ':minus': -1,
        ':one': 1,
        ':shard': activeShardOf(storeId),
        ':now': now,
      },
    });
  }

  issueSlot(
    storeId: string,
    slotId: string,
    dueAt: number,
    limit: number,
    now: number,
    by?: LeaseRef,
  ): Promise<Conditional> {
    const slot: Slot = { s: 'q', at: dueAt };
    return this.addingSlot(storeId, slotId, slot, {
      update: `SET slots.#id = :slot, ${ACTIVATE}`,
      // A fan-out's slot only while its issuer holds its lease: slots beyond the first come from live leases.
      condition:
        'attribute_exists(slots) AND size(slots) < :limit' +
        (by ? ' AND slots.#by.#s = :l AND slots.#by.#f = :fence' : ''),
      names: { '#id': slotId, ...(by ? { '#by': by.slotId } : {}) },
      values: {
        ':slot': slot,
        ':limit': limit,
        ':shard': activeShardOf(storeId),
        ':now': now,
        ...(by ? { ':l': 'l', ':fence': by.fence } : {}),
      },
    });
  }

  acquire(
    storeId: string,
    slotId: string,
    opts: { now: number; expiresAt: number; max: number },
  ): Promise<Conditional> {
    return this.update(storeId, {
      update:
        'SET slots.#id.#s = :l, slots.#id.#at = :exp, slots.#id.#f = fence + :one, fence = fence + :one',
      condition: `${isQueued} AND slots.#id.#at <= :due AND size(slots) <= :max`,
      names: { '#id': slotId },
      values: {
        ':q': 'q',
        ':l': 'l',
        ':exp': opts.expiresAt,
        ':one': 1,
        ':due': opts.now + CLOCK_SKEW_MS,
        ':max': opts.max,
      },
    });
  }

  requeue(storeId: string, slotId: string, fence: number, opts: RequeueOptions): Promise<Conditional> {
    const slot: Slot = {
      s: 'q',
      at: opts.dueAt,
      n: opts.nextCallAt,
      ...(opts.errorStreak ? { e: opts.errorStreak } : {}),
    };
    const sets =
      (opts.headSentAt === undefined ? '' : ', headSentAt = :head') +
      (opts.tat === undefined ? '' : ', tat = :tat, tatLate = :zeroLate');
    // A hand-off to the confirm queue is not a republished attention (the per-store measures count turns).
    const counts =
      opts.handoff === true ? '' : ` ADD nRepublished :one${opts.throttled ? ', nThrottled :one' : ''}`;
    return this.update(storeId, {
      update: `SET slots.#id = :slot${sets}${counts}`,
      condition: `${isMyLease} AND size(slots) <= :max`,
      names: { '#id': slotId },
      values: {
        ':slot': slot,
        ':l': 'l',
        ':fence': fence,
        ':max': opts.max,
        ...(opts.handoff === true ? {} : { ':one': 1 }),
        ...(opts.headSentAt === undefined ? {} : { ':head': opts.headSentAt }),
        ...(opts.tat === undefined ? {} : { ':tat': opts.tat, ':zeroLate': 0 }),
      },
    });
  }

  release(storeId: string, slotId: string, fence: number, tat?: number): Promise<Conditional> {
    return this.update(storeId, {
      update: `REMOVE slots.#id${tat === undefined ? '' : ' SET tat = :tat, tatLate = :zeroLate'}`,
      // Never the last slot: that one leaves through markIdle, which checks enqSeq and wakeAt.
      condition: `${isMyLease} AND size(slots) > :one`,
      names: { '#id': slotId },
      values: {
        ':l': 'l',
        ':fence': fence,
        ':one': 1,
        ...(tat === undefined ? {} : { ':tat': tat, ':zeroLate': 0 }),
      },
    });
  }

  markIdle(
    storeId: string,
    slotId: string,
    fence: number,
    opts: { seenSeq: number; now: number; tat?: number; drainMs?: number },
  ): Promise<Conditional> {
    const sets = [
      'idleSeq = :seen',
      'lastIdleAt = :now',
      ...(opts.tat === undefined ? [] : ['tat = :tat', 'tatLate = :zeroLate']),
      ...(opts.drainMs === undefined ? [] : ['lastDrainMs = :drain']),
    ];
    return this.update(storeId, {
      update: `REMOVE slots.#id, activeShard, activeSince, headSentAt, refreshedAt, ingesting, ingestUntil SET ${sets.join(', ')}`,
      condition:
        `${isMyLease} AND enqSeq = :seen AND size(slots) = :one AND ` +
        '(attribute_not_exists(wakeAt) OR wakeAt <= :now) AND attribute_not_exists(redriveAt) AND ' +
        '(attribute_not_exists(ingesting) OR ingesting <= :zero OR ingestUntil <= :now)',
      names: { '#id': slotId },
      values: {
        ':l': 'l',
        ':fence': fence,
        ':seen': opts.seenSeq,
        ':one': 1,
        ':zero': 0,
        ':now': opts.now,
        ...(opts.tat === undefined ? {} : { ':tat': opts.tat, ':zeroLate': 0 }),
        ...(opts.drainMs === undefined ? {} : { ':drain': opts.drainMs }),
      },
    });
  }

  async holdTat(storeId: string, until: number): Promise<void> {
    // The schedule may already reach past `until`, which holds the store as long — unless a block reserved before
    // the hold gives its tail back: moving `tatSeq` on then makes that give-back fail (simulation seed 3253787,
    // once the look at the instant gave back the instant it stood at). A second write, only when the hold lands
    // inside the schedule; conditional on it still reaching past `until` (a give-back between the two lowers it:
    // raise it again).
    for (let tries = 0; tries < 3; tries++) {
      const raised = await this.update(storeId, {
        update: 'SET tat = :until ADD tatSeq :one',
        condition: 'attribute_exists(slots) AND (attribute_not_exists(tat) OR tat < :until)',
        values: { ':until': until, ':one': 1 },
      });
      if (raised.ok || raised.current?.tat === undefined) return;
      const marked = await this.update(storeId, {
        update: 'ADD tatSeq :one',
        condition: 'attribute_exists(slots) AND tat >= :until',
        values: { ':until': until, ':one': 1 },
      });
      if (marked.ok) return;
    }
  }

  async restartTat(
    storeId: string,
    now: number,
    intervalMs: number,
    calls: number,
    late?: number,
  ): Promise<TatReservation | undefined> {
    const result = await this.update(storeId, {
      update: `SET tat = :next${late === undefined ? '' : ', tatLate = :late'} ADD tatSeq :one, tatCalls :calls`,
      condition:
        late === undefined
          ? 'attribute_not_exists(tat) OR tat <= :now'
          : `attribute_not_exists(tat) OR (tat <= :now AND ${anyOf([...lateFits(late), 'tat <= :clear'])})`,
      values: {
        ':next': now + intervalMs,
        ':now': now,
        ':one': 1,
        ':calls': calls,
        ...(late === undefined ? {} : { ':late': late, ':clear': now - (LATENESS_REACH_MS - late) }),
      },
    });
    if (!result.ok) return undefined;
    return reservationOf(result.item, now + intervalMs);
  }

  async placeTat(
    storeId: string,
    seen: { tat: number; seq?: number },
    first: number,
    intervalMs: number,
    calls: number,
    late: number,
  ): Promise<TatReservation | undefined> {
    const result = await this.update(storeId, {
      update: 'SET tat = :next, tatLate = :late ADD tatSeq :one, tatCalls :calls',
      condition: `tat = :tat AND ${seen.seq === undefined ? 'attribute_not_exists(tatSeq)' : 'tatSeq = :seq'}`,
      values: {
        ':next': first + intervalMs,
        ':late': late,
        ':one': 1,
        ':calls': calls,
        ':tat': seen.tat,
        ...(seen.seq === undefined ? {} : { ':seq': seen.seq }),
      },
    });
    if (!result.ok) return undefined;
    return reservationOf(result.item, first + intervalMs);
  }

  async returnTat(
    storeId: string,
    reservation: { tat: number; seq: number },
    intervalMs: number,
    calls: number,
  ): Promise<boolean> {
    const result = await this.update(storeId, {
      // Bumps tatSeq too: a retried give-back whose first attempt landed cannot give the instant back twice.
      update: 'SET tat = :back ADD tatSeq :one, tatCalls :unreserved',
      condition: 'tat = :tat AND tatSeq = :seq',
      values: {
        ':back': reservation.tat - intervalMs,
        ':tat': reservation.tat,
        ':seq': reservation.seq,
        ':one': 1,
        ':unreserved': -calls,
      },
    });
    return result.ok;
  }

  async advanceTat(
    storeId: string,
    intervalMs: number,
    calls: number,
    late?: TatLate,
  ): Promise<TatReservation> {
    if (late !== undefined) {
      // Conditional on the last block's lateness: refused, the answer is the schedule as it stood (ALL_OLD, free).
      const fits = lateFits(late.ms);
      const condition =
        late.deepFrom === undefined
          ? ['attribute_not_exists(tat)', ...fits].join(' OR ')
          : `attribute_not_exists(tat) OR (${anyOf(fits)} AND ${anyOf([...noRaise(late.ms), 'tat <= :deep'])})`;
      const result = await this.update(storeId, {
        update: 'SET tatLate = :late ADD tat :interval, tatSeq :one, tatCalls :calls',
        condition,
        values: {
          ':late': late.ms,
          ':interval': intervalMs,
          ':one': 1,
          ':calls': calls,
          ...(late.deepFrom === undefined ? {} : { ':deep': late.deepFrom }),
        },
      });
      if (result.ok) return reservationOf(result.item, intervalMs);
      const current = result.current;
      return {
        tat: current?.tat ?? 0,
        ...(current?.tatSeq === undefined ? {} : { seq: current.tatSeq }),
        refused: current?.tatLate === undefined ? {} : { late: current.tatLate },
      };
    }
    // Unconditional ADD: every consumer of the store gets its own instant, with no lost races to retry. ALL_NEW
    // (no extra capacity: returned values are free) also hands it the store's learnt rate.
    const out = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [KEY]: storeId },
        UpdateExpression: 'ADD tat :interval, tatSeq :one, tatCalls :calls',
        ExpressionAttributeValues: { ':interval': intervalMs, ':one': 1, ':calls': calls },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const tat = Number(out.Attributes?.['tat'] ?? intervalMs);
    const seq = Number(out.Attributes?.['tatSeq'] ?? 1);
    const reserved = { tat, seq, calls: Number(out.Attributes?.['tatCalls'] ?? calls) };
    const rate = RateStateSchema.safeParse(out.Attributes?.['rate']);
    return rate.success ? { ...reserved, rate: rate.data } : reserved;
  }

  noteRate(storeId: string, next: RateState, seenAt: number | undefined): Promise<Conditional> {
    return this.update(storeId, {
      update: 'SET #rate = :rate',
      // Compare-and-set on the state the caller saw: a change another consumer made first wins.
      condition:
        seenAt === undefined
          ? 'attribute_exists(slots) AND attribute_not_exists(#rate)'
          : 'attribute_exists(slots) AND #rate.#at = :seen',
      names: { '#rate': 'rate' },
      values: { ':rate': next, ...(seenAt === undefined ? {} : { ':seen': seenAt }) },
    });
  }

  dropQueued(storeId: string, slotId: string, ifOver?: number): Promise<Conditional> {
    return this.update(storeId, {
      update: `REMOVE slots.#id ADD nDiscarded :one${ifOver === undefined ? '' : ', nLeaseBlocked :one'}`,
      condition: ifOver === undefined ? isQueued : `${isQueued} AND size(slots) > :over`,
      names: { '#id': slotId },
      values: { ':q': 'q', ':one': 1, ...(ifOver === undefined ? {} : { ':over': ifOver }) },
    });
  }

  async noteDiscarded(storeId: string): Promise<void> {
    // Conditional only so that a store removed meanwhile is not recreated as a bare counter.
    await this.update(storeId, {
      update: 'ADD nDiscarded :one',
      condition: 'attribute_exists(slots)',
      values: { ':one': 1 },
    });
  }

  async raiseRefreshed(storeId: string, at: number, seen: number | undefined): Promise<boolean> {
    const result = await this.update(storeId, {
      update: 'SET refreshedAt = :at',
      condition: `attribute_exists(activeShard) AND ${seen === undefined ? 'attribute_not_exists(refreshedAt)' : 'refreshedAt = :seen'}`,
      values: { ':at': at, ...(seen === undefined ? {} : { ':seen': seen }) },
    });
    return result.ok;
  }

  async lowerRefreshed(storeId: string): Promise<void> {
    await this.update(storeId, { update: 'SET refreshedAt = :zero', values: { ':zero': 0 } });
  }

  async deferWake(storeId: string, until: number): Promise<void> {
    // Losing the condition means a later wake is already recorded, which covers this one.
    await this.update(storeId, {
      update: 'SET wakeAt = :until',
      condition: 'attribute_not_exists(wakeAt) OR wakeAt < :until',
      values: { ':until': until },
    });
  }

  reclaim(storeId: string, slotId: string, fence: number, dueAt: number): Promise<Conditional> {
    const slot: Slot = { s: 'q', at: dueAt };
    return this.update(storeId, {
      update: 'SET slots.#id = :slot',
      condition: isMyLease,
      names: { '#id': slotId },
      values: { ':slot': slot, ':l': 'l', ':fence': fence },
    });
  }

  noteResend(storeId: string, slotId: string, resends: number, at: number): Promise<Conditional> {
    return this.update(storeId, {
      update: 'SET slots.#id.#r = :next ADD nResent :one',
      // A slot never re-announced has no `r`; after that it must still be at the count the caller saw. And at
      // the due time the caller saw: a slot re-queued since has its own attention.
      condition:
        resends === 0
          ? `${isQueued} AND slots.#id.#at = :at AND attribute_not_exists(slots.#id.#r)`
          : `${isQueued} AND slots.#id.#at = :at AND slots.#id.#r = :r`,
      names: { '#id': slotId },
      values: {
        ':q': 'q',
        ':at': at,
        ':next': resends + 1,
        ':one': 1,
        ...(resends === 0 ? {} : { ':r': resends }),
      },
    });
  }

  async markActive(storeId: string, now: number, wakeAt?: number): Promise<void> {
    await this.update(storeId, {
      update: `SET ${INIT}, enqSeq = if_not_exists(enqSeq, :zero), ${ACTIVATE}`,
      values: { ':empty': {}, ':zero': 0, ':shard': activeShardOf(storeId), ':now': now },
    });
    if (wakeAt !== undefined) await this.deferWake(storeId, wakeAt);
  }

  async beginRedrive(storeId: string, now: number): Promise<void> {
    await this.update(storeId, {
      // The retention bound stays: a message move sends each message anew (new id, new enqueue time, its
      // retention restarted — SQS developer guide, dead-letter queue redrive), so nothing it moves is older.
      update: `SET ${INIT}, enqSeq = if_not_exists(enqSeq, :zero), ${ACTIVATE}, redriveAt = :now`,
      values: { ':empty': {}, ':zero': 0, ':shard': activeShardOf(storeId), ':now': now },
    });
  }

  endRedrive(storeId: string, startedAt: number): Promise<Conditional> {
    // Only the move the caller looked at: a redrive begun since keeps its own mark.
    return this.update(storeId, {
      update: 'REMOVE redriveAt',
      condition: 'redriveAt = :at',
      values: { ':at': startedAt },
    });
  }

  async listActive(
    shard: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }> {
    const start = decodeCursor(cursor);
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: Tables.dispatch.activeIndex,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': Tables.dispatch.activeIndexPartitionKey },
        ExpressionAttributeValues: { ':shard': shard },
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = encodeCursor(out.LastEvaluatedKey);
    return {
      storeIds: (out.Items ?? []).map((item) => String(item[KEY])),
      ...(next ? { cursor: next } : {}),
    };
  }

  async listUnindexed(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }> {
    const start = decodeCursor(cursor);
    const out = await this.doc.send(
      new ScanCommand({
        TableName: this.tableName,
        // Limit counts the items read, before the filter: a page may hold none and still have a next one.
        Limit: limit,
        // An item the older code activated a moment ago must not be missed by a pass meant to find it.
        ConsistentRead: true,
        FilterExpression: 'attribute_exists(#shard) AND attribute_not_exists(#head)',
        ProjectionExpression: '#key',
        ExpressionAttributeNames: {
          '#key': KEY,
          '#shard': Tables.dispatch.activeIndexPartitionKey,
          '#head': Tables.dispatch.activeIndexSortKey,
        },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = encodeCursor(out.LastEvaluatedKey);
    return {
      storeIds: (out.Items ?? []).map((item) => String(item[KEY])),
      ...(next ? { cursor: next } : {}),
    };
  }

  indexActive(storeId: string, now: number): Promise<Conditional> {
    // Only an item still marked active and still without the key: one marked idle since stays idle. Its
    // activation time is its oldest task's bound (as at any activation), so the listing shows its true age.
    return this.update(storeId, {
      update: 'SET headSentAt = if_not_exists(activeSince, :now)',
      condition: 'attribute_exists(activeShard) AND attribute_not_exists(headSentAt)',
      values: { ':now': now },
    });
  }

  async readCursor(id: string): Promise<string | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { [KEY]: id } }));
    const cursor = out.Item?.['cursor'];
    return typeof cursor === 'string' ? cursor : undefined;
  }

  async writeCursor(id: string, cursor: string | undefined): Promise<void> {
    await this.doc.send(
      new PutCommand({ TableName: this.tableName, Item: { [KEY]: id, ...(cursor ? { cursor } : {}) } }),
    );
  }
}

/** Kept for importers that predate dynamo-cursor.ts. */
export { encodeCursor, decodeCursor } from './dynamo-cursor.js';
