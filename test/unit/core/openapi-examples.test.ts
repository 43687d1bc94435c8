import { describe, expect, it } from 'vitest';
import { type ComponentName } from '../../../lambdas/core/openapi/components.js';
import { buildOpenApiDocument } from '../../../lambdas/core/openapi/document.js';
import { ERROR_EXAMPLES, PATH_EXAMPLES } from '../../../lambdas/core/openapi/examples.js';
import { ROUTE_DOCS } from '../../../lambdas/core/openapi/route-docs.js';
import { ROUTES, type RouteId } from '../../../lambdas/core/routes.js';
import { TaskSchema } from '../../../lambdas/core/task-schemas.js';
import { RotateBody } from '../../../lambdas/core/tenant-tokens.js';
import { componentValidator, documentValidator } from '../../support/document-schema.js';
import { HANDLER_BODY } from '../../support/handler-bodies.js';

/**
 * The document's examples are what a reader copies: each request example must get the status written
 * beside it (`x-status`) and each answer example must be an answer of the documented shape. Here without
 * a running stack: request examples against the schemas the handlers parse with, and every example
 * against the document's own JSON Schemas (test/integration/openapi.test.ts sends them to local mode).
 */
const doc = buildOpenApiDocument();
const components = doc.components.schemas;

type Example = { summary: string; value: unknown; 'x-status': number };
type Operation = {
  parameters: {
    name: string;
    in: string;
    required: boolean;
    schema: Record<string, unknown>;
    example?: unknown;
  }[];
  requestBody?: {
    required: boolean;
    content: { 'application/json': { schema: { $ref: string }; examples: Record<string, Example> } };
  };
  responses: Record<
    string,
    {
      $ref?: string;
      description?: string;
      content?: { 'application/json': { schema: { $ref: string }; example: unknown } };
    }
  >;
};
const routes = ROUTES.map((r) => ({
  ...r,
  op: doc.paths[r.resource]?.[r.method.toLowerCase()] as Operation,
}));
const refName = (ref: string): string => ref.replace('#/components/schemas/', '');

/** 400 examples refused by the handler beyond its body schema: `confirm` must repeat the path's store id. */
const REFUSED_AGAINST_THE_PATH = new Set(['purgeStoreQueue.unconfirmed']);
/** 400 examples refused by a refinement JSON Schema cannot say (at least one field; `until` after `from`, ≤ 90 days). */
const REFUSED_BY_A_REFINEMENT = new Set([
  'patchStore.empty',
  'putStoreCampaign.tooLong',
  'putStoreCampaign.backwards',
  'putTenantCampaign.tooLong',
  'putTenantCampaign.backwards',
]);

const requestExamples = routes.flatMap((r) =>
  Object.entries(r.op.requestBody?.content['application/json'].examples ?? {}).map(([name, example]) => ({
    key: `${r.id}.${name}`,
    id: r.id,
    schema: refName(r.op.requestBody!.content['application/json'].schema.$ref),
    ...example,
  })),
);

describe('request examples', () => {
  it('every route with a body has examples, at least one accepted', () => {
    const withBody = routes.filter((r) => ROUTE_DOCS[r.id].body).map((r) => r.id);
    const accepted = new Set(requestExamples.filter((e) => e['x-status'] < 300).map((e) => e.id));
    expect([...accepted].sort()).toEqual([...withBody].sort());
  });

  it.each(requestExamples.filter((e) => e['x-status'] < 300).map((e) => [e.key, e] as const))(
    '%s (2xx) is accepted by the handler and by the document',
    (_key, e) => {
      expect(HANDLER_BODY[e.schema as ComponentName]?.safeParse(e.value).success).toBe(true);
      // The batch example carries one invalid task on purpose (rejected in the answer): its body is checked
      // against the document's array bounds below, task by task.
      if (e.schema !== 'BatchRequest')
        expect(componentValidator(e.schema, components).safeParse(e.value).success).toBe(true);
    },
  );

  it.each(requestExamples.filter((e) => e['x-status'] === 400).map((e) => [e.key, e] as const))(
    '%s (400) is refused by the handler',
    (key, e) => {
      const parsed = HANDLER_BODY[e.schema as ComponentName]?.safeParse(e.value);
      expect(parsed?.success).toBe(REFUSED_AGAINST_THE_PATH.has(key));
    },
  );

  it.each(
    requestExamples
      .filter(
        (e) =>
          e['x-status'] === 400 &&
          !REFUSED_AGAINST_THE_PATH.has(e.key) &&
          !REFUSED_BY_A_REFINEMENT.has(e.key),
      )
      .map((e) => [e.key, e] as const),
  )('%s (400) is refused by the document schema too', (_key, e) => {
    expect(componentValidator(e.schema, components).safeParse(e.value).success).toBe(false);
  });

  it("the purge example confirms with the path's store id, the refused one with another", () => {
    const examples = Object.fromEntries(
      requestExamples.filter((e) => e.id === 'purgeStoreQueue').map((e) => [e.key, e]),
    );
    expect((examples['purgeStoreQueue.confirmed']?.value as { confirm: string }).confirm).toBe(
      PATH_EXAMPLES.storeId,
    );
    expect((examples['purgeStoreQueue.unconfirmed']?.value as { confirm: string }).confirm).not.toBe(
      PATH_EXAMPLES.storeId,
    );
  });

  it("the batch example's answer accepts exactly its valid tasks and rejects the others", () => {
    const batch = requestExamples.find((e) => e.id === 'submitBatch' && e['x-status'] === 202)!;
    const tasks = (batch.value as { tasks: { eventId: string }[] }).tasks;
    const task = componentValidator('Task', components);
    const answer = ROUTE_DOCS.submitBatch.response?.example as {
      accepted: string[];
      rejected: { eventId: string }[];
    };
    expect(answer.accepted).toEqual(
      tasks.filter((t) => TaskSchema.safeParse(t).success).map((t) => t.eventId),
    );
    expect(answer.rejected.map((r) => r.eventId)).toEqual(
      tasks.filter((t) => !TaskSchema.safeParse(t).success).map((t) => t.eventId),
    );
    // The document's Task agrees with the handler on each of them.
    expect(tasks.map((t) => task.safeParse(t).success)).toEqual(
      tasks.map((t) => TaskSchema.safeParse(t).success),
    );
    expect(answer.rejected.length).toBeGreaterThan(0);
  });

  it('a request body is required where the handler needs one (rotate takes none)', () => {
    const required = Object.fromEntries(
      routes.filter((r) => r.op.requestBody).map((r) => [r.id, r.op.requestBody!.required]),
    );
    expect(required).toEqual(
      Object.fromEntries(routes.filter((r) => r.op.requestBody).map((r) => [r.id, r.id !== 'rotateToken'])),
    );
    expect(RotateBody.safeParse({}).success).toBe(true);
  });
});

describe('answer examples', () => {
  const success = routes.flatMap((r) =>
    Object.entries(r.op.responses)
      .filter(([status]) => Number(status) < 300)
      .map(([status, response]) => [`${r.id} ${status}`, r.id, Number(status), response] as const),
  );

  it.each(success.filter(([, , status]) => status !== 204))(
    '%s has a body whose example has its schema',
    (_k, id, _s, response) => {
      const content = response.content?.['application/json'];
      expect(content?.schema.$ref).toBe(`#/components/schemas/${ROUTE_DOCS[id as RouteId].response?.schema}`);
      expect(
        componentValidator(refName(content!.schema.$ref), components).safeParse(content!.example).success,
      ).toBe(true);
    },
  );

  // An emptied schema accepts any example: the schema must also name every field its example shows.
  it.each(success.filter(([, , status]) => status !== 204))(
    '%s: its schema declares every field of its example, nested objects too',
    (_k, _id, _s, response) => {
      const content = response.content!['application/json'];
      const undeclared: string[] = [];
      const check = (schema: Record<string, unknown>, value: unknown, path: string): void => {
        const ref = schema['$ref'];
        if (typeof ref === 'string') return check(components[refName(ref)]!, value, path);
        if (Array.isArray(value))
          return value.forEach((v, i) =>
            check((schema['items'] ?? {}) as Record<string, unknown>, v, `${path}[${i}]`),
          );
        if (!value || typeof value !== 'object') return;
        const props = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
        for (const [k, v] of Object.entries(value)) {
          if (!props[k]) undeclared.push(`${path}.${k}`);
          else check(props[k]!, v, `${path}.${k}`);
        }
      };
      check(content.schema, content.example, '');
      expect(undeclared).toEqual([]);
    },
  );

  it.each(success.filter(([, , status]) => status === 204))('%s has no body', (_k, _id, _s, response) => {
    expect(response.content).toBeUndefined();
  });

  it('documents each success status with its own description', () => {
    for (const [, id, status, response] of success) {
      const documented = ROUTE_DOCS[id as RouteId].success.find((s) => s.status === status);
      expect(response.description).toBe(documented?.description);
    }
    expect(success.length).toBe(routes.reduce((n, r) => n + ROUTE_DOCS[r.id].success.length, 0));
  });
});

describe('error answers', () => {
  const responses = doc.components['responses'] as Record<
    string,
    { description: string; content: { 'application/json': { schema: { $ref: string }; example: unknown } } }
  >;

  it("every route's error status refers to a documented error answer", () => {
    for (const r of routes) {
      for (const status of ROUTE_DOCS[r.id].errors) {
        const ref = r.op.responses[String(status)]?.$ref ?? '';
        expect(responses[ref.replace('#/components/responses/', '')], `${r.id} ${status}`).toBeDefined();
      }
    }
  });

  it.each(Object.keys(ERROR_EXAMPLES).map((s) => [s]))(
    'the %s answer is the contract error body',
    (status) => {
      const response = responses[`Error${status}`]!;
      const content = response.content['application/json'];
      expect(content.schema.$ref).toBe('#/components/schemas/Error');
      expect(componentValidator('Error', components).safeParse(content.example).success).toBe(true);
      expect(content.example).toEqual({ error: ERROR_EXAMPLES[Number(status)] });
    },
  );

  it('each error answer says what it means (no generic description)', () => {
    const descriptions = Object.values(responses).map((r) => r.description);
    expect(new Set(descriptions).size).toBe(descriptions.length);
    expect(descriptions).not.toContain('error');
  });
});

describe('parameters', () => {
  it.each(routes.map((r) => [r.id, r] as const))(
    '%s: every {param} of its path is a required path parameter whose example it accepts',
    (_id, r) => {
      const inPath = [...r.resource.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const path = r.op.parameters.filter((p) => p.in === 'path');
      expect(path.map((p) => p.name)).toEqual(inPath);
      for (const p of path) {
        expect(p.required).toBe(true);
        expect(p.example).toBe(PATH_EXAMPLES[p.name as keyof typeof PATH_EXAMPLES]);
        expect(documentValidator(p.schema, components).safeParse(p.example).success).toBe(true);
      }
    },
  );

  it("path parameters refuse what the handlers refuse (the store id's pattern)", () => {
    const storeId = routes[0]!.op.parameters.find((p) => p.name === 'storeId')!;
    expect(documentValidator(storeId.schema, components).safeParse('bad store').success).toBe(false);
  });

  it("query parameters are the handler's query keys, optional", () => {
    const query = Object.fromEntries(
      routes.map((r) => [
        r.id,
        r.op.parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.required]),
      ]),
    );
    expect(Object.fromEntries(Object.entries(query).filter(([, q]) => q.length > 0))).toEqual({
      backfillUsageKeys: [['cursor', false]],
      listBacklog: [
        ['limit', false],
        ['cursor', false],
      ],
    });
  });

  it("the backlog's limit is documented with its bounds and default (input mode)", () => {
    const limit = routes.find((r) => r.id === 'listBacklog')!.op.parameters.find((p) => p.name === 'limit')!;
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, default: expect.any(Number) });
  });
});
