import { describe, expect, it } from 'vitest';
import { priorityScenario, runPriorityScenario } from '../../sim/store-priority-check.js';

/** Store priority (sim/priority-pool.ts): seeds 1–60 hold P1–P5; each broken pool is rejected by some seed. */
const SEEDS = Array.from({ length: 60 }, (_, i) => i + 1);

describe('store priority simulation', () => {
  it('keeps the concurrency cap, work conservation, no starvation and the floors on every seed', () => {
    const failed = SEEDS.map((seed) => runPriorityScenario(priorityScenario(seed), 'shares')).filter(
      (r) => r.failures.length > 0,
    );
    expect(failed.map((r) => `${r.seed}: ${r.failures.join('; ')}`)).toEqual([]);
  });

  it('keeps a worker for high on some seeds (P5 is not vacuous)', () => {
    const kept = SEEDS.filter((seed) => (priorityScenario(seed).config.highHeadroom ?? 0) > 0);
    expect(kept.length).toBeGreaterThanOrEqual(10);
  });

  it('measures the floors on some seeds (the check is not vacuous)', () => {
    const measured = SEEDS.map((seed) => runPriorityScenario(priorityScenario(seed), 'shares')).filter(
      (r) => r.contendedShares !== undefined,
    );
    expect(measured.length).toBeGreaterThanOrEqual(10);
  });

  it.each([
    ['strict', 'P3'],
    ['single-queue', 'P4'],
    ['blind', 'P2'],
    ['headroom-ignored', 'P5'],
  ] as const)('rejects the %s pool (%s)', (choice, invariant) => {
    const rejected = SEEDS.map((seed) => runPriorityScenario(priorityScenario(seed), choice)).find((r) =>
      r.failures.some((f) => f.startsWith(`${invariant}:`)),
    );
    expect(rejected?.seed).toBeDefined();
  });
});
