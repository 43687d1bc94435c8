import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../lambdas/core/openapi/document.js';
import { TASK_EXAMPLES } from '../../../lambdas/core/openapi/examples.js';
import { gatewayRequestModels } from '../../../lambdas/core/openapi/gateway-models.js';
import {
  BatchBodySchema,
  MAX_BATCH_TASKS,
  TASK_TYPES,
  TaskSchema,
} from '../../../lambdas/core/task-schemas.js';
import { arbitraryFromSchema, mutate } from '../../support/schema-arbitrary.js';

/**
 * API Gateway checks the integrator bodies against these draft-4 models before the ingest function runs.
 * A model that refuses what ingest accepts loses tasks at the door; one that accepts what ingest refuses
 * only costs a call. Read back here by zod's converter as the gateway reads them (draft 4).
 */
const models = gatewayRequestModels();
const taskModel = z.fromJSONSchema(models.submitTask!.schema as never);
const batchModel = z.fromJSONSchema(models.submitBatch!.schema as never);
const accepts = (schema: z.ZodType, value: unknown): boolean => schema.safeParse(value).success;

const valid = TASK_EXAMPLES.inventory;

describe('the gateway task model', () => {
  it('is draft 4, as API Gateway models must be', () => {
    expect(models.submitTask?.schema['$schema']).toBe('http://json-schema.org/draft-04/schema#');
    expect(models.submitBatch?.schema['$schema']).toBe('http://json-schema.org/draft-04/schema#');
  });

  // A draft-4 validator ignores `const` (so the type would not pick the variant) and wants boolean
  // exclusiveMinimum; zod's reader above accepts both dialects, so check the keywords themselves.
  it('uses draft-4 keywords only (no const, boolean exclusive bounds)', () => {
    const keys: [string, unknown][] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          keys.push([k, x]);
          walk(x);
        }
    };
    walk(models.submitTask?.schema);
    walk(models.submitBatch?.schema);
    expect(keys.filter(([k]) => k === 'const' || k === '$defs')).toEqual([]);
    const bounds = keys.filter(([k]) => k === 'exclusiveMinimum' || k === 'exclusiveMaximum');
    expect(bounds.length).toBeGreaterThan(0);
    expect(bounds.filter(([, x]) => typeof x !== 'boolean')).toEqual([]);
  });

  it.each(Object.entries(TASK_EXAMPLES))('agrees with ingest on the %s example', (_name, task) => {
    expect(accepts(taskModel, task)).toBe(accepts(TaskSchema, task));
  });

  it.each([
    ['an unknown type', { ...valid, type: 'inventory.delete' }],
    ['no eventId', { type: valid.type, payload: valid.payload }],
    ['a bad eventId', { ...valid, eventId: 'a b' }],
    ['an eventId over 128 characters', { ...valid, eventId: 'a'.repeat(129) }],
    ['an unknown envelope field', { ...valid, extra: 1 }],
    ['an unknown payload field', { ...valid, payload: { ...valid.payload, colour: 'red' } }],
    ["another type's payload", { ...valid, payload: TASK_EXAMPLES.price.payload }],
    ['a fractional quantity', { ...valid, payload: { ...valid.payload, quantity: 1.5 } }],
    ['a negative version', { ...valid, version: -1 }],
    ['an unknown priority', { ...valid, priority: 'urgent' }],
    ['a zero price', { ...TASK_EXAMPLES.price, payload: { ...TASK_EXAMPLES.price.payload, amount: 0 } }],
    [
      'a bad currency',
      { ...TASK_EXAMPLES.price, payload: { ...TASK_EXAMPLES.price.payload, currency: 'real' } },
    ],
    [
      'a bad date',
      { ...TASK_EXAMPLES.order, payload: { ...TASK_EXAMPLES.order.payload, updatedAt: 'yesterday' } },
    ],
  ])('refuses %s, as ingest does', (_what, task) => {
    expect(accepts(TaskSchema, task)).toBe(false);
    expect(accepts(taskModel, task)).toBe(false);
  });

  it('accepts every optional envelope field ingest accepts', () => {
    const task = { ...valid, entityId: 'SKU-42', version: 0, priority: 'high' };
    expect(accepts(TaskSchema, task)).toBe(true);
    expect(accepts(taskModel, task)).toBe(true);
  });

  it('agrees with ingest on generated and broken tasks of every type', () => {
    const doc = buildOpenApiDocument();
    const task = arbitraryFromSchema({ $ref: '#/components/schemas/Task' }, doc.components.schemas);
    const samples = fc.sample(fc.oneof(task, task.chain(mutate)), { numRuns: 150, seed: 14 });
    const disagreements = samples.filter((t) => accepts(taskModel, t) !== accepts(TaskSchema, t));
    expect(disagreements.slice(0, 3)).toEqual([]);
    // Both answers occur, and every type is among the accepted ones.
    const accepted = samples.filter((t) => accepts(TaskSchema, t)) as { type: string }[];
    expect(accepted.length).toBeGreaterThan(20);
    expect(samples.length - accepted.length).toBeGreaterThan(20);
    expect(new Set(accepted.map((t) => t.type)).size).toBe(TASK_TYPES.length);
  });
});

describe('the gateway batch model', () => {
  const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ ...valid, eventId: `e-${i}` }));

  it.each([
    ['one task', { tasks: tasks(1) }],
    [`${MAX_BATCH_TASKS} tasks`, { tasks: tasks(MAX_BATCH_TASKS) }],
    // One bad task is rejected in the answer, not by refusing the batch.
    ['a batch with an invalid task', { tasks: [valid, TASK_EXAMPLES.invalid] }],
    ['a batch of anything', { tasks: [1, 'x', null] }],
  ])('accepts %s, as ingest does', (_what, body) => {
    expect(accepts(BatchBodySchema, body)).toBe(true);
    expect(accepts(batchModel, body)).toBe(true);
  });

  it.each([
    ['no tasks', { tasks: [] }],
    [`${MAX_BATCH_TASKS + 1} tasks`, { tasks: tasks(MAX_BATCH_TASKS + 1) }],
    ['tasks that are not an array', { tasks: valid }],
    ['no tasks field', {}],
    ['an unknown field', { tasks: tasks(1), extra: true }],
  ])('refuses %s, as ingest does', (_what, body) => {
    expect(accepts(BatchBodySchema, body)).toBe(false);
    expect(accepts(batchModel, body)).toBe(false);
  });
});
