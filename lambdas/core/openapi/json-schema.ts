import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;
export type SchemaTarget = 'draft-2020-12' | 'draft-04';

/**
 * zod's own converter, in input mode (what a caller sends: defaults optional, coercions as typed); the
 * `$schema` keyword is dropped because OpenAPI 3.1 and API Gateway models declare their dialect themselves.
 */
export const toJsonSchema = (schema: z.ZodType, target: SchemaTarget = 'draft-2020-12'): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target, io: 'input' }) as JsonSchema;
  return rest;
};

/** Named schemas converted together, referring to each other by `uri(name)` (OpenAPI components). */
export const toJsonSchemas = (
  named: Record<string, z.ZodType>,
  uri: (name: string) => string,
): Record<string, JsonSchema> => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', uri }) as {
    schemas: Record<string, JsonSchema>;
  };
  const out: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    out[id] = rest;
  }
  return out;
};
