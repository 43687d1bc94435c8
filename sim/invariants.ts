import type { DispatchItem } from '../lambdas/core/dispatch-model.js';
import type { DeadLetterReason } from '../lambdas/core/ports.js';
import {
  CLOCK_SKEW_MS,
  leaseTtlMs,
  MAX_MARKETPLACE_TIMEOUT_MS,
  STORE_RECHECK_MS,
} from '../lambdas/core/timing.js';
import { SLICE_SECONDS_LIMIT } from '../lambdas/core/plans.js';
import { ENSURE_SLOT } from '../lambdas/core/signal.js';
import { capAt, capMax } from './model-campaigns.js';
import type { Actor } from './scheduler.js';
import { PriorityCheck } from './priority-check.js';
import { RATE_INVARIANT, RateCheck } from './rate-check.js';
import { RedriveBudgetCheck } from './redrive-budget-check.js';
import { APPROXIMATE_LAG_MS } from './sim-sqs.js';
import {
  ATTENTION_GRACE_MS,
  MARKETPLACE_TIMEOUT_MS,
  RECONCILER_JITTER_MS,
  RECONCILER_PERIOD_MS,
  STALL_MAX_MS,
  T0,
} from './constants.js';
import type {
  Checks,
  Excuses,
  KeyCall,
  LeaseTrack,
  RepeatExcuse,
  StoreState,
  TaskTrack,
  WorldView,
} from './world-view.js';
import { hasVisibleWork, heldMessages, indexed, legacyActive, notIdle } from './world-view.js';

export interface Violation {
  invariant: number;
  message: string;
  /** Virtual ms since the start of the run. */
  atMs: number;
}

/**
 * Invariant 7's constant: attention messages for one store (visible, delayed or held by a worker) stay
 * ≤ ATTENTION_FACTOR × maxConcurrentConsumers. Counted honestly: every message the protocol published
 * and SQS still holds, including reconciler re-announcements of a queued slot and attentions held by a
 * crashed worker until their 600 s visibility runs out (not SQS's own duplicate deliveries).
 */
export const ATTENTION_FACTOR = 8;
/**
 * A call may start this long after the slice deadline: the worker checks the deadline, then makes up to
 * three DynamoDB calls before the marketplace call (rate reservation, effect-once claim, delivered
 * version), each of which may be stalled; the lease margin (LEASE_MARGIN_MS) is what absorbs them.
 */
export const CALL_START_TOLERANCE_MS = 3 * (STALL_MAX_MS + 20);
/** Longest a reconciler run takes here (a few stores, each call possibly stalled). */
export const RECONCILER_RUN_BOUND_MS = 15_000;
/**
 * Invariant 12 (Lambda timeout > lease, design-notes "Lease expiry vs slice time"): the longest lease any
 * plan allows, taken when this one was, would still end before its invocation's Lambda timeout. Plans change
 * at any time, so the check uses the plan limit, not the store's policy of the moment.
 */
export const LONGEST_LEASE_MS = leaseTtlMs(
  { maxSliceSeconds: SLICE_SECONDS_LIMIT },
  MAX_MARKETPLACE_TIMEOUT_MS,
);
export const TIMEOUT_INVARIANT = 12;
/** Invariant 13 (paused means paused, sim/model-operator.ts): see `pausedCall`. */
export const PAUSED_INVARIANT = 13;
/** Invariant 14 (an acknowledged operator change holds, sim/model-operator.ts `settled`). */
export const OPERATOR_INVARIANT = 14;
/** Invariant 5: while one due attention waits visible in the queue, another store Y starts ≤ 2·max(Y) + this + Y's attentions already queued. */
export const FAIR_SHARE_SLACK = 2;

/**
 * Only the sweep can find this store's backlog, and the protocol allows it: an injected false-empty
 * receive let a worker mark the store idle. (Ingest no longer needs an excuse: its write-ahead marks the
 * store active before its send and keeps it from going idle while the send may still land, so an ingest
 * that dies anywhere leaves the store in the active index — issue #10.)
 */
const sweepExcused = (state: Excuses): boolean => state.falseEmpty;

/** Why an earlier successful call allows the key to succeed again, if it does. */
const repeatExcuse = (call: KeyCall): RepeatExcuse | undefined => {
  if (call.state === 'unknown') return 'timeout';
  if (call.state === 'dropped' || (call.actor.crashed && !call.confirmed)) return 'crash';
  // Its caller stalled beyond the lease margin after the 2xx, so its claim expired before its settle.
  const stalledAt = call.actor.longStallAt;
  if (
    call.state === 'ok' &&
    !call.confirmed &&
    stalledAt !== undefined &&
    stalledAt >= (call.okAt ?? Infinity)
  )
    return 'stall';
  // Its caller's settle after the 2xx failed every try (hard DynamoDB errors): the task came back.
  if (call.state === 'ok' && !call.confirmed && call.settleLost) return 'error';
  return undefined;
};

/** Checks invariants 1–7 after every step of a World, and liveness at the end. */
export class Invariants implements Checks {
  violation: Violation | undefined;
  private readonly strandedSince = new Map<string, { since: number; reconcilerCrashes: number }>();
  private readonly waiting = new Map<
    string,
    { since: number; bound: Map<string, { base: number; allowance: number }> }
  >();

  private readonly rate: RateCheck;
  private readonly priority: PriorityCheck;
  private readonly budget: RedriveBudgetCheck;
  /** Highest version the marketplace applied per store/entity. */
  private readonly versions = new Map<string, number>();

  constructor(private readonly world: WorldView) {
    this.rate = new RateCheck(world, (invariant, message) => this.fail(invariant, message));
    this.priority = new PriorityCheck(world, (invariant, message) => this.fail(invariant, message));
    this.budget = new RedriveBudgetCheck(world, (invariant, message) => this.fail(invariant, message));
  }

  /* ---- 11. task priority within a store (priority-check.ts) */
  highSent(state: StoreState, eventId: string): void {
    this.priority.highSent(state, eventId);
  }

  highReached(storeId: string, eventId: string): void {
    this.priority.highReached(storeId, eventId);
  }

  highMissed(storeId: string): void {
    this.priority.highMissed(storeId);
  }

  taskCallStarted(storeId: string, eventId: string): void {
    this.priority.taskCallStarted(storeId, eventId);
    this.rate.taskCallStarted(storeId, eventId);
    this.budget.taskCallStarted(storeId, eventId);
  }

  /* ---- 15. a redrive starts a fresh retry budget (redrive-budget-check.ts) */
  deadLettered(actor: Actor, track: TaskTrack, reason: DeadLetterReason): void {
    this.budget.deadLettered(actor, track, reason);
  }

  taskClaimed(actor: Actor, storeId: string, eventId: string): void {
    this.budget.taskClaimed(actor, storeId, eventId);
  }

  /**
   * ---- 7, structurally: slots beyond a store's first come only from live leases (a fan-out, fenced by its lease).
   * Every other issuer — ingest (its end-and-issue write included), the reconciler, an operator's resume or
   * redrive, a worker's nudge or resume — writes under `size(slots) < 1`, so a slot it adds is the store's only one.
   */
  slotIssued(actor: Actor, storeId: string, slots: number): void {
    if (slots > 1)
      this.fail(7, `${actor.name} issued a slot of ${storeId} beside ${slots - 1} other(s), without a lease`);
  }

  deadLetterSettled(storeId: string, eventId: string): void {
    this.budget.deadLetterSettled(storeId, eventId);
  }

  throttled(actor: Actor, storeId: string, eventId: string, until: number): void {
    const state = this.world.store(storeId);
    this.rate.taskThrottled(storeId, eventId, until);
    // Under `throttleScope: 'task'` the 429 throttles its task alone: the store's other calls go on (plans.ts).
    // The scope is the store's own (the simulation's campaigns and operators never change it).
    if (state?.spec.policy.throttleScope === 'task') {
      this.world.stats.taskScopeThrottles++;
      return;
    }
    this.storeHeld(actor, storeId, until);
  }

  /**
   * An answer to `actor`'s call of `storeId` said the marketplace's window quota is spent until `until`
   * (`RateLimit-Remaining: 0`, `-Reset`): held as a 429's Retry-After is, under either throttle scope (the header
   * speaks for the store's window; the worker holds the store on it under `throttleScope: 'task'` too).
   */
  quotaSpent(actor: Actor, storeId: string, until: number): void {
    this.world.stats.quotaHolds++;
    this.storeHeld(actor, storeId, until);
  }

  private storeHeld(actor: Actor, storeId: string, until: number): void {
    const state = this.world.store(storeId);
    // One consumer or several: as the throttled slice's lease was taken (a campaign may have changed the cap).
    const cap = this.world.leases().get(actor.id)?.cap ?? state?.spec.policy.maxConcurrentConsumers;
    const lease = this.world.leases().get(actor.id);
    if (state)
      this.rate.throttled(
        storeId,
        until,
        cap === 1,
        actor.id,
        lease?.storeId === storeId ? lease : undefined,
      );
  }

  holdLanded(actor: Actor, storeId: string, until: number): void {
    this.rate.holdLanded(storeId, until, actor.id, actor.skewMs);
  }

  reservedFrom(storeId: string, first: number): void {
    this.rate.reservedFrom(storeId, first);
  }

  private fail(invariant: number, message: string): void {
    if (this.violation) return;
    this.violation = { invariant, message, atMs: this.world.now - T0 };
    this.world.log(`VIOLATION of invariant ${invariant}: ${message}`);
  }

  /* ---- 1. no accepted task lost: checked whenever a copy leaves a store queue */
  taskLeftQueue(track: TaskTrack): void {
    if (track.copies > 0 || this.world.settled(track)) return;
    this.fail(1, `task ${track.storeId}:${track.eventId} left its queue undelivered and not dead-lettered`);
  }

  /* ---- 6. effect once: checked whenever the marketplace applies an effect */
  effectApplied(task: string): void {
    const effects = this.world.effects(task);
    if (effects > 1) this.fail(6, `the marketplace applied task ${task} ${effects} times`);
  }

  /*
   * ---- 6 on raw calls: the marketplace's deduplication must not be what keeps a task's effect once. A
   * second call with one Idempotency-Key never starts while another is in flight, and a key succeeds again
   * only if no earlier success was known to a caller that lived to record it: an earlier call timed out or
   * its caller crashed (during the call, or after it and before its settle landed).
   */
  callSucceeded(key: string, keyCalls: readonly KeyCall[]): void {
    const previous = keyCalls.slice(0, -1).filter((call) => call.succeeded);
    if (previous.length === 0) return;
    const confirmed = previous.find((call) => call.confirmed);
    if (confirmed) {
      this.fail(
        6,
        `key ${key} succeeded again after ${confirmed.actor.name} recorded it delivered (${keyCalls.length} calls)`,
      );
      return;
    }
    const excuse = previous.map(repeatExcuse).find((why) => why !== undefined);
    if (excuse === undefined) {
      this.fail(
        6,
        `key ${key} succeeded again though its earlier success reached a live caller (${previous.map((c) => `${c.actor.name}:${c.state}`).join(', ')})`,
      );
      return;
    }
    if (excuse === 'timeout') this.world.stats.repeatsAfterTimeout++;
    else if (excuse === 'crash') this.world.stats.repeatsAfterCrash++;
    else if (excuse === 'error') this.world.stats.repeatsAfterError++;
    else this.world.stats.repeatsAfterStall++;
  }

  /*
   * ---- 10. version order (README "Ordering"): for a store with one consumer, the marketplace never applies
   * an entity's version after a higher one. (With several consumers two versions may be in flight at once
   * and land inverted: the README says so, and this is not checked there.)
   */
  versionApplied(storeId: string, entityId: string, version: number): void {
    const key = `${storeId}/${entityId}`;
    const highest = this.versions.get(key);
    if (highest === undefined || version > highest) this.versions.set(key, version);
    const state = this.world.store(storeId);
    if (highest !== undefined && version < highest && state?.spec.policy.maxConcurrentConsumers === 1)
      this.fail(10, `${storeId} applied ${entityId} version ${version} after version ${highest}`);
  }

  /* ---- 3 and 4: checked when a marketplace call starts (and 6: one call per key at a time) */
  callStarted(actor: Actor, storeId: string, inFlight: number, keyCalls: readonly KeyCall[]): void {
    const overlapping = keyCalls.slice(0, -1).find((call) => call.state === 'inflight');
    if (overlapping)
      this.fail(6, `${actor.name} called with the key ${overlapping.actor.name} has in flight (${storeId})`);
    const state = this.world.store(storeId);
    if (!state) return;
    this.pausedCall(actor, storeId);
    const policy = state.spec.policy;
    // Leases taken before a campaign lowered the cap run to their end under the cap they were taken with.
    const maxInFlight = this.capOfLiveLeases(storeId);
    if (inFlight > maxInFlight)
      this.fail(3, `${inFlight} marketplace calls in flight for ${storeId} (max ${maxInFlight})`);
    const lease = this.world.leases().get(actor.id);
    if (!lease || lease.storeId !== storeId) {
      this.fail(3, `${actor.name} called the marketplace for ${storeId} without a lease`);
      return;
    }
    this.overLoweredCap(actor, storeId, lease);
    this.rate.callStarted(storeId, policy.ratePerSecond, actor.id, lease);
    this.besideLoneLease(actor, storeId, lease);
    lease.calls++;
    if (lease.calls > policy.maxMessagesPerSlice)
      this.fail(
        4,
        `${actor.name} made ${lease.calls} calls in one slice of ${storeId} (max ${policy.maxMessagesPerSlice})`,
      );
    const late = this.world.now - (lease.startedAt + policy.maxSliceSeconds * 1000);
    if (late > CALL_START_TOLERANCE_MS)
      this.fail(
        4,
        `${actor.name} started a call ${late} ms after its slice deadline (${storeId}, fence ${lease.fence})`,
      );
    const leaseEnd = lease.startedAt + leaseTtlMs(policy, MARKETPLACE_TIMEOUT_MS);
    if (this.world.now + MARKETPLACE_TIMEOUT_MS > leaseEnd + CLOCK_SKEW_MS)
      this.fail(
        3,
        `${actor.name} started a call that can outlive its lease (${storeId}, fence ${lease.fence})`,
      );
  }

  /*
   * ---- 13. paused means paused (sim/model-operator.ts), within STORE_RECHECK_MS: the worker reads the store's
   * status before its acquire, and its slice reads it again before a call once that long has passed since its
   * last read began (lambdas/core/store-watch.ts), ending when the store is no longer active. So a paused
   * store's marketplace call comes only from a worker whose last read of the record came before the pause
   * landed — never from one that read it paused — and starts less than STORE_RECHECK_MS after the pause
   * landed. "Paused" is every status that holds the backlog: paused, maintenance, disabled.
   */
  private pausedCall(actor: Actor, storeId: string): void {
    // Defined exactly while the record holds the backlog (the operator writes every status change into it).
    const since = this.world.pausedSince(storeId);
    if (since === undefined) return;
    if (this.world.readActive(actor.id, storeId) !== true)
      this.fail(
        PAUSED_INVARIANT,
        `${actor.name} called the marketplace for ${storeId}, paused (or in maintenance, or disabled) before it read the store`,
      );
    else if (this.world.now - since >= STORE_RECHECK_MS)
      this.fail(
        PAUSED_INVARIANT,
        `${actor.name} called the marketplace for ${storeId} ${this.world.now - since} ms after it was paused (or put in maintenance, or disabled): a slice re-reads its store within ${STORE_RECHECK_MS} ms`,
      );
    else this.world.stats.callsWhilePaused++;
  }

  /*
   * ---- 3 after a plan change: a lease taken under a cap the store's record (with its campaigns) no longer
   * allows makes no call once its slice has re-read the store (STORE_RECHECK_MS): a call comes from a lease
   * whose cap one of the store's own caps of the last STORE_RECHECK_MS allows, a campaign's at the worker's
   * instant included (its slice compares the cap in force as it last read it with the cap its lease was taken
   * under, and ends if lower; the lowered cap's slots are dropped as the slices requeue).
   */
  private overLoweredCap(actor: Actor, storeId: string, lease: LeaseTrack): void {
    if (lease.cap === undefined) return;
    const caps = this.world.capsSince(storeId, this.world.now - STORE_RECHECK_MS);
    const allowed = Math.max(...caps.map((own) => this.capAt(storeId, this.world.now + actor.skewMs, own)));
    if (allowed >= lease.cap) {
      if (this.capAt(storeId, this.world.now) < lease.cap) this.world.stats.callsOverLoweredCap++;
      return;
    }
    this.fail(
      3,
      `${actor.name} called ${storeId} under a lease taken with cap ${lease.cap} (fence ${lease.fence}) though its cap has been ${allowed} for ${STORE_RECHECK_MS} ms or more`,
    );
  }

  /* ---- 14. an acknowledged operator change holds (sim/model-operator.ts tracks the PATCHes) */
  changeLost(message: string): void {
    this.fail(OPERATOR_INVARIANT, message);
  }

  /* ---- 1. a task ingest answered 202 for is durable: it reached its store queue */
  accepted(storeId: string, eventId: string, track: TaskTrack | undefined): void {
    if (track === undefined)
      this.fail(1, `ingest accepted ${storeId}:${eventId} (202) but never enqueued it`);
  }

  /** Against the messages per slice of the record its worker read (an operator's `setOverrides` may lower it). */
  received(state: StoreState, lease: LeaseTrack): void {
    const max = lease.perSlice ?? state.spec.policy.maxMessagesPerSlice;
    if (lease.received > max)
      this.fail(4, `one slice of ${lease.storeId} received ${lease.received} messages (max ${max})`);
  }

  /**
   * The store's cap at true time `t`, campaign windows included (sim/model-campaigns.ts), over its own cap
   * `own` (default: the record's now, an operator's plan change included: sim/model-operator.ts).
   */
  private capAt(storeId: string, t: number, own = this.world.ownCap(storeId)): number {
    return capAt(this.world.campaigns, storeId, own, t);
  }

  private capMax(state: StoreState): number {
    return capMax(this.world.campaigns, state.spec.storeId, state.spec.policy.maxConcurrentConsumers);
  }

  /**
   * ---- 9, the rate's mechanism for a raised cap: a lease taken under a cap of 1 paces on its own clock and
   * writes the shared schedule only when it ends (and on a 429), so no lease taken after it and before it
   * expires calls while it is live (two clock skews' tolerance: its expiry is written on its holder's clock and
   * compared on the reconciler's and the next acquirer's). Structural: a fan-out is fenced by its lease, so only
   * a live lease under a cap ≥ 2 issues a store's second slot (ARCHITECTURE invariant 7).
   */
  private besideLoneLease(actor: Actor, storeId: string, lease: LeaseTrack): void {
    const state = this.world.store(storeId);
    if (!state) return;
    const ttl = leaseTtlMs(state.spec.policy, MARKETPLACE_TIMEOUT_MS);
    for (const [id, other] of this.world.leases())
      if (
        id !== actor.id &&
        other.storeId === storeId &&
        other.cap === 1 &&
        other.startedAt <= lease.startedAt &&
        lease.startedAt < other.startedAt + ttl - 2 * CLOCK_SKEW_MS
      )
        this.fail(
          RATE_INVARIANT,
          `${actor.name} called ${storeId} under a lease (fence ${lease.fence}, cap ${lease.cap}) taken beside a lone consumer's live lease (fence ${other.fence})`,
        );
  }

  /** The highest cap any of the store's leases was taken under (its own cap when none is recorded). */
  private capOfLiveLeases(storeId: string): number {
    let cap = this.capAt(storeId, this.world.now);
    for (const lease of this.world.leases().values())
      if (lease.storeId === storeId && lease.cap !== undefined) cap = Math.max(cap, lease.cap);
    return cap;
  }

  /*
   * ---- 3 at each acquire: one live lease per slot, and no more live leases than slots may exist. A lease
   * is live until its expiry (taken at the worker's request + lease TTL); a worker stalled past it (a zombie)
   * no longer counts, which is why its writes must be fenced.
   */
  leaseTaken(actor: Actor, lease: LeaseTrack): void {
    const state = this.world.store(lease.storeId);
    if (!state) return;
    const ttl = leaseTtlMs(state.spec.policy, MARKETPLACE_TIMEOUT_MS);
    let live = 0;
    for (const [id, other] of this.world.leases()) {
      if (other.storeId !== lease.storeId || other.startedAt + ttl <= this.world.now) continue;
      live++;
      if (id !== actor.id && other.slotId === lease.slotId)
        this.fail(
          3,
          `${actor.name} took slot ${lease.slotId} of ${lease.storeId} (fence ${lease.fence}) while another worker's lease of it (fence ${other.fence}) was live`,
        );
    }
    // The cap in force at the instant the worker asked for the lease, on its own clock (a campaign window may
    // have raised or lowered it): the slot-count condition must hold every lease taken to it.
    // Its own cap is the one in the store record the worker read before acquiring (a plan change that landed
    // since counts from the store's next attention: ARCHITECTURE "a slot over a lowered limit is dropped").
    const cap = this.capAt(
      lease.storeId,
      lease.startedAt + actor.skewMs,
      this.world.capRead(actor.id, lease.storeId) ?? this.world.ownCap(lease.storeId),
    );
    lease.cap = cap;
    lease.perSlice =
      this.world.perSliceRead(actor.id, lease.storeId) ??
      this.world.store(lease.storeId)?.spec.policy.maxMessagesPerSlice;
    const own = this.world.store(lease.storeId)?.spec.policy.maxConcurrentConsumers;
    if (cap !== own) this.world.stats.campaignLeases++;
    if (cap !== this.capAt(lease.storeId, lease.startedAt + ttl)) this.world.stats.leasesAcrossBoundary++;
    if (live > cap) this.fail(3, `${live} live leases of ${lease.storeId} (max ${cap} then)`);
    // The slot-count condition itself, against the cap of the record the worker read: a slot over a lowered
    // cap is dropped (over_limit) before any lease is taken under it (sim/model-operator.ts).
    const slots = Object.keys(this.world.dispatchItem(lease.storeId)?.slots ?? {}).length;
    if (slots > cap)
      this.fail(3, `${actor.name} took a lease of ${lease.storeId} holding ${slots} slots (max ${cap} then)`);
    // ---- 12: every record of an invocation starts its slice with the invocation (concurrently), so even the
    // longest lease ends before the Lambda timeout kills the process; a worker stalled past the lease margin
    // before it acquired (a zombie) is the only excuse.
    if (
      actor.killAt !== undefined &&
      actor.longStallAt === undefined &&
      lease.startedAt + LONGEST_LEASE_MS > actor.killAt
    )
      this.fail(
        TIMEOUT_INVARIANT,
        `${actor.name} took a lease of ${lease.storeId} ${((actor.killAt - lease.startedAt) / 1000).toFixed(1)} s before its Lambda timeout: a lease of the longest slice (${LONGEST_LEASE_MS / 1000} s) would outlive the invocation`,
      );
  }

  /* ---- 2. a sweep that finds an untracked backlog must have a reason the protocol allows */
  sweepRescue(state: StoreState): void {
    const item = this.world.dispatchItem(state.spec.storeId);
    if (this.indexedOrUpgrading(item) || heldMessages(state) === 0) return;
    this.world.stats.sweepRescues++;
    if (sweepExcused(state)) {
      state.falseEmpty = false;
      state.orphans.clear();
      return;
    }
    this.fail(
      2,
      `${state.spec.storeId} had a backlog the active index did not track (found only by the sweep)`,
    );
  }

  /**
   * In the index — or left out of it by an upgrade from before f267a90 while the first clean reconciler run
   * since (its backfill) has not ended.
   */
  private indexedOrUpgrading(item: DispatchItem | undefined): boolean {
    return indexed(item) || (this.world.upgradePending && legacyActive(item));
  }

  upgradeSettled(): void {
    for (const state of this.world.stores()) {
      const storeId = state.spec.storeId;
      if (legacyActive(this.world.dispatchItem(storeId)))
        this.fail(
          2,
          `${storeId} is marked active but in no index after the first clean reconciler run since the upgrade from before f267a90`,
        );
    }
  }

  check(): void {
    const now = this.world.now;
    // Attentions per store, and which stores have a due attention waiting in line.
    const attentions = new Map<string, number>();
    const waitingNow = new Map<string, string>(); // attention message id → its store
    for (const message of this.world.attentionMessages()) {
      const meta = this.world.attentionOf(message);
      if (!meta) continue;
      if (!message.duplicate) attentions.set(meta.storeId, (attentions.get(meta.storeId) ?? 0) + 1);
      // Invariant 5 is the attention queue's round; the confirm queue's slices are one empty check (and at most one batch) each.
      if (message.visibleAt > now || meta.slotId === ENSURE_SLOT || meta.confirm) continue;
      const slot = this.world.dispatchItem(meta.storeId)?.slots[meta.slotId];
      if (slot?.s === 'q' && slot.at <= now) waitingNow.set(message.id, meta.storeId);
    }
    let roundSlices = 0;
    let longestSlice = 0;
    for (const state of this.world.stores()) {
      roundSlices += 2 * this.capMax(state) + FAIR_SHARE_SLACK;
      const sliceMs = state.spec.policy.maxSliceSeconds * 1000 + MARKETPLACE_TIMEOUT_MS + 5_000;
      longestSlice = Math.max(longestSlice, sliceMs);
    }
    const roundMs = Math.ceil(roundSlices / this.world.workers) * longestSlice;

    // 5. fair share: while one due attention waits visible in the attention queue, no other store starts
    // more than its share of slices (each of its slots once, twice with duplicates, plus slack).
    for (const id of this.waiting.keys()) if (!waitingNow.has(id)) this.waiting.delete(id);
    for (const [messageId, storeId] of waitingNow) {
      let wait = this.waiting.get(messageId);
      if (!wait) {
        const bound = new Map<string, { base: number; allowance: number }>();
        for (const other of this.world.stores()) {
          const id = other.spec.storeId;
          if (id === storeId) continue;
          const allowance = 2 * this.capMax(other) + FAIR_SHARE_SLACK + (attentions.get(id) ?? 0);
          bound.set(id, { base: this.world.slicesStarted(id), allowance });
        }
        wait = { since: now, bound };
        this.waiting.set(messageId, wait);
      }
      for (const [id, { base, allowance }] of wait.bound) {
        const started = this.world.slicesStarted(id) - base;
        const ratio = started / allowance;
        if (ratio > this.world.stats.maxWaitSlicesRatio) this.world.stats.maxWaitSlicesRatio = ratio;
        if (started > allowance)
          this.fail(
            5,
            `${id} started ${started} slices (allowed ${allowance}) while an attention of ${storeId} waited due and visible since ${((wait.since - T0) / 1000).toFixed(1)} s`,
          );
      }
    }

    for (const state of this.world.stores()) {
      const storeId = state.spec.storeId;
      // 7. bounded signalling
      const count = attentions.get(storeId) ?? 0;
      const cap = this.capMax(state);
      const perSlot = count / cap;
      if (perSlot > this.world.stats.maxAttentionsPerSlot) this.world.stats.maxAttentionsPerSlot = perSlot;
      if (count > ATTENTION_FACTOR * cap)
        this.fail(7, `${count} attentions in flight for ${storeId} (bound ${ATTENTION_FACTOR} × ${cap})`);

      // 2a. tracked backlog: a store whose queue holds a message is in the active index (so the reconciler
      // sees it), unless an ingest is between its send and its enqSeq bump (or died there), or an injected
      // false-empty receive let a worker mark it idle, or an upgrade from before f267a90 left it marked active
      // without the index's sort key and the first clean reconciler run since has not ended (its backfill).
      // This catches a lost wake-up when it happens, even if a later task would have hidden it.
      const item = this.world.dispatchItem(storeId);
      if (heldMessages(state) > 0 && !this.indexedOrUpgrading(item) && !sweepExcused(state))
        this.fail(
          2,
          `${storeId} holds ${heldMessages(state)} message(s) but is not in the active index (lost wake-up)`,
        );

      // 2b. no stranded backlog: visible messages and no live lease only for a bounded time.
      const visible = hasVisibleWork(state, now);
      let leased = false;
      for (const lease of this.world.leases().values())
        if (lease.storeId === storeId) {
          leased = true;
          break;
        }
      // A paused store's backlog waits (its strand clock starts again when it is resumed).
      if (!visible || leased || this.world.paused(storeId)) {
        this.strandedSince.delete(storeId);
        continue;
      }
      const strand = this.strandedSince.get(storeId) ?? {
        since: now,
        reconcilerCrashes: this.world.reconcilerCrashes,
      };
      this.strandedSince.set(storeId, strand);
      const since = strand.since;
      const stranded = now - since;
      if (stranded === 0) continue;
      const bound = this.strandBound(
        state,
        since,
        roundMs,
        this.world.reconcilerCrashes - strand.reconcilerCrashes,
      );
      if (stranded > this.world.stats.maxStrandedMs) this.world.stats.maxStrandedMs = stranded;
      const ratio = stranded / bound;
      if (ratio > this.world.stats.maxStrandedRatio) this.world.stats.maxStrandedRatio = ratio;
      if (stranded > bound)
        this.fail(
          2,
          `${storeId} has had visible messages and no consumer for ${(stranded / 1000).toFixed(1)} s (bound ${(bound / 1000).toFixed(1)} s)`,
        );
    }
  }

  /**
   * How long a store may have visible messages and no live lease: until its latest deliberate wait ends
   * (a queued slot's due time, a dead lease's expiry + skew); then two reconciler ticks (one to repair,
   * one more if that announcement was lost too) plus one per reconciler run that crashed meanwhile; the
   * re-announcement backoff its slots have reached (grace × 2^(r+1)); clock skew; one round of the
   * attention queue; plus two periods and the approximate-count lag when only the sweep can find it
   * (excused: a false-empty receive or an ingest that died between its send and its enqSeq bump).
   */
  strandBound(
    state: Excuses & { spec: { storeId: string } },
    since: number,
    roundMs: number,
    reconcilerCrashes: number,
  ): number {
    const item = this.world.dispatchItem(state.spec.storeId);
    let deliberate = since;
    let resends = 0;
    for (const slot of Object.values(item?.slots ?? {})) {
      deliberate = Math.max(deliberate, slot.at + (slot.s === 'l' ? CLOCK_SKEW_MS : 0));
      if (slot.s === 'q') resends = Math.max(resends, slot.r ?? 0);
    }
    const excused = sweepExcused(state);
    return (
      deliberate -
      since +
      (2 + reconcilerCrashes) * (RECONCILER_PERIOD_MS + RECONCILER_JITTER_MS + RECONCILER_RUN_BOUND_MS) +
      CLOCK_SKEW_MS +
      ATTENTION_GRACE_MS * 2 ** (resends + 1) +
      roundMs +
      (excused ? 2 * RECONCILER_PERIOD_MS + APPROXIMATE_LAG_MS : 0)
    );
  }

  /** ---- 8. idle costs nothing: after the run drained, a store still holding a slot or its active mark. */
  notIdle(boundMs: number): void {
    const busy = [...this.world.stores()]
      .map((s) => ({ id: s.spec.storeId, item: this.world.dispatchItem(s.spec.storeId) }))
      .filter(({ item }) => notIdle(item))
      .map(
        ({ id, item }) =>
          `${id} (slots ${JSON.stringify(item?.slots)}, active ${item?.activeShard !== undefined})`,
      );
    this.fail(8, `not idle ${boundMs / 60_000} min after every task was settled: ${busy.join('; ')}`);
  }

  notDrained(): void {
    const left = [...this.world.tasks()].filter((t) => !this.world.settled(t));
    const queued = [...this.world.stores()].map((s) => `${s.spec.storeId}:${heldMessages(s)}`);
    this.fail(
      1,
      `not drained within the horizon: ${left.length} task(s) neither delivered nor dead-lettered; queues ${queued.join(' ')}`,
    );
  }
}
