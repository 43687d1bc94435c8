import { DispatchItemSchema, type DispatchItem, type Slot } from '../../lambdas/core/dispatch-model.js';
import { activeShardOf } from '../../lambdas/core/names.js';
import type { RateState } from '../../lambdas/core/adaptive-rate.js';
import type {
  Conditional,
  DispatchState,
  LeaseRef,
  RequeueOptions,
  RetentionMarks,
  TatLate,
  TatReservation,
} from '../../lambdas/core/ports.js';
import { CLOCK_SKEW_MS } from '../../lambdas/core/timing.js';
import { LATENESS_CEILING_MS, LATENESS_REACH_MS } from '../../lambdas/core/rate.js';

/**
 * The dispatch state in memory, with the same conditions as the DynamoDB adapter, for unit tests of the
 * core and for simulation. `test/integration/dispatch-state-contract.test.ts` runs one scenario table
 * against both implementations so they cannot drift.
 */
export class MemoryDispatchState implements DispatchState, RetentionMarks {
  readonly items = new Map<string, DispatchItem>();
  private readonly cursors = new Map<string, string>();

  private clone(item: DispatchItem | undefined): DispatchItem | undefined {
    return item ? (structuredClone(item) as DispatchItem) : undefined;
  }

  private write(
    storeId: string,
    guard: (item: DispatchItem | undefined) => boolean,
    change: (item: DispatchItem) => void,
  ): Conditional {
    const current = this.items.get(storeId);
    if (!guard(current)) return { ok: false, current: this.clone(current) };
    const next = this.clone(current) ?? DispatchItemSchema.parse({ storeId });
    change(next);
    this.items.set(storeId, next);
    return { ok: true, item: this.clone(next) as DispatchItem };
  }

  private activate(item: DispatchItem, now: number): void {
    item.activeShard ??= activeShardOf(item.storeId);
    item.activeSince ??= now;
    item.headSentAt ??= now;
  }

  private static add(
    item: DispatchItem,
    counter: 'nRepublished' | 'nResent' | 'nDiscarded' | 'nLeaseBlocked' | 'nThrottled',
  ): void {
    item[counter] = (item[counter] ?? 0) + 1;
  }

  private static slotCount(item: DispatchItem | undefined): number {
    return Object.keys(item?.slots ?? {}).length;
  }

  private static lease(item: DispatchItem | undefined, slotId: string, fence: number): boolean {
    const slot = item?.slots[slotId];
    return slot?.s === 'l' && slot.f === fence;
  }

  async ensure(storeId: string): Promise<void> {
    this.write(
      storeId,
      () => true,
      () => undefined,
    );
  }
  async read(storeId: string): Promise<DispatchItem | undefined> {
    return this.clone(this.items.get(storeId));
  }
  async recordEnqueued(storeId: string, count: number, now: number): Promise<DispatchItem> {
    const result = this.write(
      storeId,
      () => true,
      (item) => {
        item.enqSeq += count;
        this.activate(item, now);
      },
    );
    return (result as { item: DispatchItem }).item;
  }
  async beginEnqueue(storeId: string, count: number, now: number, until: number): Promise<DispatchItem> {
    const result = this.write(
      storeId,
      () => true,
      (item) => {
        item.enqSeq += count;
        item.ingesting = (item.ingesting ?? 0) + 1;
        item.ingestUntil = until;
        this.activate(item, now);
      },
    );
    return (result as { item: DispatchItem }).item;
  }
  async endEnqueue(storeId: string): Promise<DispatchItem> {
    const result = this.write(
      storeId,
      () => true,
      (item) => {
        item.ingesting = (item.ingesting ?? 0) - 1;
        item.enqSeq += 1;
      },
    );
    return (result as { item: DispatchItem }).item;
  }
  async endEnqueueIssuing(storeId: string, slotId: string, dueAt: number, now: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => item !== undefined && MemoryDispatchState.slotCount(item) < 1,
      (item) => {
        item.ingesting = (item.ingesting ?? 0) - 1;
        item.enqSeq += 1;
        item.slots[slotId] = { s: 'q', at: dueAt };
        this.activate(item, now);
      },
    );
  }
  async issueSlot(
    storeId: string,
    slotId: string,
    dueAt: number,
    limit: number,
    now: number,
    by?: LeaseRef,
  ): Promise<Conditional> {
    return this.write(
      storeId,
      (item) =>
        item !== undefined &&
        MemoryDispatchState.slotCount(item) < limit &&
        (by === undefined || MemoryDispatchState.lease(item, by.slotId, by.fence)),
      (item) => {
        item.slots[slotId] = { s: 'q', at: dueAt };
        this.activate(item, now);
      },
    );
  }
  async acquire(
    storeId: string,
    slotId: string,
    opts: { now: number; expiresAt: number; max: number },
  ): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => {
        const slot = item?.slots[slotId];
        return (
          slot?.s === 'q' &&
          slot.at <= opts.now + CLOCK_SKEW_MS &&
          MemoryDispatchState.slotCount(item) <= opts.max
        );
      },
      (item) => {
        const old = item.slots[slotId] as Slot;
        item.fence += 1;
        item.slots[slotId] = {
          s: 'l',
          at: opts.expiresAt,
          f: item.fence,
          ...(old.n === undefined ? {} : { n: old.n }),
          ...(old.e === undefined ? {} : { e: old.e }),
        };
      },
    );
  }
  async requeue(storeId: string, slotId: string, fence: number, opts: RequeueOptions): Promise<Conditional> {
    return this.write(
      storeId,
      (item) =>
        MemoryDispatchState.lease(item, slotId, fence) && MemoryDispatchState.slotCount(item) <= opts.max,
      (item) => {
        item.slots[slotId] = {
          s: 'q',
          at: opts.dueAt,
          n: opts.nextCallAt,
          ...(opts.errorStreak ? { e: opts.errorStreak } : {}),
        };
        if (opts.headSentAt !== undefined) item.headSentAt = opts.headSentAt;
        if (opts.tat !== undefined) {
          item.tat = opts.tat;
          item.tatLate = 0;
        }
        if (opts.handoff !== true) {
          MemoryDispatchState.add(item, 'nRepublished');
          if (opts.throttled) MemoryDispatchState.add(item, 'nThrottled');
        }
      },
    );
  }
  async release(storeId: string, slotId: string, fence: number, tat?: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => MemoryDispatchState.lease(item, slotId, fence) && MemoryDispatchState.slotCount(item) > 1,
      (item) => {
        delete item.slots[slotId];
        if (tat !== undefined) {
          item.tat = tat;
          item.tatLate = 0;
        }
      },
    );
  }
  async markIdle(
    storeId: string,
    slotId: string,
    fence: number,
    opts: { seenSeq: number; now: number; tat?: number; drainMs?: number },
  ): Promise<Conditional> {
    return this.write(
      storeId,
      (item) =>
        MemoryDispatchState.lease(item, slotId, fence) &&
        item?.enqSeq === opts.seenSeq &&
        MemoryDispatchState.slotCount(item) === 1 &&
        (item.wakeAt === undefined || item.wakeAt <= opts.now) &&
        item.redriveAt === undefined &&
        ((item.ingesting ?? 0) <= 0 || (item.ingestUntil ?? 0) <= opts.now),
      (item) => {
        delete item.slots[slotId];
        delete item.activeShard;
        delete item.activeSince;
        delete item.headSentAt;
        delete item.refreshedAt;
        delete item.ingesting;
        delete item.ingestUntil;
        item.idleSeq = opts.seenSeq;
        item.lastIdleAt = opts.now;
        if (opts.tat !== undefined) {
          item.tat = opts.tat;
          item.tatLate = 0;
        }
        if (opts.drainMs !== undefined) item.lastDrainMs = opts.drainMs;
      },
    );
  }
  async holdTat(storeId: string, until: number): Promise<void> {
    const raised = this.write(
      storeId,
      (item) => item !== undefined && (item.tat === undefined || item.tat < until),
      (item) => {
        item.tat = until;
        item.tatSeq = (item.tatSeq ?? 0) + 1;
      },
    );
    if (!raised.ok && raised.current?.tat !== undefined)
      this.write(
        storeId,
        (item) => item !== undefined,
        (item) => {
          item.tatSeq = (item.tatSeq ?? 0) + 1;
        },
      );
  }
  /**
   * Whether a block of lateness `late` may follow the schedule's last block with no gap: it calls no later, or
   * there is no schedule (as the DynamoDB adapter's conditions: a schedule without `tatLate` is one written
   * before it was kept, whose blocks called up to LATENESS_CEILING_MS late).
   */
  /** A reservation's answer from the item a schedule write left, its `tat` as the write set it. */
  private static reservation(item: DispatchItem, tat: number): TatReservation {
    const { tatSeq, tatCalls, rate } = item;
    return {
      tat,
      ...(tatSeq === undefined ? {} : { seq: tatSeq }),
      ...(tatCalls === undefined ? {} : { calls: tatCalls }),
      ...(rate === undefined ? {} : { rate }),
    };
  }
  private static lateFits(item: DispatchItem, late: number): boolean {
    return item.tat === undefined || (item.tatLate ?? LATENESS_CEILING_MS) <= late;
  }
  async restartTat(
    storeId: string,
    now: number,
    intervalMs: number,
    calls: number,
    late?: number,
  ): Promise<TatReservation | undefined> {
    const result = this.write(
      storeId,
      (item) =>
        item !== undefined &&
        (item.tat === undefined || item.tat <= now) &&
        (late === undefined ||
          MemoryDispatchState.lateFits(item, late) ||
          (item.tat as number) <= now - (LATENESS_REACH_MS - late)),
      (item) => {
        item.tat = now + intervalMs;
        item.tatSeq = (item.tatSeq ?? 0) + 1;
        item.tatCalls = (item.tatCalls ?? 0) + calls;
        if (late !== undefined) item.tatLate = late;
      },
    );
    return result.ok ? MemoryDispatchState.reservation(result.item, now + intervalMs) : undefined;
  }
  async placeTat(
    storeId: string,
    seen: { tat: number; seq?: number },
    first: number,
    intervalMs: number,
    calls: number,
    late: number,
  ): Promise<TatReservation | undefined> {
    const result = this.write(
      storeId,
      (item) => item !== undefined && item.tat === seen.tat && item.tatSeq === seen.seq,
      (item) => {
        item.tat = first + intervalMs;
        item.tatSeq = (item.tatSeq ?? 0) + 1;
        item.tatCalls = (item.tatCalls ?? 0) + calls;
        item.tatLate = late;
      },
    );
    return result.ok ? MemoryDispatchState.reservation(result.item, first + intervalMs) : undefined;
  }
  async returnTat(
    storeId: string,
    reservation: { tat: number; seq: number },
    intervalMs: number,
    calls: number,
  ): Promise<boolean> {
    const result = this.write(
      storeId,
      (item) => item?.tat === reservation.tat && item.tatSeq === reservation.seq,
      (item) => {
        item.tat = reservation.tat - intervalMs;
        item.tatSeq = (item.tatSeq ?? 0) + 1;
        item.tatCalls = (item.tatCalls ?? 0) - calls;
      },
    );
    return result.ok;
  }
  async advanceTat(
    storeId: string,
    intervalMs: number,
    calls: number,
    late?: TatLate,
  ): Promise<TatReservation> {
    const result = this.write(
      storeId,
      (item) =>
        late === undefined ||
        item?.tat === undefined ||
        (MemoryDispatchState.lateFits(item, late.ms) &&
          (late.deepFrom === undefined ||
            (item.tatLate ?? LATENESS_CEILING_MS) >= late.ms ||
            item.tat <= late.deepFrom)),
      (item) => {
        item.tat = (item.tat ?? 0) + intervalMs;
        item.tatSeq = (item.tatSeq ?? 0) + 1;
        item.tatCalls = (item.tatCalls ?? 0) + calls;
        if (late !== undefined) item.tatLate = late.ms;
      },
    );
    if (!result.ok) {
      const current = result.current as DispatchItem;
      return {
        tat: current.tat as number,
        ...(current.tatSeq === undefined ? {} : { seq: current.tatSeq }),
        refused: current.tatLate === undefined ? {} : { late: current.tatLate },
      };
    }
    const item = result.item;
    const reservation = {
      tat: item.tat as number,
      seq: item.tatSeq as number,
      calls: item.tatCalls as number,
    };
    return item.rate === undefined ? reservation : { ...reservation, rate: item.rate };
  }
  async noteRate(storeId: string, next: RateState, seenAt: number | undefined): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => item !== undefined && item.rate?.at === seenAt,
      (item) => {
        item.rate = { ...next };
      },
    );
  }

  async dropQueued(storeId: string, slotId: string, ifOver?: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) =>
        item?.slots[slotId]?.s === 'q' &&
        (ifOver === undefined || MemoryDispatchState.slotCount(item) > ifOver),
      (item) => {
        delete item.slots[slotId];
        MemoryDispatchState.add(item, 'nDiscarded');
        if (ifOver !== undefined) MemoryDispatchState.add(item, 'nLeaseBlocked');
      },
    );
  }
  async noteDiscarded(storeId: string): Promise<void> {
    this.write(
      storeId,
      (item) => item !== undefined,
      (item) => MemoryDispatchState.add(item, 'nDiscarded'),
    );
  }
  async raiseRefreshed(storeId: string, at: number, seen: number | undefined): Promise<boolean> {
    return this.write(
      storeId,
      (item) => item?.activeShard !== undefined && item.refreshedAt === seen,
      (item) => {
        item.refreshedAt = at;
      },
    ).ok;
  }
  async lowerRefreshed(storeId: string): Promise<void> {
    this.write(
      storeId,
      () => true,
      (item) => {
        item.refreshedAt = 0;
      },
    );
  }
  async deferWake(storeId: string, until: number): Promise<void> {
    this.write(
      storeId,
      (item) => item?.wakeAt === undefined || item.wakeAt < until,
      (item) => {
        item.wakeAt = until;
      },
    );
  }
  async reclaim(storeId: string, slotId: string, fence: number, dueAt: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => MemoryDispatchState.lease(item, slotId, fence),
      (item) => {
        item.slots[slotId] = { s: 'q', at: dueAt };
      },
    );
  }
  async noteResend(storeId: string, slotId: string, resends: number, at: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => {
        const slot = item?.slots[slotId];
        return (
          slot?.s === 'q' && slot.at === at && (resends === 0 ? slot.r === undefined : slot.r === resends)
        );
      },
      (item) => {
        const slot = item.slots[slotId] as Extract<Slot, { s: 'q' }>;
        slot.r = resends + 1;
        MemoryDispatchState.add(item, 'nResent');
      },
    );
  }
  async markActive(storeId: string, now: number, wakeAt?: number): Promise<void> {
    this.write(
      storeId,
      () => true,
      (item) => this.activate(item, now),
    );
    if (wakeAt !== undefined) await this.deferWake(storeId, wakeAt);
  }
  async beginRedrive(storeId: string, now: number): Promise<void> {
    this.write(
      storeId,
      () => true,
      (item) => {
        this.activate(item, now);
        item.redriveAt = now;
      },
    );
  }
  async endRedrive(storeId: string, startedAt: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => item?.redriveAt === startedAt,
      (item) => {
        delete item.redriveAt;
      },
    );
  }
  async listActive(
    shard: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }> {
    const all = [...this.items.values()]
      // As the sparse `active` index: an item is in it only with both its keys (activeShard and headSentAt).
      .filter((item) => item.activeShard === shard && item.headSentAt !== undefined)
      .sort((a, b) => (a.activeSince ?? 0) - (b.activeSince ?? 0) || a.storeId.localeCompare(b.storeId))
      .map((item) => item.storeId);
    const start = cursor ? Number(cursor) : 0;
    const page = all.slice(start, start + limit);
    return { storeIds: page, ...(start + limit < all.length ? { cursor: String(start + limit) } : {}) };
  }
  async listUnindexed(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ storeIds: string[]; cursor?: string }> {
    // As a Scan: `limit` items read in key order after the cursor (the last key read), then the filter.
    const after = [...this.items.keys()].sort().filter((storeId) => cursor === undefined || storeId > cursor);
    const read = after.slice(0, limit);
    const storeIds = read.filter((storeId) => {
      const item = this.items.get(storeId);
      return item?.activeShard !== undefined && item.headSentAt === undefined;
    });
    const last = read.at(-1);
    return { storeIds, ...(after.length > limit && last !== undefined ? { cursor: last } : {}) };
  }
  async indexActive(storeId: string, now: number): Promise<Conditional> {
    return this.write(
      storeId,
      (item) => item?.activeShard !== undefined && item.headSentAt === undefined,
      (item) => {
        item.headSentAt = item.activeSince ?? now;
      },
    );
  }
  async readCursor(id: string): Promise<string | undefined> {
    return this.cursors.get(id);
  }
  async writeCursor(id: string, cursor: string | undefined): Promise<void> {
    if (cursor === undefined) this.cursors.delete(id);
    else this.cursors.set(id, cursor);
  }
}
