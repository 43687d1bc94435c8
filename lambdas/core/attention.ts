import {
  readStoreCampaigns,
  type CampaignBook,
  type CampaignTransitions,
  type EffectivePolicy,
} from './campaigns.js';
import { DECIDES_EMPTY, type AttentionMessage, type AttentionReason } from './messages.js';
import { MetricNames } from './names.js';
import type { StoreRegistry } from './ports.js';
import { ENSURE_SLOT, publishAttention, signalStore } from './signal.js';
import {
  countSliceEnd,
  errorBackoffMs,
  runSlice,
  type Lease,
  type SliceDeps,
  type SliceEndReason,
  type SliceResult,
} from './slice.js';
import { isConsumable, policyOf, type StoreRecord } from './store-model.js';
import { StoreWatch, type SliceWatch, type WatchRules } from './store-watch.js';
import { CLOCK_SKEW_MS, leaseTtlMs, VISIBILITY_MARGIN_SECONDS } from './timing.js';
import { guardUntilVisible } from './wake.js';
import { scheduleClearAt } from './rate.js';

export interface WorkerDeps extends SliceDeps {
  stores: StoreRegistry;
  /** How a slice re-reads its store; WATCH_RULES unless the simulation runs a broken variant. */
  watchRules?: WatchRules;
  settings: SliceDeps['settings'] & { marketplaceTimeoutMs: number };
  /** Campaign windows (absent: none); read through a short cache (CachedCampaignBook). */
  campaigns?: CampaignBook;
  /** This container's last-seen campaign per store, for the applied/reverted log lines. */
  campaignTransitions?: CampaignTransitions;
}

/** Logs a store's slices starting or ceasing to run under a campaign (as this container sees it). */
const noteCampaignTransition = (deps: WorkerDeps, storeId: string, effective: EffectivePolicy): void => {
  for (const { event, campaignId } of deps.campaignTransitions?.note(storeId, effective) ?? [])
    deps.telemetry.info(event, {
      campaignId,
      ...(event === 'campaign applied'
        ? { campaignScope: effective.scope, plan: effective.plan, policy: effective.policy }
        : { plan: effective.plan }),
    });
};

/** The store's policy at any instant: its own, or a campaign's between that campaign's from and until. */
type PolicyAt = (now: number) => EffectivePolicy;

export const DISCARD_REASONS = [
  'paused',
  'maintenance',
  'disabled',
  'unknown_store',
  'stale',
  'over_limit',
  'coalesced',
] as const;
export type DiscardReason = (typeof DISCARD_REASONS)[number];

export type AttentionOutcome =
  | { kind: 'discarded'; reason: DiscardReason }
  | { kind: 'postponed'; until: number }
  | { kind: 'sliced'; slice: SliceResult };

/** The store's count of discarded attentions: best effort, so a failed count never turns a discard into a retry. */
const noteDiscarded = (deps: WorkerDeps, storeId: string): Promise<void> =>
  deps.dispatch
    .noteDiscarded(storeId)
    .catch((error: unknown) => deps.telemetry.warn('discard not counted', { error: String(error) }));

const discard = (deps: WorkerDeps, reason: DiscardReason): AttentionOutcome => {
  deps.telemetry.count(MetricNames.attentionsDiscarded, 1, { reason });
  return { kind: 'discarded', reason };
};

type Acquired = { kind: 'lease'; lease: Lease; effective: EffectivePolicy } | AttentionOutcome;

const acquireLease = async (
  deps: WorkerDeps,
  storeId: string,
  slotId: string,
  policyAt: PolicyAt,
  /** The due time the attention announces (`dueAt`), if its publisher said. */
  announced: number | undefined,
): Promise<Acquired> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = deps.clock.now();
    // The policy in force at the lease's own instant: a campaign boundary passed since the store was read
    // already counts (the slot-count condition then holds the store to the cap in force now).
    const effective = policyAt(now);
    const policy = effective.policy;
    const max = policy.maxConcurrentConsumers;
    const expiresAt = now + leaseTtlMs(policy, deps.settings.marketplaceTimeoutMs);
    const result = await deps.dispatch.acquire(storeId, slotId, { now, expiresAt, max });
    if (result.ok) {
      const slot = result.item.slots[slotId];
      if (slot?.s !== 'l') throw new Error(`lease write for ${storeId}/${slotId} returned no lease`);
      deps.telemetry.count(MetricNames.leaseAcquired);
      return {
        kind: 'lease',
        effective,
        lease: {
          slotId,
          fence: slot.f,
          seenSeq: result.item.enqSeq,
          startedAt: now,
          expiresAt,
          // A lone consumer's pace: its slot's carried one, and never before the shared schedule (instants other
          // consumers reserved before a cap was lowered to 1, or a hold) and its last block's lateness.
          nextCallAt: Math.max(
            now,
            slot.n ?? now,
            scheduleClearAt(result.item.tat, result.item.tatLate) ?? now,
          ),
          slotsAtStart: Object.keys(result.item.slots).length,
          ...(slot.e === undefined ? {} : { errorStreak: slot.e }),
          ...(result.item.activeSince === undefined ? {} : { activeSince: result.item.activeSince }),
          ...(result.item.rate === undefined ? {} : { rate: result.item.rate }),
          ...(result.item.tatLate === undefined ? {} : { tatLate: result.item.tatLate }),
        },
      };
    }
    const slot = result.current?.slots[slotId];
    if (!slot || slot.s !== 'q') {
      // Already leased (a duplicate delivery) or gone.
      await noteDiscarded(deps, storeId);
      return discard(deps, 'stale');
    }
    if (slot.at > now + CLOCK_SKEW_MS) {
      if (announced !== undefined && announced < slot.at) {
        // Surplus: the slot was re-queued or reclaimed since this attention was published, and that write
        // published the slot's own attention for its new time. Re-published, surplus attentions of a slot
        // would circulate instead of collapsing (invariant 7, simulation seed 156704).
        await noteDiscarded(deps, storeId);
        return discard(deps, 'stale');
      }
      // Early (a delay longer than SQS's 900 s, or an older publisher's attention): wait again, not spin.
      await publishAttention(deps, storeId, slotId, 'requeue', policy.priority, slot.at);
      return { kind: 'postponed', until: slot.at };
    }
    // The store holds more slots than its (lowered) limit: give this one up, unless another gave up first.
    deps.telemetry.count(MetricNames.leaseBlocked, 1, { reason: 'over_limit' });
    const dropped = await deps.dispatch.dropQueued(storeId, slotId, max);
    if (dropped.ok) return discard(deps, 'over_limit');
  }
  await noteDiscarded(deps, storeId);
  return discard(deps, 'stale');
};

/**
 * Why a slice's slot goes back on a queue: an empty look handed on (`confirm`, to the confirm queue); a trickle the
 * empty check caught, or only messages hidden for a retry (`recheck`: the next slice keeps its empty decision);
 * otherwise the store's next turn (`requeue`).
 */
const requeueReason = (end: SliceEndReason): AttentionReason => {
  if (end === 'confirm') return 'confirm';
  return end === 'yielded' || end === 'deferred' ? 'recheck' : 'requeue';
};

/**
 * Ends the slice: idle (done in the slice), hand the slot back as a queued attention, or let it go.
 * Resolves true when it re-published the store's attention for its next turn (backlog remains), not for a
 * hand-off to the confirm queue.
 */
const finishSlice = async (
  deps: WorkerDeps,
  store: StoreRecord,
  policyAt: PolicyAt,
  lease: Lease,
  slice: SliceResult,
  /** The slice paced alone (a cap of 1 when its lease was taken). */
  single: boolean,
): Promise<boolean> => {
  countSliceEnd(deps, slice);
  // A Retry-After an erring slice was told holds every consumer of the store, even when the slice's own hold (or
  // the settle before it) is what failed: otherwise the others would call again after the 1 s first hold. So does
  // a spent window quota whose hold the slice could not write, however it ended.
  if (slice.throttledUntil !== undefined && slice.throttledUntil > deps.clock.now())
    await deps.dispatch
      .holdTat(store.storeId, slice.throttledUntil)
      .catch((error: unknown) => deps.telemetry.warn('store not held', { error: String(error) }));
  if (slice.resumeAt === undefined) return false; // empty (idle or shared) or lease lost
  let resumeAt = slice.resumeAt;
  let errorStreak: number | undefined;
  if (slice.end === 'error') {
    // Messages in hand may stay hidden until the lease ends (+ visibility margin): forbid "idle" until
    // they are surely visible again, or the next slice could find the queue empty and strand them.
    // (Or longer: a receive that stalled past the lease hides its messages from when it answered.)
    await guardUntilVisible(
      deps.dispatch,
      store.storeId,
      Math.max(lease.expiresAt + VISIBILITY_MARGIN_SECONDS * 1000, slice.hiddenUntil ?? 0),
    );
    // Errors in a row back off (a deleted queue, denied receives): the store is looked at less and less
    // often, down to once per 15 min, and says so, instead of slicing every 5 s forever.
    errorStreak = (lease.errorStreak ?? 0) + 1;
    resumeAt = Math.max(resumeAt, deps.clock.now() + errorBackoffMs(errorStreak, deps.random));
    deps.telemetry.count(MetricNames.sliceErrorBackoff, 1, {
      streak: errorStreak >= 3 ? 'repeated' : 'first',
    });
    deps.telemetry.warn('store backs off after slice errors', { errorStreak, resumeAt });
  }
  // The policy in force as the slice ends, not at its lease: a campaign that lowered the cap meanwhile lets
  // the slot go, and the attention goes to the level the store has now.
  const policy = policyAt(deps.clock.now()).policy;
  // Two tries: a release refused because the other slots left meanwhile makes this the store's last slot, which
  // the lowered limit then admits (two slices over a lowered cap, ending together: each requeue refused, then one
  // release refused as the last slot — left leased, the store waited a lease for the reconciler's reclaim).
  for (let attempt = 0; attempt < 2; attempt++) {
    const requeued = await deps.dispatch.requeue(store.storeId, lease.slotId, lease.fence, {
      dueAt: resumeAt,
      ...(errorStreak === undefined ? {} : { errorStreak }),
      max: policy.maxConcurrentConsumers,
      nextCallAt: slice.nextCallAt,
      // Paced alone, the pace goes on the store's schedule too: a cap raised since makes this slot's next lease
      // (and the slots it fans out) pace there, after this lease's last call.
      ...(single ? { tat: slice.nextCallAt } : {}),
      throttled: slice.end === 'throttled',
      ...(slice.end === 'confirm' ? { handoff: true } : {}),
      ...(slice.headSentAt === undefined ? {} : { headSentAt: slice.headSentAt }),
    });
    if (requeued.ok) {
      await publishAttention(
        deps,
        store.storeId,
        lease.slotId,
        requeueReason(slice.end),
        policy.priority,
        resumeAt,
        lease.correlationId,
      );
      // A hand-off is not the store's next turn: its confirm slice decides whether there is one.
      return slice.end !== 'confirm';
    }
    const slot = requeued.current?.slots[lease.slotId];
    if (slot?.s !== 'l' || slot.f !== lease.fence) return false;
    // Over a lowered limit: this slot goes away; the remaining ones carry on.
    if ((await deps.dispatch.release(store.storeId, lease.slotId, lease.fence)).ok) return false;
  }
  return false;
};

const runLeased = async (
  deps: WorkerDeps,
  store: StoreRecord,
  policyAt: PolicyAt,
  effective: EffectivePolicy,
  lease: Lease,
  watch: SliceWatch,
): Promise<SliceResult> => {
  // A slice runs with the policy in force when its lease was taken, to its end (bounded by maxSliceSeconds), or
  // until a re-read finds the store no longer active or its cap or rate lowered (`store_changed`).
  const policy = effective.policy;
  deps.telemetry.count(MetricNames.slicesStarted);
  if (effective.scope !== undefined)
    deps.telemetry.count(MetricNames.slicesUnderCampaign, 1, { scope: effective.scope });
  // runSlice turns any error of its loop into an `error` result itself (keeping a Retry-After it was told and
  // how long its messages may stay hidden), so nothing is caught here.
  const slice = await runSlice(deps, store, policy, lease, watch);
  const republished = await finishSlice(
    deps,
    store,
    policyAt,
    lease,
    slice,
    policy.maxConcurrentConsumers === 1,
  );
  deps.telemetry.info('slice ended', {
    // A slice is one lease of one slot: slot id and fencing token name it uniquely.
    sliceId: `${lease.slotId}:${lease.fence}`,
    end: slice.end,
    // 1 when the store's attention went back on the queue (a number, so log queries can sum it per store).
    republished: republished ? 1 : 0,
    handled: slice.handled,
    delivered: slice.delivered,
    durationMs: deps.clock.now() - lease.startedAt,
    // The audit trail of campaign windows: which policy this slice ran under.
    effectiveSource: effective.source,
    ...(effective.campaignId === undefined
      ? {}
      : { campaignId: effective.campaignId, campaignScope: effective.scope }),
  });
  return slice;
};

/**
 * One attention: check the store's state and plan, take the lease its slot grants, consume a bounded
 * slice, then re-signal or go idle. Throws before a lease is held (the attention is then retried), or when the
 * slice's end could not be written back (its requeue or publish failed: the attention comes back and finds its
 * slot leased, `stale`, and the lease expires into the reconciler's reclaim).
 */
export const handleAttention = async (
  deps: WorkerDeps,
  message: AttentionMessage,
): Promise<AttentionOutcome> => {
  const readAt = deps.clock.now();
  const store = await deps.stores.get(message.storeId);
  // Every log line and metric record of this attention names its store, tenant and correlation id.
  const telemetry = deps.telemetry.scoped({
    storeId: message.storeId,
    ...(store === undefined ? {} : { tenantId: store.tenantId }),
    ...(message.correlationId === undefined ? {} : { correlationId: message.correlationId }),
  });
  try {
    return await attend({ ...deps, telemetry }, message, store, readAt);
  } finally {
    telemetry.end();
  }
};

/**
 * Drops the queued slot of an attention whose store was read not consumable. A resume that landed between that
 * read and the drop found this slot queued and issued none of its own (coalesced, limit 1): the store, active
 * again with its backlog, would wait for the reconciler's sweep. So once the drop took a slot, the store is read
 * again, and signalled as the resume would have if it is consumable now. A resume after that read finds the slot
 * gone and issues its own: either way one attention. One more read per discarded attention, none otherwise.
 */
const dropForResume = async (deps: WorkerDeps, storeId: string, slotId: string): Promise<void> => {
  const dropped = await deps.dispatch.dropQueued(storeId, slotId);
  if (!dropped.ok) return;
  const store = await deps.stores.get(storeId);
  if (store !== undefined && isConsumable(store.status))
    await signalStore(deps, storeId, { limit: 1, reason: 'resume', priority: policyOf(store).priority });
};

const attend = async (
  deps: WorkerDeps,
  message: AttentionMessage,
  store: StoreRecord | undefined,
  /** When the read of `store` began. */
  readAt: number,
): Promise<AttentionOutcome> => {
  if (!store) {
    if (message.slotId !== ENSURE_SLOT) await deps.dispatch.dropQueued(message.storeId, message.slotId);
    return discard(deps, 'unknown_store');
  }
  if (!isConsumable(store.status)) {
    // Paused, maintenance, disabled: the backlog waits; resuming issues a fresh slot.
    if (message.slotId !== ENSURE_SLOT) await dropForResume(deps, store.storeId, message.slotId);
    return discard(deps, store.status as DiscardReason);
  }
  const campaigns = await readStoreCampaigns(deps.campaigns, store);
  // The slice re-reads the store before its calls (at most once per STORE_RECHECK_MS); its end goes by the last read.
  const watch = new StoreWatch(deps, store, campaigns, readAt);
  const policyAt: PolicyAt = (now) => watch.policyAt(now);
  let slotId = message.slotId;
  if (slotId === ENSURE_SLOT) {
    slotId = deps.ids.next();
    const now = deps.clock.now();
    // Ingest could not record its enqueue: record it now, so a lease about to mark the store idle fails to.
    await deps.dispatch.recordEnqueued(store.storeId, 1, now);
    const issued = await deps.dispatch.issueSlot(store.storeId, slotId, now, 1, now);
    if (!issued.ok) {
      await noteDiscarded(deps, store.storeId);
      return discard(deps, 'coalesced');
    }
  }
  const acquired = await acquireLease(deps, store.storeId, slotId, policyAt, message.dueAt);
  if (acquired.kind !== 'lease') return acquired;
  if (message.correlationId !== undefined) acquired.lease.correlationId = message.correlationId;
  if (message.reason === 'confirm') acquired.lease.confirming = true;
  if (DECIDES_EMPTY.includes(message.reason)) acquired.lease.decidesEmpty = true;
  noteCampaignTransition(deps, store.storeId, acquired.effective);
  return {
    kind: 'sliced',
    slice: await runLeased(deps, store, policyAt, acquired.effective, acquired.lease, watch),
  };
};
