import { z } from 'zod';
import { OverridesSchema, PLAN_NAMES, resolvePolicy, type Policy } from './plans.js';

export const STORE_STATUSES = ['active', 'paused', 'maintenance', 'disabled'] as const;
export type StoreStatus = (typeof STORE_STATUSES)[number];

/** A store as kept in the Stores table (validated when read back). */
export const StoreRecordSchema = z.object({
  storeId: z.string(),
  tenantId: z.string(),
  marketplace: z.string(),
  plan: z.enum(PLAN_NAMES),
  status: z.enum(STORE_STATUSES),
  overrides: OverridesSchema.optional(),
  queueUrl: z.string(),
  deadLetterQueueUrl: z.string(),
  /**
   * The store's high-priority work queue. Absent on stores created before task priority: it is created on
   * the store's next PUT or PATCH, and until then the store's high tasks go to its work queue.
   */
  priorityQueueUrl: z.string().optional(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  /**
   * Counts the record's writes (1 when created): every admin write is conditional on the revision it read, so
   * two changes at once cannot undo each other (lambdas/core/store-writes.ts). Absent on records written
   * before it; their next write makes it 1.
   */
  revision: z.number().int().positive().optional(),
});
export type StoreRecord = z.infer<typeof StoreRecordSchema>;

export const policyOf = (store: Pick<StoreRecord, 'plan' | 'overrides'>): Policy =>
  resolvePolicy(store.plan, store.overrides);

/** Only active stores are consumed; the other states hold the backlog (disabled also refuses new tasks). */
export const isConsumable = (status: StoreStatus): boolean => status === 'active';
export const acceptsTasks = (status: StoreStatus): boolean => status !== 'disabled';
