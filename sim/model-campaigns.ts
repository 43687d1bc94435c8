import type { Campaign, CampaignBook } from '../lambdas/core/campaigns.js';
import { T0 } from './constants.js';
import { Rng } from './rng.js';

/**
 * Campaign windows in the simulation: fixed per seed, put before the run, so their boundaries pass while
 * tasks flow and leases are in flight, with nothing at the boundaries. They change only the concurrency
 * cap: raised and lowered, among values ≥ 2, and down to 1 — for the rest of the run, or (half the time) back
 * within it, while the lone consumer's lease may run: that lease has no company (a fan-out is fenced by its
 * lease), and its requeue writes its pace to the shared schedule the leases the raise admits pace on. Stores
 * whose own cap is 1 get no campaign, nor does a tenant whose stores include one.
 */
export interface SimCampaigns {
  store: ReadonlyMap<string, Campaign[]>;
  tenant: Campaign[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

const window = (rng: Rng, id: string, cap: number, ends: Rng): Campaign => {
  const from = T0 + rng.int(1_000, 45_000);
  // A window down to one consumer lasts the whole run or, in half the cases, ends within it (the cap goes from 1
  // back to several, since session 9): drawn on a stream of its own, so the other windows' draws stay.
  const length =
    cap !== 1 ? rng.int(2_000, 40_000) : ends.chance(0.5) ? ends.int(2_000, 40_000) : 80 * 24 * 3600_000;
  return {
    campaignId: id,
    from: iso(from),
    until: iso(from + length),
    overrides: { maxConcurrentConsumers: cap },
    createdAt: iso(T0),
    updatedAt: iso(T0),
  };
};

/** Drawn from the seed on a stream of their own, so every other draw of the scenario stays as it was. */
export const campaignsFor = (
  seed: number,
  stores: readonly { storeId: string; cap: number }[],
): SimCampaigns => {
  const rng = new Rng(seed ^ 0xca4a);
  const ends = new Rng(seed ^ 0x51e1d);
  const store = new Map<string, Campaign[]>();
  for (const s of stores) {
    if (s.cap < 2 || !rng.chance(0.6)) continue;
    // Lowered (to 1 or 2) as often as raised (to 3–5), sometimes two windows that overlap or follow.
    const list = Array.from({ length: rng.int(1, 2) }, (_, i) =>
      window(rng, `c${i}`, rng.chance(0.5) ? rng.int(1, 2) : rng.int(3, 5), ends),
    );
    store.set(s.storeId, list);
  }
  const tenant =
    stores.every((s) => s.cap >= 2) && rng.chance(0.3)
      ? [window(rng, 't0', rng.pick([1, 2, 3, 4]), ends)]
      : [];
  return { store, tenant };
};

/** Latest `from` among the active ones, the greatest id on a tie: written apart from the core's resolver. */
const active = (list: readonly Campaign[], t: number): Campaign | undefined =>
  list
    .filter((c) => Date.parse(c.from) <= t && t < Date.parse(c.until))
    .sort((a, b) => Date.parse(b.from) - Date.parse(a.from) || (b.campaignId > a.campaignId ? 1 : -1))[0];

/** The cap in force for a store at true time `t`: its own campaign, else its tenant's, else its own cap. */
export const capAt = (campaigns: SimCampaigns, storeId: string, ownCap: number, t: number): number => {
  const campaign = active(campaigns.store.get(storeId) ?? [], t) ?? active(campaigns.tenant, t);
  return campaign?.overrides?.maxConcurrentConsumers ?? ownCap;
};

/** The highest cap a store ever has (bounds that count slots over the whole run). */
export const capMax = (campaigns: SimCampaigns, storeId: string, ownCap: number): number =>
  Math.max(
    ownCap,
    ...[...(campaigns.store.get(storeId) ?? []), ...campaigns.tenant].map(
      (c) => c.overrides?.maxConcurrentConsumers ?? ownCap,
    ),
  );

/**
 * The campaign lists as the core reads them. A read answers at once, not as a scheduled operation: the lists
 * never change during a run and the worker resolves the policy at its acquire's own instant, so the read's
 * timing cannot matter, and seeds whose scenario has no campaign keep their interleavings exactly.
 */
export const campaignBook = (campaigns: SimCampaigns): CampaignBook => ({
  read: (owner) => {
    const list = owner.scope === 'store' ? (campaigns.store.get(owner.id) ?? []) : campaigns.tenant;
    return Promise.resolve({ rev: list.length === 0 ? 0 : 1, campaigns: list.map((c) => ({ ...c })) });
  },
  write: () => Promise.reject(new Error('not simulated')),
});
