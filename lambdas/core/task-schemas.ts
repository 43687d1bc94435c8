import { z } from 'zod';
import { ISO_4217_CODES } from './currencies.js';
import { unpairedSurrogatePath } from './sqs-text.js';

/** Contract: 1–128 of [A-Za-z0-9._:-], chosen by the integrator and stable across retries. */
export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const MAX_BATCH_TASKS = 100;

const sku = z.string().min(1).max(128);
const orderId = z.string().min(1).max(128);
const isoDateTime = z.iso.datetime({ offset: true });

/** Payload schemas per task type. Unknown fields are rejected so typos surface at ingest, not at the marketplace. */
export const PayloadSchemas = {
  'orders.sync': z.strictObject({
    orderId,
    status: z.string().min(1).max(64).optional(),
    updatedAt: isoDateTime.optional(),
  }),
  'inventory.update': z.strictObject({ sku, quantity: z.number().int().min(0) }),
  'price.update': z.strictObject({
    sku,
    amount: z.number().positive().finite(),
    currency: z.enum(ISO_4217_CODES, { error: 'must be an ISO-4217 code such as "BRL"' }),
  }),
  'catalog.update': z.strictObject({
    sku,
    title: z.string().min(1).max(500).optional(),
    description: z.string().max(10_000).optional(),
    attributes: z
      .record(z.string().max(128), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .optional(),
  }),
  'shipping.notify': z.strictObject({
    orderId,
    carrier: z.string().min(1).max(64),
    trackingCode: z.string().min(1).max(128),
    shippedAt: isoDateTime.optional(),
  }),
  'postsale.event': z.strictObject({
    orderId,
    kind: z.enum(['return', 'refund', 'cancellation', 'claim', 'message']),
    details: z.record(z.string().max(128), z.unknown()).optional(),
  }),
} as const;

/**
 * Task priority within a store (contract, "Scheduling policy"): a store's `high` tasks overtake its waiting
 * `normal` ones. Defaults per type: what a buyer is waiting on (orders, shipping, post-sale) is `high`;
 * catalog, price and inventory updates, which come in campaigns of thousands, are `normal`.
 */
export const TASK_PRIORITIES = ['high', 'normal'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export const TASK_TYPES = Object.keys(PayloadSchemas) as (keyof typeof PayloadSchemas)[];
export type TaskType = keyof typeof PayloadSchemas;

export const TaskEnvelopeSchema = z.strictObject({
  eventId: z.string().regex(EVENT_ID_PATTERN, 'must be 1–128 characters of [A-Za-z0-9._:-]'),
  type: z.enum(TASK_TYPES as [TaskType, ...TaskType[]]),
  payload: z.record(z.string(), z.unknown()),
  entityId: z.string().min(1).max(256).optional(),
  version: z.number().int().min(0).optional(),
  priority: z.enum(TASK_PRIORITIES).optional(),
});

export const DEFAULT_TASK_PRIORITY: Readonly<Record<TaskType, TaskPriority>> = {
  'orders.sync': 'high',
  'shipping.notify': 'high',
  'postsale.event': 'high',
  'inventory.update': 'normal',
  'price.update': 'normal',
  'catalog.update': 'normal',
};

/** A task's priority: its own, else its type's default. */
export const taskPriorityOf = (task: { type: TaskType; priority?: TaskPriority | undefined }): TaskPriority =>
  task.priority ?? DEFAULT_TASK_PRIORITY[task.type];

export type Task = z.infer<typeof TaskEnvelopeSchema>;

/**
 * Validates the envelope, then the payload against its type's schema (paths are reported from the task
 * root), then that every string is Unicode text: one holding an unpaired surrogate has no UTF-8 form, so
 * it could not reach the marketplace as sent (every other character can; see sqs-text.ts).
 */
export const TaskSchema = TaskEnvelopeSchema.superRefine((task, ctx) => {
  const result = PayloadSchemas[task.type].safeParse(task.payload);
  if (!result.success) {
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: ['payload', ...issue.path] });
    }
  }
  const notText = unpairedSurrogatePath(task);
  if (notText) {
    ctx.addIssue({
      code: 'custom',
      message: 'holds an unpaired surrogate (\\uD800–\\uDFFF alone), which is not Unicode text',
      path: notText,
    });
  }
});

export const BatchBodySchema = z.strictObject({
  tasks: z.array(z.unknown()).min(1).max(MAX_BATCH_TASKS),
});
