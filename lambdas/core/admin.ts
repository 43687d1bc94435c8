import { effectiveRate, heededState, type EffectiveRate, type RateState } from './adaptive-rate.js';
import { z } from 'zod';
import { ConflictError, NotFoundError } from './errors.js';
import {
  json,
  parseJsonBody,
  storeIdOf,
  TenantIdSchema,
  validate,
  type HttpRequest,
  type HttpResponse,
} from './http.js';
import { effectivePolicy, readStoreCampaigns, type CampaignBook } from './campaigns.js';
import { liveLeases } from './dispatch-model.js';
import {
  MAX_RECEIVE_COUNT,
  OverridesSchema,
  PLAN_NAMES,
  PolicySchema,
  type Overrides,
  type Policy,
} from './plans.js';
import type { QueueAdmin, StoreQueueUrls, StoreRegistry, TokenStore } from './ports.js';
import { signalStore, type SignalDeps } from './signal.js';
import { isConsumable, policyOf, STORE_STATUSES, type StoreRecord } from './store-model.js';
import { writeStore } from './store-writes.js';

export interface AdminDeps extends SignalDeps {
  stores: StoreRegistry;
  queues: QueueAdmin;
  tokens: TokenStore;
  /** Campaign windows (absent: none); the store view shows the policy in force. */
  campaigns?: CampaignBook;
}

export const PutStoreBody = z.strictObject({
  tenantId: TenantIdSchema,
  marketplace: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be 1–64 characters of [a-z0-9-]'),
  plan: z.enum(PLAN_NAMES),
  status: z.enum(STORE_STATUSES).optional(),
  overrides: OverridesSchema.optional(),
});

/**
 * `setOverrides` on PATCH: the named override fields set (a value) or removed (null), the store's other overrides
 * kept — where `overrides` replaces them all. Merged on the record as written (`writeStore`), so two operators
 * each setting one field at once both hold.
 */
export const SetOverridesSchema = z.strictObject(
  Object.fromEntries(
    Object.entries(PolicySchema.shape).map(([field, schema]) => [field, schema.nullable().optional()]),
  ) as { [K in keyof Policy]: z.ZodOptional<z.ZodNullable<(typeof PolicySchema.shape)[K]>> },
);

export const PatchStoreBody = z
  .strictObject({
    status: z.enum(STORE_STATUSES).optional(),
    plan: z.enum(PLAN_NAMES).optional(),
    overrides: OverridesSchema.nullable().optional(),
    setOverrides: SetOverridesSchema.optional(),
  })
  .refine(
    (b) =>
      b.status !== undefined ||
      b.plan !== undefined ||
      b.overrides !== undefined ||
      b.setOverrides !== undefined,
    { message: 'give at least one of status, plan, overrides, setOverrides' },
  )
  .refine((b) => b.overrides === undefined || b.setOverrides === undefined, {
    message: 'give overrides (all of them) or setOverrides (some), not both',
  });

/** `current` with `setOverrides` applied: each named field set to its value, or removed where it is null. */
export const mergeOverrides = (
  current: Overrides | undefined,
  setOverrides: Record<string, unknown>,
): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...current };
  for (const [field, value] of Object.entries(setOverrides)) {
    if (value === null) delete merged[field];
    else if (value !== undefined) merged[field] = value;
  }
  return merged;
};

/** The store's overrides after a PATCH: replaced (`overrides`, null for none), merged (`setOverrides`), or kept. */
const patchedOverrides = (
  current: Overrides | undefined,
  body: z.infer<typeof PatchStoreBody>,
): Overrides | undefined => {
  if (body.overrides !== undefined) return body.overrides ?? undefined;
  if (body.setOverrides === undefined) return current;
  const merged = mergeOverrides(current, body.setOverrides);
  return Object.keys(merged).length === 0 ? undefined : (merged as Overrides);
};

/** The store view's `rate`: configured and effective calls per second (2 decimals) and why they differ. */
export const rateView = (
  state: RateState | undefined,
  policy: Pick<Policy, 'ratePerSecond' | 'throttleScope'>,
  now: number,
): EffectiveRate => {
  const rate = effectiveRate(heededState(state, policy.throttleScope), policy.ratePerSecond, now);
  return { ...rate, effective: Math.round(rate.effective * 100) / 100 };
};

const storeNotFound = (storeId: string): NotFoundError =>
  new NotFoundError('store_not_found', `store ${storeId} does not exist`);

export const existingStore = async (deps: AdminDeps, storeId: string): Promise<StoreRecord> => {
  const store = await deps.stores.get(storeId);
  if (!store) throw storeNotFound(storeId);
  return store;
};

/**
 * The contract's store view: configuration, effective policy, queue counts and live consumers — with the
 * dispatch item it was built from, for callers that show more of it (one GetItem for both).
 */
export const readStoreView = async (deps: AdminDeps, store: StoreRecord) => {
  const [counts, dispatch, campaigns] = await Promise.all([
    deps.queues.counts(store),
    deps.dispatch.read(store.storeId),
    readStoreCampaigns(deps.campaigns, store),
  ]);
  const now = deps.clock.now();
  const pending = counts.backlog + counts.inFlight + counts.delayed;
  // SQS exposes no per-queue age attribute; estimate it from the oldest message seen at the last slice end,
  // or from when the store last became busy (CloudWatch's ApproximateAgeOfOldestMessage is the exact figure).
  const since = dispatch?.headSentAt ?? dispatch?.activeSince;
  const oldestAgeSeconds =
    pending > 0 && since !== undefined ? Math.max(0, Math.round((now - since) / 1000)) : 0;
  // The policy in force now: the store's own, or a campaign's between its from and until.
  const effective = effectivePolicy(store, campaigns, now);
  const view = {
    storeId: store.storeId,
    tenantId: store.tenantId,
    marketplace: store.marketplace,
    plan: store.plan,
    status: store.status,
    policy: policyOf(store),
    effective,
    queue: { ...counts, oldestAgeSeconds },
    activeConsumers: dispatch ? liveLeases(dispatch, now) : 0,
    // Slices in a row that ended on an operational error (a deleted queue, denied receives): the store
    // backs off, down to one look per 15 min, and this says why it is slow. 0 when healthy.
    errorStreak: Math.max(0, ...Object.values(dispatch?.slots ?? {}).map((slot) => slot.e ?? 0)),
    // The adaptive rate: the policy's in force (a campaign's rate and throttle scope included, as the workers run
    // it), or lower where the marketplace said so (headers) or throttled (backoff).
    rate: rateView(dispatch?.rate, effective.policy, now),
  };
  return { view, dispatch };
};

/** The contract's store view: configuration, effective policy, queue counts and live consumers. */
export const storeView = async (deps: AdminDeps, store: StoreRecord) =>
  (await readStoreView(deps, store)).view;

/** A store that becomes consumable is signalled, so its backlog drains with no new task (contract). */
const afterStatusChange = async (
  deps: AdminDeps,
  before: StoreRecord | undefined,
  after: StoreRecord,
): Promise<void> => {
  if (!isConsumable(after.status) || (before !== undefined && isConsumable(before.status))) return;
  if (before === undefined) return; // a new store has no backlog yet
  await deps.dispatch.markActive(after.storeId, deps.clock.now());
  await signalStore(deps, after.storeId, { limit: 1, reason: 'resume', priority: policyOf(after).priority });
};

export const putStore = async (deps: AdminDeps, request: HttpRequest): Promise<HttpResponse> => {
  const storeId = storeIdOf(request);
  const body = validate(PutStoreBody, parseJsonBody(request, 16 * 1024));
  // Created once, on the first attempt that passes the tenant check (a write lost to another is built again).
  let queues: StoreQueueUrls | undefined;
  const { before, after } = await writeStore(deps.stores, storeId, async (existing) => {
    if (existing && existing.tenantId !== body.tenantId) {
      throw new ConflictError(
        'tenant_mismatch',
        `store ${storeId} belongs to another tenant and cannot be moved`,
      );
    }
    if (queues === undefined) {
      queues = await deps.queues.createStoreQueues(storeId, {
        maxReceiveCount: MAX_RECEIVE_COUNT,
        tags: { storeId, tenantId: body.tenantId },
      });
      await deps.dispatch.ensure(storeId);
    }
    const now = deps.clock.now();
    return {
      storeId,
      tenantId: body.tenantId,
      marketplace: body.marketplace,
      plan: body.plan,
      status: body.status ?? existing?.status ?? 'active',
      ...(body.overrides ? { overrides: body.overrides } : {}),
      ...queues,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
  });
  await afterStatusChange(deps, before, after);
  deps.telemetry.info('store saved', {
    storeId,
    tenantId: after.tenantId,
    plan: after.plan,
    status: after.status,
    caller: request.caller,
  });
  return json(before === undefined ? 201 : 200, await storeView(deps, after));
};

export const getStore = async (deps: AdminDeps, request: HttpRequest): Promise<HttpResponse> =>
  json(200, await storeView(deps, await existingStore(deps, storeIdOf(request))));

export const patchStore = async (deps: AdminDeps, request: HttpRequest): Promise<HttpResponse> => {
  const storeId = storeIdOf(request);
  const body = validate(PatchStoreBody, parseJsonBody(request, 16 * 1024));
  // Built on the record as it is when written: a change made meanwhile by another caller is kept.
  const { before, after } = await writeStore(deps.stores, storeId, async (current) => {
    if (!current) throw storeNotFound(storeId);
    // A store created before task priority gains its high queue here (creating the queues is idempotent).
    const queues =
      current.priorityQueueUrl === undefined
        ? await deps.queues.createStoreQueues(storeId, {
            maxReceiveCount: MAX_RECEIVE_COUNT,
            tags: { storeId, tenantId: current.tenantId },
          })
        : {};
    const { overrides: _old, ...rest } = current;
    const overrides = patchedOverrides(current.overrides, body);
    return {
      ...rest,
      ...queues,
      ...(body.status ? { status: body.status } : {}),
      ...(body.plan ? { plan: body.plan } : {}),
      ...(overrides ? { overrides } : {}),
      updatedAt: deps.clock.now(),
    };
  });
  await afterStatusChange(deps, before, after);
  deps.telemetry.info('store changed', {
    storeId,
    from: before?.status,
    to: after.status,
    plan: after.plan,
    caller: request.caller,
  });
  return json(200, await storeView(deps, after));
};

/** StartMessageMoveTask accepts at most 500 messages per second. */
const REDRIVE_MAX_RATE = 500;

export const redriveDeadLetters = async (deps: AdminDeps, request: HttpRequest): Promise<HttpResponse> => {
  const store = await existingStore(deps, storeIdOf(request));
  const policy = policyOf(store);
  const rate = Math.min(REDRIVE_MAX_RATE, Math.max(1, Math.floor(policy.ratePerSecond)));
  // SQS runs one move per dead-letter queue: a second redrive is refused before anything is written.
  if (await deps.queues.redriveRunning(store)) {
    throw new ConflictError('redrive_in_progress', `a redrive of store ${store.storeId} is still moving`);
  }
  // Marked first, and kept until the reconciler sees the move end: moved messages bump no enqSeq, so
  // nothing else would stop a worker that drains faster than the move feeds from marking the store idle.
  await deps.dispatch.beginRedrive(store.storeId, deps.clock.now());
  const { moving } = await deps.queues.redrive(store, rate);
  if (isConsumable(store.status))
    await signalStore(deps, store.storeId, { limit: 1, reason: 'redrive', priority: policy.priority });
  deps.telemetry.info('dead letters redriven', { storeId: store.storeId, moving, caller: request.caller });
  return json(202, { storeId: store.storeId, moving });
};

// Tenant tokens (create, list, revoke, rotate) live in tenant-tokens.ts.
