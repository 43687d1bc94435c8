import type { DispatchItem } from '../lambdas/core/dispatch-model.js';
import type { DeadLetterReason } from '../lambdas/core/ports.js';
import type { StoreRecord } from '../lambdas/core/store-model.js';
import type { SimCampaigns } from './model-campaigns.js';
import type { StoreSpec } from './scenario.js';
import type { Actor } from './scheduler.js';
import type { SimMessage, SimQueue } from './sim-sqs.js';

/**
 * The data the models keep and the narrow view the invariants read. The invariants never import the
 * world: they see it only through `WorldView`, and the models report events to them through `Checks`.
 */

/** One task (storeId + eventId), across all its copies. */
export interface TaskTrack {
  storeId: string;
  eventId: string;
  /** Copies in the store queue (visible, in flight or delayed). */
  copies: number;
  deadLettered: number;
  accepted: boolean;
}

export interface LeaseTrack {
  storeId: string;
  slotId: string;
  fence: number;
  /** True time the lease was taken. */
  startedAt: number;
  received: number;
  calls: number;
  /** The cap in force when it was taken (campaign windows included), set by the lease check. */
  cap?: number;
  /** The messages per slice of the store record its worker read before taking it, set by the lease check. */
  perSlice?: number;
  /** True time of this lease's latest pacing reservation (restartTat/advanceTat), several consumers only. */
  reservedAt?: number;
}

/**
 * One marketplace call as its Idempotency-Key sees it. `state`: in flight; answered ok to its caller;
 * answered with a failure; `unknown` (timed out: the caller cannot tell whether it applied); `dropped`
 * (its caller crashed during the call).
 */
export interface KeyCall {
  readonly actor: Actor;
  state: 'inflight' | 'ok' | 'failed' | 'unknown' | 'dropped';
  /** The marketplace succeeded on it (applied the effect or answered from its idempotency record). */
  succeeded: boolean;
  /** When it answered ok to its caller. */
  okAt?: number;
  /** Its caller's settle('delivered') landed (the effect-once record says delivered, by this caller). */
  confirmed: boolean;
  /** Its caller's settle('delivered') failed with a hard error that did not land (sim/model-errors.ts). */
  settleLost?: boolean;
}

/** Why a repeated successful call with one key is allowed: its first caller could not know, or died. */
export type RepeatExcuse = 'timeout' | 'crash' | 'stall' | 'error';

/** Why only the sweep may find a store's backlog, as the protocol allows. */
export interface Excuses {
  /** Live ingest actors that made a task durable and have not yet bumped enqSeq after it. */
  untracked: Set<number>;
  /** Ingest actors that crashed between their send and their bump: the sweep may find their task (excused). */
  orphans: Set<number>;
  /** A false-empty receive was injected: only the sweep may find this backlog (excused). */
  falseEmpty: boolean;
}

export interface StoreState extends Excuses {
  spec: StoreSpec;
  record: StoreRecord;
  /** The store's work queue (normal tasks). */
  queue: SimQueue;
  /** The store's high-priority work queue (task priority within a store), drained first. */
  high: SimQueue;
  dlq: SimQueue;
}

/** Messages in both of the store's work queues (visible, in flight or delayed). */
export const heldMessages = (state: StoreState): number =>
  state.queue.messages.size + state.high.messages.size;

/** A store not idle (invariant 8): it still holds a slot (a lease, or an attention that can act) or its active mark. */
export const notIdle = (item: DispatchItem | undefined): boolean =>
  item !== undefined && (Object.keys(item.slots).length > 0 || item.activeShard !== undefined);

/** In the sparse `active` index, which the reconciler reads: only with both its keys. */
export const indexed = (item: DispatchItem | undefined): boolean =>
  item?.activeShard !== undefined && item.headSentAt !== undefined;

/** Marked active as the code before f267a90 did it: `activeShard` alone, so in no index. */
export const legacyActive = (item: DispatchItem | undefined): boolean =>
  item?.activeShard !== undefined && item.headSentAt === undefined;

/** Whether either of the store's work queues has a visible message. */
export const hasVisibleWork = (state: StoreState, now: number): boolean =>
  state.queue.hasVisible(now) || state.high.hasVisible(now);

export interface SimStats {
  steps: number;
  virtualMs: number;
  tasks: number;
  delivered: number;
  deadLettered: number;
  crashes: number;
  /** Workers killed by their Lambda timeout (a zombie stalled past it). */
  workerTimeouts: number;
  /** Worker invocations, and those that ran more than one attention (concurrently). */
  invocations: number;
  batchedInvocations: number;
  attentionsPublished: number;
  attentionsLost: number;
  rawDuplicateSuccesses: number;
  /** Repeated successful calls by why they were allowed. */
  repeatsAfterTimeout: number;
  repeatsAfterCrash: number;
  /** …because the caller that got the 2xx stalled past its claim before settling (a zombie). */
  repeatsAfterStall: number;
  /** …because its caller's settle after the 2xx failed (a hard DynamoDB error, every try). */
  repeatsAfterError: number;
  /** Hard SQS/DynamoDB errors injected, and those whose request had applied (sim/model-errors.ts). */
  hardErrors: number;
  hardErrorsApplied: number;
  /** Operator actions acknowledged (pause, resume, cap lowered, cap raised: sim/model-operator.ts). */
  operatorActions: number;
  /** …of which PATCHes with `setOverrides` (a plan change naming its field, messages per slice lowered). */
  overrideMerges: number;
  /** Store writes refused because another write came first (two operators at once: invariant 14). */
  storeWriteConflicts: number;
  /** 429s answered to stores whose throttle scope is the task (`throttleScope: 'task'`): the task alone waits. */
  taskScopeThrottles: number;
  /** Answers that said the store's window quota is spent (`RateLimit-Remaining: 0`): the store holds to its reset. */
  quotaHolds: number;
  /** Marketplace calls of a paused store by a slice whose store read came before the pause landed. */
  callsWhilePaused: number;
  /** Marketplace calls under a lease taken with a cap above the store's own cap at the call (a plan change). */
  callsOverLoweredCap: number;
  /** Dead letters moved back to their store's queue by a redrive (sim/model-redrive.ts). */
  redriven: number;
  /**
   * Dead-letter sends for exhausted retries by an attempt claimed after an earlier dead-lettering of its task (a
   * redriven copy, a client's repeated POST): each checked to follow a fresh `maxAttempts` budget of calls
   * (invariant 15).
   */
  redriveBudgetChecks: number;
  /**
   * Empty checks whose first long poll brought messages while the other still ran, and that other's answer,
   * settled at the slice's end, held messages too (handed back before the lease went: lambdas/core/slice-receive.ts).
   */
  restsHandedBack: number;
  /** Attentions sent to the confirm queue (a slice's empty look handed on), and confirm slices that found tasks. */
  confirmHandoffs: number;
  confirmTrickles: number;
  /**
   * Shared-schedule blocks reserved past the standard lateness (the reach, rate.ts: `tatLate` over
   * LATENESS_CEILING_MS), and lowerings placed the gap after such a block (`placeTat`).
   */
  reachBlocks: number;
  lateLowerings: number;
  sweepRescues: number;
  /** Leases taken under a campaign's cap (other than the store's own), and those live as a boundary passed. */
  campaignLeases: number;
  leasesAcrossBoundary: number;
  /** Worker calls stalled beyond the lease margin, and lease writes refused to a worker whose fence was stale. */
  zombieStalls: number;
  fencedWrites: number;
  /** Store-queue messages SQS delivered twice; tasks settled stale (an older version after a newer). */
  duplicateTasks: number;
  stale: number;
  /** Delivered settles DynamoDB left unprocessed once (sim/model-delivered-settle.ts). */
  unprocessedSettles: number;
  /** Items an upgrade from before f267a90 left marked active without headSentAt (sim/model-upgrade.ts). */
  legacyItems: number;
  maxAttentionsPerSlot: number;
  maxStrandedMs: number;
  maxStrandedRatio: number;
  maxWaitSlicesRatio: number;
  /** Worst calls-in-5-s over the rate bound, any store. */
  maxRateRatio: number;
}

export const emptyStats = (): SimStats => ({
  steps: 0,
  virtualMs: 0,
  tasks: 0,
  delivered: 0,
  deadLettered: 0,
  crashes: 0,
  workerTimeouts: 0,
  invocations: 0,
  batchedInvocations: 0,
  attentionsPublished: 0,
  attentionsLost: 0,
  rawDuplicateSuccesses: 0,
  repeatsAfterTimeout: 0,
  repeatsAfterCrash: 0,
  repeatsAfterStall: 0,
  repeatsAfterError: 0,
  hardErrors: 0,
  hardErrorsApplied: 0,
  operatorActions: 0,
  overrideMerges: 0,
  storeWriteConflicts: 0,
  taskScopeThrottles: 0,
  quotaHolds: 0,
  callsWhilePaused: 0,
  callsOverLoweredCap: 0,
  redriven: 0,
  redriveBudgetChecks: 0,
  restsHandedBack: 0,
  confirmHandoffs: 0,
  confirmTrickles: 0,
  reachBlocks: 0,
  lateLowerings: 0,
  sweepRescues: 0,
  campaignLeases: 0,
  leasesAcrossBoundary: 0,
  zombieStalls: 0,
  fencedWrites: 0,
  duplicateTasks: 0,
  stale: 0,
  unprocessedSettles: 0,
  legacyItems: 0,
  maxAttentionsPerSlot: 0,
  maxStrandedMs: 0,
  maxStrandedRatio: 0,
  maxWaitSlicesRatio: 0,
  maxRateRatio: 0,
});

/** What the invariants read of the world. */
export interface WorldView {
  readonly now: number;
  readonly workers: number;
  readonly stats: SimStats;
  readonly reconcilerCrashes: number;
  /** An upgrade from before f267a90 happened and no clean reconciler run has ended since (sim/model-upgrade.ts). */
  readonly upgradePending: boolean;
  /** The run's campaign windows (fixed per seed). */
  readonly campaigns: SimCampaigns;
  log(line: string): void;
  stores(): Iterable<StoreState>;
  store(storeId: string): StoreState | undefined;
  tasks(): Iterable<TaskTrack>;
  /** Live (not finished, not crashed) worker leases by actor id. */
  leases(): ReadonlyMap<number, LeaseTrack>;
  slicesStarted(storeId: string): number;
  /** The attention queue's messages and the confirm queue's. */
  attentionMessages(): Iterable<SimMessage>;
  attentionOf(message: SimMessage): { storeId: string; slotId: string; confirm: boolean } | undefined;
  dispatchItem(storeId: string): DispatchItem | undefined;
  /** Effects the marketplace applied for one task (`storeId:eventId`). */
  effects(task: string): number;
  /** The store's own cap now: its Stores record's (an operator's plan change included). */
  ownCap(storeId: string): number;
  /** The store's own cap in the record this worker last read of the store (its policy for the lease). */
  capRead(actorId: number, storeId: string): number | undefined;
  /** The messages per slice in the record this worker last read of the store (an operator may lower it). */
  perSliceRead(actorId: number, storeId: string): number | undefined;
  /** The store's record is not consumable now (paused by an operator). */
  paused(storeId: string): boolean;
  /** When the store's record last stopped being consumable (true time); undefined while it is consumable. */
  pausedSince(storeId: string): number | undefined;
  /** The own caps the store's record held at some instant after `from` (true time), up to now. */
  capsSince(storeId: string, from: number): number[];
  /** Whether the record this worker last read of the store was consumable (undefined: never read). */
  readActive(actorId: number, storeId: string): boolean | undefined;
  /** Delivered (the marketplace applied it), dead-lettered, or settled as stale (superseded by a newer version). */
  settled(track: { storeId: string; eventId: string; deadLettered: number }): boolean;
}

/** The events the models report as they happen, checked at once. */
export interface Checks {
  taskLeftQueue(track: TaskTrack): void;
  effectApplied(task: string): void;
  /** The marketplace applied a versioned task's effect for the store's entity. */
  versionApplied(storeId: string, entityId: string, version: number): void;
  /** A marketplace call starts; `keyCalls`: every call with its Idempotency-Key so far, this one last. */
  callStarted(actor: Actor, storeId: string, inFlight: number, keyCalls: readonly KeyCall[]): void;
  /** The marketplace succeeded on a call (`keyCalls`: every call with its key so far, this one last). */
  callSucceeded(key: string, keyCalls: readonly KeyCall[]): void;
  received(state: StoreState, lease: LeaseTrack): void;
  /** Task priority (invariant 11): a high task's first copy landed in the store's high queue. */
  highSent(state: StoreState, eventId: string): void;
  /** A high task left the high queue's visible set for the first time (received, or moved to the DLQ). */
  highReached(storeId: string, eventId: string): void;
  /** A receive of the store's high queue came back empty although it held a visible message (injected). */
  highMissed(storeId: string): void;
  /** A marketplace call starts for this task of the store. */
  taskCallStarted(storeId: string, eventId: string): void;
  /** A worker's send of this task to its store's DLQ landed, with the reason it gives (SQS's own moves are not). */
  deadLettered(actor: Actor, track: TaskTrack, reason: DeadLetterReason): void;
  /** A worker's claim of the task's effect-once record was granted. */
  taskClaimed(actor: Actor, storeId: string, eventId: string): void;
  /**
   * A slot was added without a lease behind it (anything but a fan-out) and the store now holds `slots` (invariant 7:
   * only a live lease adds a store's second).
   */
  slotIssued(actor: Actor, storeId: string, slots: number): void;
  /** A settle `dead_lettered` of the task's record landed. */
  deadLetterSettled(storeId: string, eventId: string): void;
  /** A marketplace 429 answered a call of the store; `until`: its Retry-After end, true time. */
  throttled(actor: Actor, storeId: string, eventId: string, until: number): void;
  /** An answer said the store's window quota is spent until `until` (its Reset's end, true time). */
  quotaSpent(actor: Actor, storeId: string, until: number): void;
  /** `actor`'s holdTat write landed for the store; `until` in true time. */
  holdLanded(actor: Actor, storeId: string, until: number): void;
  /** A pacer's reservation landed on the store's shared schedule: its first instant, in the schedule's numbers. */
  reservedFrom(storeId: string, first: number): void;
  /** A worker's acquire succeeded: `lease` is now in `leases()` under `actor`. */
  leaseTaken(actor: Actor, lease: LeaseTrack): void;
  sweepRescue(state: StoreState): void;
  /** The first clean reconciler run since an upgrade from before f267a90 ended: no store may be out of the index. */
  upgradeSettled(): void;
  /** Ingest answered 202 for this task: it must be durable (`track`: its copies, undefined if never sent). */
  accepted(storeId: string, eventId: string, track: TaskTrack | undefined): void;
  /** Invariant 14: an operator's acknowledged change of a store record was undone by another write. */
  changeLost(message: string): void;
}
