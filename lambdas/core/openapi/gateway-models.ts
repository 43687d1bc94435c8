import { BatchBodySchema } from '../task-schemas.js';
import type { RouteId } from '../routes.js';
import { TaskDocSchema } from './components.js';
import { toJsonSchema, type JsonSchema } from './json-schema.js';

/** API Gateway REST models are JSON Schema draft 4 (no const, no $ref to OpenAPI components). */
const DRAFT_04 = 'http://json-schema.org/draft-04/schema#';

/**
 * Request models for the integrator routes, checked by API Gateway before the ingest function runs, built
 * from the same schemas as the document (in draft 4). The batch model checks only the array, as the
 * handler does first: one bad task must be rejected in the answer, not refuse the batch.
 */
export const gatewayRequestModels = (): Partial<Record<RouteId, { name: string; schema: JsonSchema }>> => ({
  submitTask: {
    name: 'Task',
    schema: { $schema: DRAFT_04, title: 'Task', ...toJsonSchema(TaskDocSchema, 'draft-04') },
  },
  submitBatch: {
    name: 'BatchRequest',
    schema: { $schema: DRAFT_04, title: 'BatchRequest', ...toJsonSchema(BatchBodySchema, 'draft-04') },
  },
});
