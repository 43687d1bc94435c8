import type { Variant } from './protocol-variant.js';
import { runSeed, type SimResult } from './world.js';

/** The seed set `npm test` runs (seeds 1..FIXED_SEED_COUNT). */
export const FIXED_SEED_COUNT = 300;

export const replayCommand = (seed: number, variant?: string): string =>
  `npm run sim -- --seed ${seed}${variant ? ` --variant ${variant}` : ''}`;

/** The first seed of 1..count at which the simulation rejects `variant` for the invariant it breaks. */
export const firstRejection = async (
  variant: Variant,
  count = FIXED_SEED_COUNT,
): Promise<{ seed: number; result: SimResult; others: number[] } | undefined> => {
  const others: number[] = [];
  for (let seed = 1; seed <= count; seed++) {
    const result = await runSeed(seed, variant);
    if (result.ok) continue;
    if (result.violation?.invariant === variant.breaks) return { seed, result, others };
    others.push(result.violation?.invariant ?? 0);
  }
  return undefined;
};
