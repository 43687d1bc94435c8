import {
  effectivePolicy,
  readStoreCampaigns,
  type CampaignBook,
  type EffectivePolicy,
  type StoreCampaigns,
} from './campaigns.js';
import type { Clock, StoreRegistry } from './ports.js';
import type { Policy } from './plans.js';
import { isConsumable, type StoreRecord } from './store-model.js';
import { STORE_RECHECK_MS } from './timing.js';

/** What a slice asks before each marketplace call (lambdas/core/slice.ts). */
export interface SliceWatch {
  /**
   * `go`: the store as read less than the recheck interval ago lets a slice under `policy` call; `changed`: it
   * no longer does (not active, gone, or a lower cap or rate in force); `late`: the deadline passed while reading.
   */
  recheck(policy: Policy, deadline: number): Promise<'go' | 'changed' | 'late'>;
}

/** How a slice re-reads its store; WATCH_RULES unless the simulation runs a broken variant. */
export interface WatchRules {
  /** A call needs a read of the store begun less than this long before it. */
  recheckMs: number;
  /** A slice taken under `slice` may go on under `now`, the active store's policy in force as last read. */
  keeps(slice: Policy, now: Policy): boolean;
}

export const WATCH_RULES: WatchRules = {
  recheckMs: STORE_RECHECK_MS,
  // Neither its cap nor its rate lowered (a raised one, or other fields, wait for the store's next slice).
  keeps: (slice, now) =>
    now.maxConcurrentConsumers >= slice.maxConcurrentConsumers && now.ratePerSecond >= slice.ratePerSecond,
};

export interface StoreWatchDeps {
  stores: StoreRegistry;
  campaigns?: CampaignBook;
  clock: Clock;
  watchRules?: WatchRules;
}

/**
 * The store as a worker last read it: the record and its campaigns (through their cache), and when that read
 * began. A slice keeps no more than a second-old view (invariant 13: "paused means paused" within
 * STORE_RECHECK_MS): before each call it reads again once the interval has passed, measured from the read's
 * start, so whatever the read returned was true less than the interval before the call; a read slower than the
 * interval is followed by another.
 */
export class StoreWatch implements SliceWatch {
  private readonly rules: WatchRules;
  /** The last read found no record (the store was deleted): `store` keeps the one before. */
  private gone = false;

  constructor(
    private readonly deps: StoreWatchDeps,
    private store: StoreRecord,
    private campaigns: StoreCampaigns,
    /** When the read of `store` began, on the worker's clock. */
    private readAt: number,
  ) {
    this.rules = deps.watchRules ?? WATCH_RULES;
  }

  /** The policy in force at `now` under the record and campaigns last read (the last one found if the store is gone). */
  policyAt(now: number): EffectivePolicy {
    return effectivePolicy(this.store, this.campaigns, now);
  }

  async recheck(policy: Policy, deadline: number): Promise<'go' | 'changed' | 'late'> {
    while (this.deps.clock.now() - this.readAt >= this.rules.recheckMs) {
      const startedAt = this.deps.clock.now();
      if (startedAt >= deadline) return 'late';
      const store = await this.deps.stores.get(this.store.storeId);
      this.gone = store === undefined;
      if (store) {
        this.campaigns = await readStoreCampaigns(this.deps.campaigns, store);
        this.store = store;
      }
      this.readAt = startedAt;
    }
    // A read that ran past the deadline: no call starts after it (invariant 4), whatever it found.
    if (this.deps.clock.now() >= deadline) return 'late';
    return this.allows(policy) ? 'go' : 'changed';
  }

  /** A slice under `policy` may go on: the store is active, and the rules keep it under the policy in force. */
  private allows(policy: Policy): boolean {
    if (this.gone || !isConsumable(this.store.status)) return false;
    return this.rules.keeps(
      policy,
      effectivePolicy(this.store, this.campaigns, this.deps.clock.now()).policy,
    );
  }
}
