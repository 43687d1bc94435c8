import fc from 'fast-check';

type Schema = Record<string, unknown>;

/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI document (the subset zod emits: $ref,
 * oneOf/anyOf, objects, records, arrays, strings with pattern/format/length, numbers, enums, const).
 * Written here because no maintained JSON-Schema-to-fast-check package is installed; lengths and array
 * sizes are capped so a run stays quick.
 */
export const arbitraryFromSchema = (
  schema: Schema,
  components: Record<string, Schema>,
  caps = { string: 24, array: 4 },
): fc.Arbitrary<unknown> => {
  const of = (s: Schema): fc.Arbitrary<unknown> => arbitraryFromSchema(s, components, caps);
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = components[ref.replace('#/components/schemas/', '')];
    if (!target) throw new Error(`unresolved ${ref}`);
    return fc.constant(null).chain(() => of(target));
  }
  const choices = (schema['oneOf'] ?? schema['anyOf']) as Schema[] | undefined;
  if (choices) return fc.oneof(...choices.map(of));
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  switch (schema['type']) {
    case 'object':
      return objectArb(schema, of);
    case 'array': {
      const minLength = Number(schema['minItems'] ?? 0);
      const maxLength = Math.max(minLength, Math.min(Number(schema['maxItems'] ?? caps.array), caps.array));
      return fc.array(of((schema['items'] as Schema | undefined) ?? {}), { minLength, maxLength });
    }
    case 'string':
      return stringArb(schema, caps.string);
    case 'integer':
      return fc.integer({
        min: Number(schema['minimum'] ?? -1_000_000),
        max: Math.min(Number(schema['maximum'] ?? 1_000_000), 1_000_000),
      });
    case 'number': {
      const min =
        schema['exclusiveMinimum'] !== undefined ? Number(schema['exclusiveMinimum']) + 0.01 : undefined;
      return fc.double({
        min: min ?? Number(schema['minimum'] ?? -1e6),
        max: Number(schema['maximum'] ?? 1e6),
        noNaN: true,
        noDefaultInfinity: true,
      });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
};

const objectArb = (schema: Schema, of: (s: Schema) => fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => {
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const extra = schema['additionalProperties'];
  if (Object.keys(properties).length === 0 && extra && typeof extra === 'object') {
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), of(extra as Schema), { maxKeys: 3 });
  }
  const model = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, of(s)]));
  return fc.record(model, { requiredKeys: (schema['required'] ?? []) as string[] });
};

const stringArb = (schema: Schema, cap: number): fc.Arbitrary<string> => {
  if (schema['format'] === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  const minLength = Number(schema['minLength'] ?? 0);
  const maxLength = Math.max(minLength, Math.min(Number(schema['maxLength'] ?? cap), cap));
  if (typeof schema['pattern'] === 'string') {
    // Patterns carry their own bounds ({1,128}); cap the length by filtering to a short prefix space.
    return fc
      .stringMatching(new RegExp(schema['pattern']))
      .filter((s) => s.length >= minLength && s.length <= Math.max(maxLength, 128));
  }
  return fc.string({ minLength, maxLength });
};

/** Ways a valid body goes wrong: a required key dropped, an unknown key, a value of the wrong type. */
export const mutate = (value: unknown): fc.Arbitrary<unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ value }));
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const weird = fc.oneof(
    fc.constantFrom(null, -1, 1.5, '', 'x'.repeat(300), [], {}, true, '../x', 'ü'),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const options: fc.Arbitrary<unknown>[] = [
    fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), weird).map(([k, v]) => ({ ...record, [k]: v })),
  ];
  if (keys.length > 0) {
    const key = fc.constantFrom(...keys);
    options.push(key.map((k) => Object.fromEntries(Object.entries(record).filter(([name]) => name !== k))));
    options.push(fc.tuple(key, weird).map(([k, v]) => ({ ...record, [k]: v })));
    // One level down, where the payload and the overrides are.
    options.push(key.chain((k) => mutate(record[k]).map((v) => ({ ...record, [k]: v }))));
  }
  return fc.oneof(...options);
};
