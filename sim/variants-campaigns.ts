import type { Variant } from './protocol-variant.js';

/** Broken variants of the campaign windows (sim/model-campaigns.ts), each rejected by a seed of the fixed set. */
export const CAMPAIGN_VARIANTS: Variant[] = [
  {
    name: 'ignores-campaigns',
    breaks: 3,
    description:
      "the worker never reads campaign windows: it takes leases under the store's own cap while a campaign has lowered it",
    campaigns: (inner) => ({
      read: async () => ({ rev: 0, campaigns: [] }),
      write: (owner, campaigns, seenRev) => inner.write(owner, campaigns, seenRev),
    }),
  },
];
