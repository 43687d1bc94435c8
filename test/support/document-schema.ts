import { z } from 'zod';
import type { JsonSchema } from '../../lambdas/core/openapi/json-schema.js';

/**
 * A schema of the OpenAPI document as a validator, the way a consumer of the document validates: the
 * document's JSON Schema (not the zod schema it was generated from), read back by zod's converter with
 * the components as `$defs` (zod resolves `#/$defs/…` references only).
 */
export const documentValidator = (schema: JsonSchema, components: Record<string, JsonSchema>): z.ZodType => {
  const local = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/$defs/'));
  return z.fromJSONSchema({ ...(local(schema) as object), $defs: local(components) } as never);
};

/** A named component of the document as a validator. */
export const componentValidator = (name: string, components: Record<string, JsonSchema>): z.ZodType =>
  documentValidator({ $ref: `#/components/schemas/${name}` }, components);
