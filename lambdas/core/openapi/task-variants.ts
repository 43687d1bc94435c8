import { z } from 'zod';
import { PayloadSchemas, TASK_TYPES, TaskEnvelopeSchema, type TaskType } from '../task-schemas.js';

/**
 * The task as documentation and the gateway see it: one variant per type, its payload schema in place.
 * The ingest handler checks the same thing in two steps (envelope, then the type's payload, see TaskSchema);
 * both are built from TaskEnvelopeSchema and PayloadSchemas, so they cannot disagree.
 */
export const taskVariant = (type: TaskType) =>
  TaskEnvelopeSchema.extend({ type: z.literal(type), payload: PayloadSchemas[type] });

/** Component name of a type's variant: `price.update` → `PriceUpdateTask`. */
export const variantName = (type: TaskType): string =>
  `${type
    .split('.')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Task`;

export const TASK_VARIANTS = TASK_TYPES.map((type) => ({
  type,
  name: variantName(type),
  schema: taskVariant(type),
}));
