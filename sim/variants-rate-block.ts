import { BLOCK_RULES } from '../lambdas/core/rate.js';
import { RATE_INVARIANT } from './rate-check.js';
import type { Variant } from './protocol-variant.js';

/**
 * Broken variants of the shared pacer's blocks (one write reserving several rate instants), rejected by the
 * rate invariant. With one instant per block the broken spacing equals the right one, so a rejection also
 * shows that the fixed seeds reserve blocks of several instants (multi-consumer stores with a backlog).
 */
export const RATE_BLOCK_VARIANTS: Variant[] = [
  {
    name: 'block-in-one-interval',
    breaks: RATE_INVARIANT,
    description:
      'a block of several instants spaces them count times closer than the interval (the write moves the schedule on by one interval), so the lease calls at its own pace through it',
    blockRules: { ...BLOCK_RULES, step: (count, interval) => Math.max(1, Math.floor(interval / count)) },
  },
];
