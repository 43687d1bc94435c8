import { describe, expect, it } from 'vitest';
import { campaignsFor, capAt } from '../../sim/model-campaigns.js';
import { T0 } from '../../sim/constants.js';
import { variantByName } from '../../sim/variants.js';
import { runSeed, type Variant } from '../../sim/world.js';

/**
 * Campaign windows in the simulation (sim/model-campaigns.ts): the fixed seeds raise and lower stores' caps
 * at simulated instants while leases are in flight; test/sim/simulation.test.ts checks the cap across them
 * on every seed and rejects the `ignores-campaigns` variant. This file checks the model does what it says.
 */
const asBuilt = variantByName('as-built') as Variant;

describe('campaign windows in the simulation', () => {
  it('takes leases under campaign caps, and has leases in flight as boundaries pass', async () => {
    let campaignLeases = 0;
    let acrossBoundary = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { stats } = await runSeed(seed, asBuilt);
      campaignLeases += stats.campaignLeases;
      acrossBoundary += stats.leasesAcrossBoundary;
    }
    expect(campaignLeases).toBeGreaterThan(0);
    expect(acrossBoundary).toBeGreaterThan(0);
  });

  it('draws raised and lowered caps, none for a store whose own cap is 1', () => {
    const caps = new Set<number>();
    for (let seed = 1; seed <= 50; seed++) {
      const stores = [
        { storeId: 'one', cap: 1 },
        { storeId: 'three', cap: 3 },
      ];
      const drawn = campaignsFor(seed, stores);
      expect(drawn.store.has('one')).toBe(false);
      expect(drawn.tenant).toEqual([]);
      for (const c of drawn.store.get('three') ?? []) caps.add(c.overrides?.maxConcurrentConsumers ?? 0);
    }
    expect([...caps].sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('resolves the cap like the contract: from inclusive, until exclusive, the latest from first', () => {
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    const c = (id: string, from: number, until: number, cap: number) => ({
      campaignId: id,
      from: at(from),
      until: at(until),
      overrides: { maxConcurrentConsumers: cap },
      createdAt: at(0),
      updatedAt: at(0),
    });
    const campaigns = { store: new Map([['s', [c('a', 1000, 5000, 5), c('b', 2000, 3000, 2)]]]), tenant: [] };
    expect([999, 1000, 2000, 2999, 3000, 5000].map((t) => capAt(campaigns, 's', 3, T0 + t))).toEqual([
      3, 5, 2, 2, 5, 3,
    ]);
  });
});
