import { deliveryKey, entityVersionKey } from '../../lambdas/core/names.js';
import { deliveredRecord } from '../../lambdas/core/delivered-settle.js';
import type { Claim, DeliveredSettle, DeliveryLog, DeliveryRecord } from '../../lambdas/core/ports.js';

/** The port's own parameter types, so this fake cannot drift from them. */
type ClaimOptions = Parameters<DeliveryLog['claim']>[2];
type SettleOutcome = Parameters<DeliveryLog['settle']>[3];

/**
 * Effect-once records in memory, with the DynamoDB adapter's conditions; test/support/delivery-scenarios.ts
 * runs one scenario table against both.
 */
export class MemoryDeliveryLog implements DeliveryLog {
  readonly records = new Map<string, DeliveryRecord>();
  readonly versions = new Map<string, number>();
  /**
   * Which of a settleDelivered call's items DynamoDB leaves unprocessed (not written, answered back), as
   * BatchWriteItem may under throttling; none unless a test or the simulation says so.
   */
  unprocessed: (settle: DeliveredSettle) => boolean = () => false;

  async get(storeId: string, eventId: string): Promise<DeliveryRecord | undefined> {
    const record = this.records.get(deliveryKey(storeId, eventId));
    return record ? { ...record } : undefined;
  }

  async claim(storeId: string, eventId: string, opts: ClaimOptions): Promise<Claim> {
    const key = deliveryKey(storeId, eventId);
    const current = this.records.get(key);
    const free =
      !current ||
      (current.status === 'pending' && (current.retryAt ?? 0) <= opts.now) ||
      (current.status === 'dead_lettered' && current.deadMessageId !== opts.messageId) ||
      (current.status === 'processing' && (current.claimUntil ?? 0) < opts.now);
    if (!free) return { ok: false, record: current ? { ...current } : undefined };
    const { deadMessageId: _dead, retryAt: _retryAt, ...kept } = current ?? ({} as Partial<DeliveryRecord>);
    const next: DeliveryRecord = {
      ...kept,
      storeId,
      eventId,
      status: 'processing',
      holder: opts.holder,
      claimUntil: opts.until,
      firstAttemptAt: current?.firstAttemptAt ?? opts.now,
      lastAttemptAt: opts.now,
      updatedAt: opts.now,
    };
    this.records.set(key, next);
    return { ok: true, record: { ...next } };
  }

  async settle(storeId: string, eventId: string, holder: string, outcome: SettleOutcome): Promise<boolean> {
    const key = deliveryKey(storeId, eventId);
    const current = this.records.get(key);
    if (!current || current.holder !== holder) return false;
    const { holder: _h, claimUntil: _c, ...rest } = current;
    this.records.set(key, {
      ...rest,
      status: outcome.status,
      updatedAt: outcome.now,
      ...(outcome.countAttempt ? { attempts: (current.attempts ?? 0) + 1 } : {}),
      ...(outcome.lastError === undefined ? {} : { lastError: outcome.lastError }),
      ...(outcome.lastStatus === undefined ? {} : { lastStatus: outcome.lastStatus }),
      ...(outcome.status === 'pending' && outcome.retryAt !== undefined ? { retryAt: outcome.retryAt } : {}),
      ...(outcome.status === 'dead_lettered'
        ? {
            ...(outcome.messageId === undefined ? {} : { deadMessageId: outcome.messageId }),
            ...(outcome.deadAttempts === undefined ? {} : { deadAttempts: outcome.deadAttempts }),
          }
        : {}),
    });
    return true;
  }

  /** As BatchWriteItem of PutRequests: each item replaced whole, unconditionally; not atomic across items. */
  async settleDelivered(settles: DeliveredSettle[]): Promise<DeliveredSettle[]> {
    const left: DeliveredSettle[] = [];
    for (const settle of settles) {
      if (this.unprocessed(settle)) left.push(settle);
      else this.records.set(deliveryKey(settle.storeId, settle.eventId), deliveredRecord(settle));
    }
    return left;
  }

  async markVersion(
    storeId: string,
    entityId: string,
    version: number,
  ): Promise<{ ok: true } | { ok: false; current: number }> {
    const current = this.versions.get(entityVersionKey(storeId, entityId));
    if (current !== undefined && current > version) return { ok: false, current };
    this.raiseVersion(storeId, entityId, version);
    return { ok: true };
  }

  async deliveredVersion(storeId: string, entityId: string): Promise<number | undefined> {
    return this.versions.get(entityVersionKey(storeId, entityId));
  }

  /** Raise an entity's delivered version (never lowers it); tests seed versions with it. */
  raiseVersion(storeId: string, entityId: string, version: number): void {
    const key = entityVersionKey(storeId, entityId);
    if ((this.versions.get(key) ?? -1) < version) this.versions.set(key, version);
  }
}
