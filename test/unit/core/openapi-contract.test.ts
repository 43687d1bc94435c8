import { describe, expect, it } from 'vitest';
import { existingStore } from '../../../lambdas/core/admin.js';
import {
  CAMPAIGN_CACHE_MS,
  campaignState,
  ENDED_CAMPAIGN_KEEP_MS,
  MAX_CAMPAIGN_DAYS,
  MAX_CAMPAIGNS,
} from '../../../lambdas/core/campaigns.js';
import { UnauthorizedError } from '../../../lambdas/core/errors.js';
import { errorResponse, validate, type HttpRequest } from '../../../lambdas/core/http.js';
import { submitBatch, submitTask, type IngestDeps } from '../../../lambdas/core/ingest.js';
import type { JsonSchema } from '../../../lambdas/core/openapi/json-schema.js';
import type { RequestExample } from '../../../lambdas/core/openapi/route-docs.js';
import { PLAN_NAMES, resolvePolicy, type PlanName } from '../../../lambdas/core/plans.js';
import { DELIVERY_STATUSES, type StoreRegistry } from '../../../lambdas/core/ports.js';
import { ROUTES, type RouteId } from '../../../lambdas/core/routes.js';
import { STORE_STATUSES } from '../../../lambdas/core/store-model.js';
import { MAX_BATCH_TASKS } from '../../../lambdas/core/task-schemas.js';
import { newToken, TOKEN_PREFIX, tokenStatus } from '../../../lambdas/core/tokens.js';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { componentValidator, documentValidator } from '../../support/document-schema.js';
import { HANDLER_BODY } from '../../support/handler-bodies.js';
import { storeRecord, T0 } from '../support/fixtures.js';

/**
 * The document against the contract (../shared/contract.md): each route's success statuses and bodies, the
 * error answers as the handlers give them, the fields and values the contract names, and the statements
 * it makes, read in the texts a reader sees. The OpenAPI modules are imported inside the tests: the
 * document is built from module-level tables, and a change that breaks building it must fail a test here
 * rather than stop the file from loading.
 */
const openapi = async () => {
  const [document, examples, routeDocs, gateway] = await Promise.all([
    import('../../../lambdas/core/openapi/document.js'),
    import('../../../lambdas/core/openapi/examples.js'),
    import('../../../lambdas/core/openapi/route-docs.js'),
    import('../../../lambdas/core/openapi/gateway-models.js'),
  ]);
  return { ...document, ...examples, ...routeDocs, ...gateway, doc: document.buildOpenApiDocument() };
};

type Response = {
  $ref?: string;
  description?: string;
  content?: Record<string, { schema: { $ref: string } }>;
};
type Operation = {
  summary: string;
  description?: string;
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, Response>;
};
const operationOf = (doc: { paths: Record<string, Record<string, unknown>> }, id: RouteId): Operation => {
  const route = ROUTES.find((r) => r.id === id)!;
  return doc.paths[route.resource]![route.method.toLowerCase()] as Operation;
};
const refName = (ref: string | undefined): string | undefined => ref?.replace('#/components/schemas/', '');

/** Contract: what each route answers on success, with which body, and the request body it reads. */
const CONTRACT: Record<RouteId, { success: number[]; answer?: string; request?: string }> = {
  submitTask: { success: [202], answer: 'TaskAccepted', request: 'Task' },
  submitBatch: { success: [202], answer: 'BatchResult', request: 'BatchRequest' },
  taskStatus: { success: [200], answer: 'TaskStatus' },
  putStore: { success: [201, 200], answer: 'Store', request: 'PutStoreRequest' },
  getStore: { success: [200], answer: 'Store' },
  patchStore: { success: [200], answer: 'Store', request: 'PatchStoreRequest' },
  redriveDeadLetters: { success: [202], answer: 'RedriveResult' },
  createToken: { success: [201], answer: 'TokenCreated' },
  listTokens: { success: [200], answer: 'TokenList' },
  revokeToken: { success: [200], answer: 'TokenView' },
  rotateToken: { success: [201], answer: 'TokenRotated', request: 'RotateTokenRequest' },
  backfillUsageKey: { success: [200], answer: 'UsageKeyBackfill' },
  backfillUsageKeys: { success: [200], answer: 'UsageKeysBackfill' },
  listBacklog: { success: [200], answer: 'BacklogPage' },
  purgeStoreQueue: { success: [202], answer: 'PurgeResult', request: 'PurgeRequest' },
  storeMeasures: { success: [200], answer: 'StoreMeasures' },
  putStoreCampaign: { success: [201, 200], answer: 'Campaign', request: 'PutCampaignRequest' },
  listStoreCampaigns: { success: [200], answer: 'CampaignList' },
  deleteStoreCampaign: { success: [204] },
  putTenantCampaign: { success: [201, 200], answer: 'Campaign', request: 'PutCampaignRequest' },
  listTenantCampaigns: { success: [200], answer: 'CampaignList' },
  deleteTenantCampaign: { success: [204] },
};

describe('the document modules', () => {
  it('load and build the document and the gateway models inside a test', async () => {
    const { doc, gatewayRequestModels, OPENAPI_PATH } = await openapi();
    expect(Object.keys(doc.paths).sort()).toEqual(
      [...new Set([...ROUTES.map((r) => r.resource), OPENAPI_PATH])].sort(),
    );
    expect(Object.keys(gatewayRequestModels())).toEqual(['submitTask', 'submitBatch']);
  });
});

describe('routes against the contract', () => {
  it.each(ROUTES.map((r) => [r.id] as const))(
    '%s: its success statuses, answer body and request body',
    async (id) => {
      const { doc, ROUTE_DOCS } = await openapi();
      const op = operationOf(doc, id);
      const success = Object.keys(op.responses).filter((s) => Number(s) < 300);
      expect(success.sort()).toEqual(CONTRACT[id].success.map(String).sort());
      // The first listed is what a call without a request example answers (the documentation test).
      expect(ROUTE_DOCS[id].success[0]?.status).toBe(CONTRACT[id].success[0]);
      for (const status of success)
        expect(refName(op.responses[status]?.content?.['application/json']?.schema.$ref)).toBe(
          CONTRACT[id].answer,
        );
      expect(refName(op.requestBody?.content['application/json']?.schema.$ref)).toBe(CONTRACT[id].request);
    },
  );

  it('every non-2xx answer is the contract error body', async () => {
    const { doc } = await openapi();
    const responses = doc.components['responses'] as Record<string, Response>;
    for (const r of ROUTES) {
      for (const [status, response] of Object.entries(operationOf(doc, r.id).responses)) {
        if (Number(status) < 300) continue;
        const named = responses[response.$ref?.replace('#/components/responses/', '') ?? ''];
        expect(refName(named?.content?.['application/json']?.schema.$ref), `${r.id} ${status}`).toBe('Error');
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// The error examples and the integrator examples, answered by the ingest core on in-memory ports.

const ingest = (store: Partial<Parameters<typeof storeRecord>[0]> = {}, queueDown = false): IngestDeps => {
  const record = storeRecord({ storeId: 'acme-store-1', tenantId: 'acme', ...store });
  const down = async (): Promise<never> => {
    throw new Error('queue down');
  };
  const stores: StoreRegistry = {
    get: async (id) => (id === record.storeId ? record : undefined),
    create: async () => true,
    replace: async () => true,
    scan: async () => ({ stores: [] }),
  };
  return {
    dispatch: new MemoryDispatchState(),
    attention: { publish: async () => undefined },
    clock: { now: () => T0, sleep: async () => undefined },
    ids: { next: () => 'slot-1' },
    telemetry: new RecordingTelemetry(() => undefined, 'error'),
    stores,
    tasks: {
      send: queueDown ? down : async () => undefined,
      sendBatch: queueDown ? down : async () => ({ failed: [] }),
      receive: async () => [],
      deleteBatch: async () => undefined,
      changeVisibility: async () => undefined,
      deadLetter: async () => undefined,
      resend: async () => undefined,
    },
    deliveries: new MemoryDeliveryLog(),
  };
};

const post = (body: string, batch = false, headers: Record<string, string> = {}): HttpRequest => ({
  method: 'POST',
  resource: batch ? '/v1/stores/{storeId}/tasks/batch' : '/v1/stores/{storeId}/tasks',
  pathParameters: { storeId: 'acme-store-1' },
  headers: { 'content-type': 'application/json', ...headers },
  body,
  tenantId: 'acme',
  requestId: 'req-1',
});

const answer = (promise: Promise<{ status: number; body: unknown }>) =>
  promise.then(
    (r) => r,
    (error: unknown) => errorResponse(error),
  );
/** The contract error body without its optional `details` (the examples leave them out). */
const errorOf = ({ status, body }: { status: number; body: unknown }) => {
  const { error } = body as { error: { code: string; message: string } };
  return { status, error: { code: error.code, message: error.message } };
};

describe('error examples are the answers the handlers give', () => {
  it('400: the refused task example, answered by ingest', async () => {
    const { ERROR_EXAMPLES, ROUTE_DOCS } = await openapi();
    const invalid = ROUTE_DOCS.submitTask.body!.examples['invalid']!;
    const got = await answer(submitTask(ingest(), post(JSON.stringify(invalid.value))));
    expect(errorOf(got)).toEqual({ status: invalid.status, error: ERROR_EXAMPLES[400] });
  });

  it('401: a missing or bad credential', async () => {
    const { ERROR_EXAMPLES } = await openapi();
    expect(errorOf(errorResponse(new UnauthorizedError()))).toEqual({
      status: 401,
      error: ERROR_EXAMPLES[401],
    });
  });

  it("403: another tenant's store", async () => {
    const { ERROR_EXAMPLES, TASK_EXAMPLES } = await openapi();
    const got = await answer(
      submitTask(ingest({ tenantId: 'other' }), post(JSON.stringify(TASK_EXAMPLES.inventory))),
    );
    expect(errorOf(got)).toEqual({ status: 403, error: ERROR_EXAMPLES[403] });
  });

  it('404: an unknown store', async () => {
    const { ERROR_EXAMPLES, PATH_EXAMPLES } = await openapi();
    const deps = { stores: ingest({ storeId: 'another' }).stores } as Parameters<typeof existingStore>[0];
    const got = await answer(
      existingStore(deps, PATH_EXAMPLES.storeId).then(() => ({ status: 200, body: {} })),
    );
    expect(errorOf(got)).toEqual({ status: 404, error: ERROR_EXAMPLES[404] });
  });

  it('409: a disabled store', async () => {
    const { ERROR_EXAMPLES, TASK_EXAMPLES } = await openapi();
    const got = await answer(
      submitTask(ingest({ status: 'disabled' }), post(JSON.stringify(TASK_EXAMPLES.inventory))),
    );
    expect(errorOf(got)).toEqual({ status: 409, error: ERROR_EXAMPLES[409] });
  });

  it('413 and 415: a body over the limit, a body that is not JSON', async () => {
    const { ERROR_EXAMPLES } = await openapi();
    const large = await answer(submitTask(ingest(), post(JSON.stringify({ pad: 'x'.repeat(70_000) }))));
    expect(errorOf(large)).toEqual({ status: 413, error: ERROR_EXAMPLES[413] });
    const text = await answer(submitTask(ingest(), post('{}', false, { 'content-type': 'text/plain' })));
    expect(errorOf(text)).toEqual({ status: 415, error: ERROR_EXAMPLES[415] });
  });

  it('429: the contract calls it throttled', async () => {
    const { ERROR_EXAMPLES } = await openapi();
    expect(ERROR_EXAMPLES[429]).toEqual({ code: 'throttled', message: expect.stringContaining('retry') });
  });

  it('503: a store queue that takes nothing', async () => {
    const { ERROR_EXAMPLES, ROUTE_DOCS } = await openapi();
    const body = JSON.stringify(ROUTE_DOCS.submitBatch.body!.examples['mixed']!.value);
    const got = await answer(submitBatch(ingest({}, true), post(body, true)));
    expect(errorOf(got)).toEqual({ status: 503, error: ERROR_EXAMPLES[503] });
  });

  it('every documented error status has its example and its own description', async () => {
    const { ERROR_EXAMPLES, ERROR_DESCRIPTIONS, ROUTE_DOCS } = await openapi();
    const documented = [...new Set(Object.values(ROUTE_DOCS).flatMap((d) => d.errors))].sort();
    expect(Object.keys(ERROR_EXAMPLES).map(Number).sort()).toEqual(documented);
    expect(Object.keys(ERROR_DESCRIPTIONS).map(Number).sort()).toEqual(documented);
  });
});

describe('integrator answer examples are the answers ingest gives', () => {
  it('submitTask: the accepted answer of the first example', async () => {
    const { ROUTE_DOCS } = await openapi();
    const first = Object.values(ROUTE_DOCS.submitTask.body!.examples)[0]!;
    const got = await answer(submitTask(ingest(), post(JSON.stringify(first.value))));
    expect(got).toEqual({ status: first.status, body: ROUTE_DOCS.submitTask.response?.example });
  });

  it('submitBatch: the answer to the mixed batch, its invalid task rejected with the reason', async () => {
    const { ROUTE_DOCS } = await openapi();
    const mixed = ROUTE_DOCS.submitBatch.body!.examples['mixed']!;
    const got = await answer(submitBatch(ingest(), post(JSON.stringify(mixed.value), true)));
    expect(got).toEqual({ status: mixed.status, body: ROUTE_DOCS.submitBatch.response?.example });
  });
});

// ---------------------------------------------------------------------------------------------------------

const issuesOf = (schema: unknown, value: unknown): string[] => {
  try {
    validate(schema as never, value);
    return [];
  } catch (error) {
    return ((error as { details?: { issues: { field: string }[] } }).details?.issues ?? []).map(
      (i) => i.field,
    );
  }
};

describe('request examples', () => {
  // An example refused for two reasons shows neither well, and its answer names only the first.
  it('each refused example makes one mistake: its handler reports one issue', async () => {
    const { ROUTE_DOCS } = await openapi();
    const refused = Object.entries(ROUTE_DOCS).flatMap(([id, d]) =>
      Object.entries(d.body?.examples ?? {})
        .filter(([, e]) => e.status === 400)
        .map(([name, e]) => ({ key: `${id}.${name}`, e, schema: HANDLER_BODY[d.body!.schema] })),
    );
    expect(refused.length).toBeGreaterThan(5);
    const issues = Object.fromEntries(
      refused.map(({ key, e, schema }) => [key, issuesOf(schema, e.value).length]),
    );
    // The purge example is refused against its path (confirm must repeat the store id), not its schema.
    expect(issues).toEqual(
      Object.fromEntries(refused.map(({ key }) => [key, key === 'purgeStoreQueue.unconfirmed' ? 0 : 1])),
    );
  });

  it('the store examples agree: the store shown is the store the PUT example creates, with its plan policy', async () => {
    const { ROUTE_DOCS, STORE_EXAMPLE, PATH_EXAMPLES } = await openapi();
    const examples = ROUTE_DOCS.putStore.body!.examples as Record<string, RequestExample>;
    const create = examples['create']!.value as { tenantId: string; marketplace: string; plan: PlanName };
    const update = examples['update']!.value as typeof create & { overrides: Record<string, number> };
    expect(STORE_EXAMPLE).toMatchObject({ ...create, storeId: PATH_EXAMPLES.storeId });
    expect(update).toMatchObject(create);
    expect(Object.keys(update.overrides).length).toBeGreaterThan(0);
    const policy = resolvePolicy(create.plan, update.overrides);
    expect(STORE_EXAMPLE.policy).toEqual(policy);
    expect(STORE_EXAMPLE.effective).toEqual({ plan: create.plan, policy, source: 'store' });
    expect(STORE_EXAMPLE.rate.configured).toBe(policy.ratePerSecond);
  });

  it('the campaign answer is the window the PUT example sends, scheduled when it was answered', async () => {
    const { CAMPAIGN_EXAMPLES, CAMPAIGN_VIEW_EXAMPLE, PATH_EXAMPLES } = await openapi();
    const { from, until, ...rest } = CAMPAIGN_EXAMPLES.blackFriday;
    expect(CAMPAIGN_VIEW_EXAMPLE).toMatchObject({ ...rest, campaignId: PATH_EXAMPLES.campaignId });
    expect([Date.parse(CAMPAIGN_VIEW_EXAMPLE.from), Date.parse(CAMPAIGN_VIEW_EXAMPLE.until)]).toEqual([
      Date.parse(from),
      Date.parse(until),
    ]);
    expect(CAMPAIGN_VIEW_EXAMPLE.state).toBe(
      campaignState(CAMPAIGN_VIEW_EXAMPLE, Date.parse(CAMPAIGN_VIEW_EXAMPLE.updatedAt)),
    );
  });

  it('the campaign examples of a store name its store, those of a tenant its tenant', async () => {
    const { ROUTE_DOCS, PATH_EXAMPLES } = await openapi();
    const owners = (id: RouteId) => {
      const docs = ROUTE_DOCS[id];
      const example = docs.response!.example as { campaigns?: object[] };
      return (example.campaigns ?? [example]).map((c) => ({ storeId: undefined, tenantId: undefined, ...c }));
    };
    for (const id of ['putStoreCampaign', 'listStoreCampaigns'] as const)
      for (const c of owners(id))
        expect(c).toMatchObject({ storeId: PATH_EXAMPLES.storeId, tenantId: undefined });
    for (const id of ['putTenantCampaign', 'listTenantCampaigns'] as const)
      for (const c of owners(id))
        expect(c).toMatchObject({ storeId: undefined, tenantId: PATH_EXAMPLES.tenantId });
  });
});

describe('examples show something', () => {
  // A reader copies an example: an accepted body that sends nothing, an empty list or an empty string
  // shows nothing of its schema (a refused example may send an empty list: that is its mistake).
  it('every accepted example sends fields, no example has an empty string, no accepted one an empty list', async () => {
    const { ROUTE_DOCS } = await openapi();
    const empty: string[] = [];
    const walk = (value: unknown, path: string, accepted: boolean): void => {
      if (value === '') empty.push(path);
      if (Array.isArray(value)) {
        if (accepted && value.length === 0) empty.push(path);
        return value.forEach((v, i) => walk(v, `${path}[${i}]`, accepted));
      }
      if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`, accepted);
    };
    for (const [id, d] of Object.entries(ROUTE_DOCS)) {
      walk(d.response?.example, `${id}.response`, true);
      for (const [name, e] of Object.entries(d.body?.examples ?? {})) {
        if (e.status < 300 && Object.keys(e.value as object).length === 0) empty.push(`${id}.${name}`);
        walk(e.value, `${id}.${name}`, e.status < 300);
      }
    }
    expect(empty).toEqual([]);
  });
});

describe('identifiers and tokens in every example', () => {
  it('are ones the API accepts and issues (the path parameter schemas, the token format)', async () => {
    const { doc, ROUTE_DOCS, TOKEN_EXAMPLE } = await openapi();
    const components = doc.components.schemas;
    // Each path parameter's schema, as the document gives it.
    const idSchemas: Record<string, JsonSchema> = {};
    for (const methods of Object.values(doc.paths))
      for (const op of Object.values(methods) as {
        parameters?: { name: string; in: string; schema: JsonSchema }[];
      }[])
        for (const p of op.parameters ?? []) if (p.in === 'path') idSchemas[p.name] = p.schema;
    expect(Object.keys(idSchemas).sort()).toEqual([
      'campaignId',
      'eventId',
      'storeId',
      'tenantId',
      'tokenId',
    ]);
    const bad: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${path}[${i}]`));
      if (!value || typeof value !== 'object') return;
      for (const [k, v] of Object.entries(value)) {
        const schema = idSchemas[k];
        if (schema && !documentValidator(schema, components).safeParse(v).success)
          bad.push(`${path}.${k}=${String(v)}`);
        if (
          k === 'token' &&
          !(typeof v === 'string' && v.startsWith(TOKEN_PREFIX) && v.length === newToken().length)
        )
          bad.push(`${path}.token`);
        if (k === 'accepted')
          for (const e of v as string[])
            if (!documentValidator(idSchemas['eventId']!, components).safeParse(e).success)
              bad.push(`${path}.accepted`);
        walk(v, `${path}.${k}`);
      }
    };
    for (const [id, d] of Object.entries(ROUTE_DOCS)) {
      walk(d.response?.example, `${id}.response`);
      for (const [name, e] of Object.entries(d.body?.examples ?? {}))
        if (e.status < 300) walk(e.value, `${id}.${name}`);
    }
    expect(bad).toEqual([]);
    expect(TOKEN_EXAMPLE.startsWith(TOKEN_PREFIX)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------

/** A schema at a path of a component (`a.b`, `x[]` for the items), following references. */
const at = (components: Record<string, JsonSchema>, name: string, path: string): JsonSchema => {
  const deref = (s: JsonSchema): JsonSchema =>
    typeof s['$ref'] === 'string' ? deref(components[refName(s['$ref'])!]!) : s;
  let schema = deref(components[name]!);
  for (const part of path.split('.').filter(Boolean)) {
    const [field, items] = part.endsWith('[]') ? [part.slice(0, -2), true] : [part, false];
    schema = deref((schema['properties'] as Record<string, JsonSchema>)[field]!);
    if (items) schema = deref(schema['items'] as JsonSchema);
  }
  return schema;
};

/** The fields the contract names, required (and optional, `?`), per answer body. */
const CONTRACT_FIELDS: [string, string, string[]][] = [
  ['Error', '', ['error']],
  ['Error', 'error', ['code', 'message', 'details?']],
  [
    'Store',
    '',
    [
      'storeId',
      'tenantId',
      'marketplace',
      'plan',
      'status',
      'policy',
      'queue',
      'activeConsumers',
      'effective',
      'rate',
    ],
  ],
  [
    'Store',
    'policy',
    ['maxConcurrentConsumers', 'maxMessagesPerSlice', 'maxSliceSeconds', 'ratePerSecond', 'priority'],
  ],
  ['Store', 'queue', ['backlog', 'inFlight', 'delayed', 'deadLetters', 'oldestAgeSeconds']],
  ['Store', 'effective', ['plan', 'policy', 'source', 'campaignId?']],
  ['Store', 'rate', ['configured', 'effective', 'reason']],
  ['TaskAccepted', '', ['storeId', 'eventId', 'status']],
  ['BatchResult', '', ['accepted', 'rejected']],
  ['BatchResult', 'rejected[]', ['eventId', 'error']],
  ['BatchResult', 'rejected[].error', ['code', 'message']],
  ['TaskStatus', '', ['storeId', 'eventId', 'status', 'attempts?', 'lastError?']],
  ['TokenCreated', '', ['token']],
  ['CampaignList', '', ['campaigns']],
  ['CampaignList', 'campaigns[]', ['from', 'until', 'plan?', 'overrides?', 'note?']],
  ['Campaign', '', ['from', 'until', 'plan?', 'overrides?', 'note?']],
  ['BacklogPage', 'stores[]', ['storeId', 'activeSince', 'busySeconds']],
];

describe('answer schemas against the contract', () => {
  it.each(
    CONTRACT_FIELDS.map(
      ([name, path, fields]) => [`${name}${path ? `.${path}` : ''}`, name, path, fields] as const,
    ),
  )('%s has the contract fields', async (_label, name, path, fields) => {
    const { doc } = await openapi();
    const schema = at(doc.components.schemas, name, path);
    const required = fields.filter((f) => !f.endsWith('?'));
    expect(schema['required']).toEqual(expect.arrayContaining(required));
    expect(Object.keys(schema['properties'] as object)).toEqual(
      expect.arrayContaining(fields.map((f) => f.replace('?', ''))),
    );
  });

  it('lists the values the contract and the code give each enum', async () => {
    const { doc } = await openapi();
    const values = (name: string, path: string) => {
      const s = at(doc.components.schemas, name, path);
      return s['enum'] ?? [s['const']];
    };
    const tokenStatuses = [{}, { expiresAt: T0 + 1 }, { expiresAt: T0 }, { revokedAt: T0 }].map((r) =>
      tokenStatus(r, T0),
    );
    const window = { from: new Date(T0).toISOString(), until: new Date(T0 + 1).toISOString() };
    const campaignStates = [T0 - 1, T0, T0 + 1].map((t) => campaignState(window, t));
    expect({
      plan: values('Store', 'plan'),
      status: values('Store', 'status'),
      source: values('Store', 'effective.source'),
      reason: values('Store', 'rate.reason'),
      accepted: values('TaskAccepted', 'status'),
      delivery: values('TaskStatus', 'status'),
      token: values('TokenView', 'status'),
      state: values('Campaign', 'state'),
      purged: values('PurgeResult', 'status'),
    }).toEqual({
      plan: [...PLAN_NAMES],
      status: [...STORE_STATUSES],
      source: ['store', 'campaign'],
      reason: ['policy', 'header', 'backoff'],
      accepted: ['accepted'],
      delivery: [...DELIVERY_STATUSES],
      token: tokenStatuses,
      state: campaignStates,
      purged: ['purged'],
    });
    expect(DELIVERY_STATUSES).toEqual(['pending', 'processing', 'delivered', 'stale', 'dead_lettered']);
  });

  // A field whose meaning its name does not say is described, in the contract's terms.
  it.each([
    ['Error', 'error.code', 'machine'],
    ['Error', 'error.message', 'names the field'],
    ['Store', 'policy', 'own policy'],
    ['Store', 'effective', 'campaign'],
    ['Store', 'effective.scope', 'tenant'],
    ['Store', 'rate', 'marketplace'],
    ['Store', 'rate.configured', 'ratePerSecond'],
    ['Store', 'rate.effective', 'min(configured'],
    ['Store', 'rate.reason', 'backoff'],
    ['TokenCreated', 'token', 'shown once'],
    ['BacklogPage', 'cursor', '?cursor='],
    ['Campaign', 'state', 'answer'],
  ])('%s.%s is described ("%s")', async (name, path, words) => {
    const { doc } = await openapi();
    expect(at(doc.components.schemas, name, path)['description']).toEqual(expect.stringContaining(words));
  });

  it('describes the batch items as tasks, and bounds them as the handler does', async () => {
    const { doc } = await openapi();
    const tasks = at(doc.components.schemas, 'BatchRequest', 'tasks');
    expect(tasks).toMatchObject({
      items: { $ref: '#/components/schemas/Task' },
      minItems: 1,
      maxItems: MAX_BATCH_TASKS,
    });
    expect(
      componentValidator('BatchRequest', doc.components.schemas).safeParse({ tasks: [{}] }).success,
    ).toBe(false);
  });
});

describe('texts state what the contract says', () => {
  it.each([
    ['submitTask', ['202 means the task is durable', 'same eventId again is safe']],
    [
      'submitBatch',
      [`up to ${MAX_BATCH_TASKS} tasks`, 'validated on its own', '`rejected`', 'refused (400) only'],
    ],
    ['taskStatus', ['"pending"', 'never seen']],
    ['putStore', ['work queue and DLQ', 'repeated PUT answers 200']],
    ['patchStore', ['Resuming a store with backlog']],
    ['revokeToken', ['authorizer cache']],
    ['rotateToken', ['overlap']],
    ['backfillUsageKeys', ['`cursor`']],
    ['purgeStoreQueue', ['cannot be undone']],
    ...(['putStoreCampaign', 'putTenantCampaign'] as const).map(
      (id) =>
        [
          id,
          [
            '`from` (inclusive)',
            'no call at the boundaries',
            'store campaign wins over a tenant campaign',
            'latest `from` wins',
            `within ${CAMPAIGN_CACHE_MS / 1000} s`,
            `At most ${MAX_CAMPAIGNS} campaigns`,
            `after ${ENDED_CAMPAIGN_KEEP_MS / 86_400_000} days`,
          ],
        ] as const,
    ),
    ['deleteStoreCampaign', [`within ${CAMPAIGN_CACHE_MS / 1000} s`]],
    ['deleteTenantCampaign', [`within ${CAMPAIGN_CACHE_MS / 1000} s`]],
  ] as [RouteId, string[]][])('%s', async (id, phrases) => {
    const { doc } = await openapi();
    const op = operationOf(doc, id);
    const text = `${op.summary} ${op.description ?? ''}`;
    for (const phrase of phrases) expect(text).toContain(phrase);
  });

  it('the campaign request names its bound', async () => {
    const { doc } = await openapi();
    expect(at(doc.components.schemas, 'PutCampaignRequest', 'until')['description']).toContain(
      `${MAX_CAMPAIGN_DAYS} days`,
    );
  });

  it("the document's info: the API, the two kinds of caller, the error shape, its licence", async () => {
    const { doc } = await openapi();
    const info = doc.info as {
      title: string;
      version: string;
      description: string;
      license: { name: string; identifier: string };
    };
    expect(info.title).toContain('Attention Queue');
    expect(info.version.length).toBeGreaterThan(0);
    for (const phrase of ['tenant token', 'IAM', 'admin bearer token', '{"error":{"code","message"'])
      expect(info.description).toContain(phrase);
    const { default: pkg } = await import('../../../package.json', { with: { type: 'json' } });
    expect(info.license).toEqual({ name: pkg.license, identifier: pkg.license });
  });

  it('servers and tags say what they are', async () => {
    const { doc } = await openapi();
    for (const s of doc['servers'] as { description: string }[])
      expect(s.description.length).toBeGreaterThan(0);
    const tags = Object.fromEntries(
      (doc['tags'] as { name: string; description: string }[]).map((t) => [t.name, t.description]),
    );
    expect(tags['Integrator']).toContain('tenant token');
    for (const name of ['Stores', 'Tokens', 'Operations', 'Campaigns']) expect(tags[name]).toContain('admin');
  });

  it('the document describes itself as a JSON object', async () => {
    const { doc, OPENAPI_PATH } = await openapi();
    const self = doc.paths[OPENAPI_PATH]!['get'] as Operation;
    expect(self.responses['200']).toEqual({
      description: expect.stringContaining('OpenAPI 3.1'),
      content: { 'application/json': { schema: { type: 'object' } } },
    });
  });

  it('gateway models carry their names as titles', async () => {
    const { gatewayRequestModels } = await openapi();
    for (const model of Object.values(gatewayRequestModels()))
      expect(model!.schema['title']).toBe(model!.name);
  });
});

describe('toJsonSchema', () => {
  // The document's dialect is OpenAPI 3.1's (draft 2020-12), which writes a tuple as prefixItems; draft 4
  // (the gateway models) as an items array. No parameter is a tuple today: this keeps one right tomorrow.
  it('converts to draft 2020-12 unless told otherwise', async () => {
    const { z } = await import('zod');
    const { toJsonSchema } = await import('../../../lambdas/core/openapi/json-schema.js');
    const pair = z.tuple([z.string(), z.number()]);
    expect(toJsonSchema(pair)).toMatchObject({ prefixItems: [{ type: 'string' }, { type: 'number' }] });
    expect(toJsonSchema(pair, 'draft-04')).toMatchObject({ items: [{ type: 'string' }, { type: 'number' }] });
    expect(toJsonSchema(pair)).not.toHaveProperty('$schema');
  });
});
