import { describe, expect, it } from 'vitest';
import { levelCapsScenario, runLevelCapsScenario } from '../../sim/level-caps-check.js';

/** Store priority on AWS (sim/level-caps-check.ts): seeds 1–100 hold L1–L4; each broken variant is rejected. */
const SEEDS = Array.from({ length: 100 }, (_, i) => i + 1);

describe('store priority on AWS: the level caps, simulated', () => {
  it('never throttles, keeps the floors, lends unused share and starves no level on every seed', async () => {
    const results = await Promise.all(SEEDS.map((seed) => runLevelCapsScenario(levelCapsScenario(seed))));
    const failed = results.filter((r) => r.failures.length > 0);
    expect(failed.map((r) => `${r.seed}: ${r.failures.join('; ')}`)).toEqual([]);
    // Not vacuous: the loans let seeds run more workers than the floors at once (a lender's return), and the
    // lone level reached all the floors.
    expect(results.filter((r) => r.peak.running > r.lone.floors).length).toBeGreaterThan(50);
    expect(results.every((r) => r.lone.running >= r.lone.floors)).toBe(true);
  });

  it.each([
    ['no-loans', 'L3'],
    ['lend-floors', 'L2'],
    ['lend-floors', 'L4'],
    ['no-drain-hold', 'L1'],
    ['reserve-floors', 'L1'],
  ] as const)('rejects the %s variant (%s)', async (variant, invariant) => {
    let rejectedBy: number | undefined;
    for (const seed of SEEDS) {
      const result = await runLevelCapsScenario(levelCapsScenario(seed), variant);
      if (result.failures.some((f) => f.startsWith(`${invariant}:`))) {
        rejectedBy = seed;
        break;
      }
    }
    expect(rejectedBy).toBeDefined();
  });
});
