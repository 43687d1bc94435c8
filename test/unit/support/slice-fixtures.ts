import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type { Policy } from '../../../lambdas/core/plans.js';
import type { Lease } from '../../../lambdas/core/slice.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';

/** One basic store with one consumer and a 20 s slice, and a fresh lease of it, for runSlice's unit tests. */
export const SLICE_T0 = 1_800_000_000_000;

export const sliceStore = (overrides: Partial<StoreRecord> = {}): StoreRecord => ({
  storeId: 's1',
  tenantId: 't1',
  marketplace: 'amazon',
  plan: 'basic',
  status: 'active',
  queueUrl: 'q-url',
  deadLetterQueueUrl: 'dlq-url',
  createdAt: SLICE_T0,
  updatedAt: SLICE_T0,
  ...overrides,
});

/** The body of store s1's i-th task: an inventory update accepted at SLICE_T0. */
export const work = (i: number): string =>
  JSON.stringify({
    v: 1,
    storeId: 's1',
    eventId: `e${i}`,
    type: 'inventory.update',
    payload: { sku: 'a', quantity: i },
    acceptedAt: SLICE_T0,
  } satisfies WorkMessage);

export const slicePolicy: Policy = {
  maxConcurrentConsumers: 1,
  maxMessagesPerSlice: 50,
  maxSliceSeconds: 20,
  ratePerSecond: 1000,
  maxAttempts: 5,
  priority: 'normal',
  throttleScope: 'store',
};

/** Taken at SLICE_T0; expires after the 20 s slice + 5 s call timeout + 10 s margin. */
export const sliceLease: Lease = {
  slotId: 'a',
  fence: 1,
  seenSeq: 7,
  startedAt: SLICE_T0,
  expiresAt: SLICE_T0 + 35_000,
  nextCallAt: SLICE_T0,
  slotsAtStart: 1,
};
