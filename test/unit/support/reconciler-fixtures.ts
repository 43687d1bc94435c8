import { vi } from 'vitest';
import type { QueueAdmin } from '../../../lambdas/core/ports.js';
import type { StoreRecord, StoreStatus } from '../../../lambdas/core/store-model.js';

/** The reconciler's unit-test stores and queues: a basic store on its own queues, with no redrive and nothing pending. */
export const RECONCILE_T0 = 1_800_000_000_000;

export const reconcilerStore = (storeId: string, status: StoreStatus = 'active'): StoreRecord => ({
  storeId,
  tenantId: 't',
  marketplace: 'amazon',
  plan: 'basic',
  status,
  queueUrl: `q-${storeId}`,
  deadLetterQueueUrl: `dlq-${storeId}`,
  createdAt: RECONCILE_T0,
  updatedAt: RECONCILE_T0,
});

/** Queue administration where no redrive is moving and no queue has messages in flight; `patch` replaces any. */
export const quietQueues = (patch: Partial<QueueAdmin> = {}): QueueAdmin => ({
  createStoreQueues: vi.fn(),
  counts: vi.fn(),
  redrive: vi.fn(),
  redriveRunning: async () => false,
  purge: vi.fn(),
  pending: async () => 0,
  ...patch,
});
