import {
  BatchWriteCommand,
  GetCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { deliveryKey, entityVersionKey, Tables } from '../core/names.js';
import { deliveredRecord } from '../core/delivered-settle.js';
import {
  DELIVERY_STATUSES,
  type Claim,
  type DeliveredSettle,
  type DeliveryLog,
  type DeliveryRecord,
} from '../core/ports.js';
import { DELIVERY_RECORD_TTL_SECONDS } from '../config/topology.js';
import { conditional } from './dynamo-conditional.js';

const DeliveryRecordSchema = z.object({
  storeId: z.string(),
  eventId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().optional(),
  lastError: z.string().optional(),
  lastStatus: z.number().optional(),
  firstAttemptAt: z.number().optional(),
  lastAttemptAt: z.number().optional(),
  holder: z.string().optional(),
  claimUntil: z.number().optional(),
  deadMessageId: z.string().optional(),
  retryAt: z.number().optional(),
  deadAttempts: z.number().optional(),
  updatedAt: z.number(),
});

/** The port's own parameter types, so this adapter cannot drift from them. */
type ClaimOptions = Parameters<DeliveryLog['claim']>[2];
type SettleOutcome = Parameters<DeliveryLog['settle']>[3];

const KEY = Tables.deliveries.partitionKey;
const TTL = Tables.deliveries.ttlAttribute;
const expiry = (now: number): number => Math.floor(now / 1000) + DELIVERY_RECORD_TTL_SECONDS;

/**
 * Effect-once records in DynamoDB, written by hand rather than with Powertools' idempotency utility: a
 * task needs more states than "in progress / completed" (dead-lettered and redriven, stale, attempts and
 * errors for the status route), its in-progress claim must expire with the marketplace call rather than
 * with the Lambda invocation (one invocation runs a whole slice), and the per-entity version check shares
 * the table. Each transition is one conditional write, but `delivered`: a receive batch's are one
 * BatchWriteItem of whole items (docs/ARCHITECTURE.md, "Batched delivered settles").
 */
export class DynamoDeliveryLog implements DeliveryLog {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private parse(item: Record<string, unknown> | undefined): DeliveryRecord | undefined {
    return item ? DeliveryRecordSchema.parse(item) : undefined;
  }

  async get(storeId: string, eventId: string): Promise<DeliveryRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [KEY]: deliveryKey(storeId, eventId) },
        ConsistentRead: true,
      }),
    );
    return this.parse(out.Item);
  }

  async claim(storeId: string, eventId: string, opts: ClaimOptions): Promise<Claim> {
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [KEY]: deliveryKey(storeId, eventId) },
          UpdateExpression:
            'SET storeId = :store, eventId = :event, #status = :processing, holder = :holder, claimUntil = :until, ' +
            'firstAttemptAt = if_not_exists(firstAttemptAt, :now), lastAttemptAt = :now, updatedAt = :now, #ttl = :ttl ' +
            'REMOVE deadMessageId, retryAt',
          // Free: never tried, retrying (once a task-scope 429's Retry-After has ended), dead-lettered and now
          // redriven (another message than the one that was dead-lettered: that one is an original whose delete
          // was lost), or a crashed attempt's claim expired.
          ConditionExpression:
            'attribute_not_exists(#key) OR ' +
            '(#status = :pending AND (attribute_not_exists(retryAt) OR retryAt <= :now)) OR ' +
            '(#status = :dead AND (attribute_not_exists(deadMessageId) OR deadMessageId <> :message)) OR ' +
            '(#status = :processing AND claimUntil < :now)',
          ExpressionAttributeNames: { '#key': KEY, '#status': 'status', '#ttl': TTL },
          ExpressionAttributeValues: {
            ':store': storeId,
            ':event': eventId,
            ':processing': 'processing',
            ':pending': 'pending',
            ':dead': 'dead_lettered',
            ':holder': opts.holder,
            ':until': opts.until,
            ':message': opts.messageId,
            ':now': opts.now,
            ':ttl': expiry(opts.now),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (result.ok) return { ok: true, record: this.parse(result.value.Attributes) as DeliveryRecord };
    return { ok: false, record: this.parse(result.current) };
  }

  async settle(storeId: string, eventId: string, holder: string, outcome: SettleOutcome): Promise<boolean> {
    const sets = ['#status = :status', 'updatedAt = :now', '#ttl = :ttl'];
    const values: Record<string, unknown> = {
      ':status': outcome.status,
      ':now': outcome.now,
      ':ttl': expiry(outcome.now),
      ':holder': holder,
      ...(outcome.countAttempt ? { ':one': 1 } : {}),
    };
    /** One optional `SET attribute = placeholder`, written only with a value. */
    const set = (attribute: string, placeholder: string, value: unknown): void => {
      if (value === undefined) return;
      sets.push(`${attribute} = ${placeholder}`);
      values[placeholder] = value;
    };
    set('lastError', ':error', outcome.lastError);
    set('lastStatus', ':lastStatus', outcome.lastStatus);
    if (outcome.status === 'pending') set('retryAt', ':retryAt', outcome.retryAt);
    if (outcome.status === 'dead_lettered') {
      set('deadMessageId', ':message', outcome.messageId);
      set('deadAttempts', ':deadAttempts', outcome.deadAttempts);
    }
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [KEY]: deliveryKey(storeId, eventId) },
          UpdateExpression: `SET ${sets.join(', ')} REMOVE holder, claimUntil${outcome.countAttempt ? ' ADD attempts :one' : ''}`,
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeNames: { '#status': 'status', '#ttl': TTL },
          ExpressionAttributeValues: values,
        }),
      ),
    );
    return result.ok;
  }

  async settleDelivered(settles: DeliveredSettle[]): Promise<DeliveredSettle[]> {
    // One item per key (a batch may not name a key twice): two 2xx for one task are one `delivered`.
    const byKey = new Map<string, DeliveredSettle[]>();
    for (const settle of settles) {
      const key = deliveryKey(settle.storeId, settle.eventId);
      byKey.set(key, [...(byKey.get(key) ?? []), settle]);
    }
    const out = await this.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [this.tableName]: [...byKey].map(([key, same]) => {
            const settle = same[same.length - 1] as DeliveredSettle;
            return {
              PutRequest: { Item: { ...deliveredRecord(settle), [KEY]: key, [TTL]: expiry(settle.now) } },
            };
          }),
        },
      }),
    );
    // DynamoDB answers with the requests it did not apply (throttling, partition limits): the caller retries them.
    const unprocessed = out.UnprocessedItems?.[this.tableName] ?? [];
    return unprocessed.flatMap((request) => byKey.get(String(request.PutRequest?.Item?.[KEY])) ?? []);
  }

  async markVersion(
    storeId: string,
    entityId: string,
    version: number,
    now: number,
  ): Promise<{ ok: true } | { ok: false; current: number }> {
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [KEY]: entityVersionKey(storeId, entityId) },
          UpdateExpression: 'SET version = :v, updatedAt = :now, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(version) OR version <= :v',
          ExpressionAttributeNames: { '#ttl': TTL },
          ExpressionAttributeValues: { ':v': version, ':now': now, ':ttl': expiry(now) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (result.ok) return { ok: true };
    const current = result.current?.['version'];
    if (typeof current !== 'number')
      throw new Error(`version mark of ${storeId}/${entityId} refused without one`);
    return { ok: false, current };
  }

  async deliveredVersion(storeId: string, entityId: string): Promise<number | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [KEY]: entityVersionKey(storeId, entityId) },
        ConsistentRead: true,
      }),
    );
    const version = out.Item?.['version'];
    return typeof version === 'number' ? version : undefined;
  }
}
