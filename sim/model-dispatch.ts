import type { DispatchItem } from '../lambdas/core/dispatch-model.js';
import { deliveryKey } from '../lambdas/core/names.js';
import type {
  Claim,
  Conditional,
  DeliveredSettle,
  DeliveryLog,
  DispatchState,
} from '../lambdas/core/ports.js';
import { LATENESS_CEILING_MS } from '../lambdas/core/rate.js';
import { MemoryDeliveryLog } from '../test/support/memory-delivery-log.js';
import { MemoryDispatchState } from '../test/support/memory-dispatch-state.js';
import { T0 } from './constants.js';
import type { SimContext } from './context.js';
import { deliveredKeys, injectUnprocessed, stillHeld } from './model-delivered-settle.js';
import type { Actor } from './scheduler.js';
import type { LeaseTrack, StoreState } from './world-view.js';

/** A lease taken before the faults ended expires and is reclaimed within this much after (a lease, two runs). */
const RECLAIM_AFTER_FAULTS_MS = 150_000;

/**
 * DynamoDB as the protocol sees it: the dispatch state and the delivery log (test/support's in-memory
 * stand-ins, kept to the DynamoDB adapter's conditions by the contract tests), every call one scheduled
 * operation applied atomically. It watches the dispatch writes to keep what the invariants need: the
 * leases workers hold and the slices each store started.
 */
export class DispatchModel {
  readonly dispatch = new MemoryDispatchState();
  readonly deliveries = new MemoryDeliveryLog();
  readonly leases = new Map<number, LeaseTrack>();
  private readonly started = new Map<string, number>();

  constructor(
    private readonly ctx: SimContext,
    private readonly store: (storeId: string) => StoreState | undefined,
    /** A worker's settle('delivered') landed for this delivery key. */
    private readonly onDelivered: (actor: Actor, key: string) => void,
  ) {
    injectUnprocessed(this.deliveries, ctx);
  }

  addStore(storeId: string): void {
    this.started.set(storeId, 0);
    void this.dispatch.ensure(storeId);
  }

  item(storeId: string): DispatchItem | undefined {
    return this.dispatch.items.get(storeId);
  }

  slicesStarted(storeId: string): number {
    return this.started.get(storeId) ?? 0;
  }

  dispatchFor(actor: Actor): DispatchState {
    const variant = this.ctx.variant;
    const inner = variant?.dispatch ? variant.dispatch(this.dispatch, actor.kind) : this.dispatch;
    return this.ctx.scheduled(actor, 'dispatch', inner, {
      before: (name, args) => this.before(actor, name, args),
      after: (name, args, value) => this.after(actor, name, args, value),
    });
  }

  deliveriesFor(actor: Actor): DeliveryLog {
    const variant = this.ctx.variant;
    const inner = variant?.deliveries ? variant.deliveries(this.deliveries) : this.deliveries;
    /** The delivered settles of the current settleDelivered call whose claim still held when it applied. */
    let held: DeliveredSettle[] = [];
    return this.ctx.scheduled(actor, 'deliveries', inner, {
      before: (name, args) => {
        if (name === 'settleDelivered') held = stillHeld(this.deliveries, args[0] as DeliveredSettle[]);
      },
      after: (name, args, value) => {
        const [storeId, eventId, , outcome] = args as [string, string, string, { status?: string }];
        if (name === 'settle' && value === true && outcome.status === 'delivered')
          this.onDelivered(actor, deliveryKey(storeId, eventId));
        if (name === 'settle' && value === true && outcome.status === 'dead_lettered')
          this.ctx.checks.deadLetterSettled(storeId, eventId);
        if (name === 'claim' && (value as Claim).ok) this.ctx.checks.taskClaimed(actor, storeId, eventId);
        if (name === 'settleDelivered')
          for (const key of deliveredKeys(held, value as DeliveredSettle[])) this.onDelivered(actor, key);
      },
    });
  }

  private before(actor: Actor, name: string, args: unknown[]): void {
    if (name === 'markActive' && actor.kind === 'reconciler') {
      const state = this.store(args[0] as string);
      if (state) this.ctx.checks.sweepRescue(state);
    }
  }

  private after(actor: Actor, name: string, args: unknown[], value: unknown): void {
    const storeId = args[0] as string;
    if (name === 'recordEnqueued' && actor.kind === 'ingest') {
      this.store(storeId)?.untracked.delete(actor.id);
    }
    // A slot added without a lease behind it: every issuer but a fan-out writes under `size(slots) < 1` (limit 1).
    const unleased = (name === 'issueSlot' && args[3] === 1) || name === 'endEnqueueIssuing';
    if (unleased && (value as Conditional).ok)
      this.ctx.checks.slotIssued(
        actor,
        storeId,
        Object.keys((value as { item: DispatchItem }).item.slots).length,
      );
    if (name === 'holdTat') this.ctx.checks.holdLanded(actor, storeId, (args[1] as number) - actor.skewMs);
    // Only the reclaim of a lease the faults made expire: one taken before they ended, reclaimed within a lease
    // and a reconciler period or two after (a later one is a broken protocol's, which must not move the bound).
    if (
      name === 'reclaim' &&
      (value as { ok: boolean }).ok &&
      this.ctx.now <= T0 + this.ctx.scenario.faultsEndMs + RECLAIM_AFTER_FAULTS_MS
    )
      this.ctx.lastReclaimAt = this.ctx.now;
    // The first instant a reservation of instants hands out: a restart's `now`, an advance's tat less its span
    // (a widening, count 0, only moves the block it follows, seq-checked).
    const late =
      name === 'advanceTat' ? (args[3] as { ms: number } | undefined)?.ms : (args.at(-1) as number);
    const reserved = (name === 'restartTat' || name === 'placeTat') && value !== undefined;
    const advanced = name === 'advanceTat' && (value as { refused?: unknown }).refused === undefined;
    if ((reserved || advanced) && (late ?? 0) > LATENESS_CEILING_MS) this.ctx.stats.reachBlocks++;
    if (name === 'placeTat' && value !== undefined) this.ctx.stats.lateLowerings++;
    // A placed block's first instant is its `first`; a refused advance reserved nothing.
    const refused = name === 'advanceTat' && (value as { refused?: unknown }).refused !== undefined;
    if (name === 'restartTat' && value !== undefined)
      this.ctx.checks.reservedFrom(storeId, args[1] as number);
    if (name === 'placeTat' && value !== undefined) this.ctx.checks.reservedFrom(storeId, args[2] as number);
    if (name === 'advanceTat' && (args[2] as number) > 0 && !refused)
      this.ctx.checks.reservedFrom(storeId, (value as { tat: number }).tat - (args[1] as number));
    if (
      (['restartTat', 'placeTat'].includes(name) && value !== undefined) ||
      (name === 'advanceTat' && !refused)
    ) {
      const lease = this.leases.get(actor.id);
      if (lease?.storeId === storeId) lease.reservedAt = this.ctx.now;
    }
    if (['requeue', 'release', 'markIdle'].includes(name) && !(value as { ok: boolean }).ok) {
      const slot = (value as { current?: DispatchItem }).current?.slots[args[1] as string];
      if (slot?.s === 'l' && slot.f !== args[2]) this.ctx.stats.fencedWrites++;
    }
    // A lease ends when its holder hands its slot back (requeue), gives it up (release) or idles the store.
    if (['requeue', 'release', 'markIdle'].includes(name) && (value as { ok: boolean }).ok) {
      const lease = this.leases.get(actor.id);
      if (lease?.storeId === storeId && lease.slotId === args[1] && lease.fence === args[2])
        this.leases.delete(actor.id);
    }
    if (name === 'acquire' && (value as { ok: boolean }).ok) {
      const item = (value as { item: DispatchItem }).item;
      const slotId = args[1] as string;
      const slot = item.slots[slotId];
      const lease: LeaseTrack = {
        storeId,
        slotId,
        fence: slot?.s === 'l' ? slot.f : -1,
        // The lease runs from the worker's request (its clock, back to true time), however long the write took.
        startedAt: (args[2] as { now: number }).now - actor.skewMs,
        received: 0,
        calls: 0,
      };
      this.leases.set(actor.id, lease);
      this.ctx.checks.leaseTaken(actor, lease);
      this.started.set(storeId, (this.started.get(storeId) ?? 0) + 1);
      // A new lease receives whatever an earlier false-empty receive or a crashed ingest left untracked.
      const state = this.store(storeId);
      if (state) {
        state.falseEmpty = false;
        state.orphans.clear();
      }
    }
  }
}
