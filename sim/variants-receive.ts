import type { Variant } from './protocol-variant.js';

/**
 * Broken variants of the empty check's race (lambdas/core/slice-receive.ts): the first long poll to bring
 * messages is the batch, and the other, still running, is settled before the slice ends.
 */
export const RECEIVE_VARIANTS: Variant[] = [
  {
    name: 'rest-left-hidden',
    breaks: 2,
    description:
      "the empty check's other long poll is never settled: what it took stays hidden for its whole visibility, and the next slice marks the store idle with it hidden (lost wake-up)",
    restRules: { settle: async () => undefined },
  },
  {
    name: 'rest-after-lease',
    breaks: 2,
    description:
      "the empty check's other long poll is handed back without waiting for it: the lease goes first, and another slice can mark the store idle before its messages are visible again",
    restRules: {
      settle: async (rest, handBack) => {
        void rest.then(handBack).catch(() => undefined);
      },
    },
  },
];
