import { mergeOverrides, patchStore, redriveDeadLetters } from '../lambdas/core/admin.js';
import { reconcile } from '../lambdas/core/reconcile.js';
import type { StoreRegistry, TaskQueues } from '../lambdas/core/ports.js';
import type { StoreRecord } from '../lambdas/core/store-model.js';
import { WATCH_RULES } from '../lambdas/core/store-watch.js';
import type { OperatorVariant } from './model-operator.js';
import { override, type Variant } from './protocol-variant.js';

/** Swallows a port method's failure, answering `fallback` instead (the broken adapters below). */
const swallowing =
  <A extends unknown[], R>(call: (...args: A) => Promise<R>, fallback: R) =>
  (...args: A): Promise<R> =>
    call(...args).catch(() => fallback);

/** First record each worker read of a store in one run (per deployment), by store. */
const planCaches = new WeakMap<object, Map<string, StoreRecord>>();
/** The messages-per-slice override of each worker's first read of a store in one run, by store. */
const sliceCaches = new WeakMap<object, Map<string, number | undefined>>();

/**
 * Broken variants of the edges the simulation models since issue #10: hard SQS/DynamoDB errors
 * (sim/model-errors.ts) and operator actions (sim/model-operator.ts). Each is rejected by a seed of the
 * fixed set, for the invariant it breaks.
 */
export const EDGE_VARIANTS: (Variant & OperatorVariant)[] = [
  {
    name: 'ingest-swallows-send-error',
    breaks: 1,
    description:
      'ingest takes a failed SendMessage for a sent one and answers 202: the integrator does not retry a task that never reached its queue',
    tasks: (inner: TaskQueues, kind) =>
      kind !== 'ingest'
        ? inner
        : {
            ...inner,
            send: swallowing(inner.send.bind(inner), undefined),
            sendBatch: swallowing(inner.sendBatch.bind(inner), { failed: [] }),
          },
  },
  {
    name: 'receive-error-as-empty',
    breaks: 2,
    description:
      "the worker's receive answers [] when SQS fails: a long poll that failed (or whose messages were received and the answer lost) reads as an empty queue, and the store is marked idle with its backlog",
    tasks: (inner: TaskQueues, kind) =>
      kind !== 'worker' ? inner : { ...inner, receive: swallowing(inner.receive.bind(inner), []) },
  },
  {
    name: 'paused-check-skipped',
    breaks: 13,
    description:
      "the worker skips the store's status before its acquire (it reads every store as active): a paused store's attention runs a slice",
    workerStores: (inner: StoreRegistry) => ({
      ...inner,
      get: async (storeId) => {
        const record = await inner.get(storeId);
        return record && { ...record, status: 'active' };
      },
    }),
  },
  {
    name: 'slice-keeps-its-read',
    breaks: 13,
    description:
      'a running slice never re-reads its store (as before session 21): a store paused mid-slice gets calls until the slice ends, up to maxSliceSeconds after the pause',
    watchRules: { ...WATCH_RULES, recheckMs: Infinity },
  },
  {
    name: 'slice-ignores-lowered-cap',
    breaks: 3,
    description:
      'a running slice re-reads its store but goes on under a lowered cap (it checks only the rate): after a plan change lowers the cap, every consumer taken under the old one calls on until its slice ends',
    watchRules: { ...WATCH_RULES, keeps: (slice, now) => now.ratePerSecond >= slice.ratePerSecond },
  },
  {
    name: 'maintenance-consumed',
    breaks: 13,
    description:
      'the worker takes a store in maintenance for a consumable one (as if only `paused` held the backlog): a store in maintenance runs slices',
    workerStores: (inner: StoreRegistry) => ({
      ...inner,
      get: async (storeId) => {
        const record = await inner.get(storeId);
        return record?.status === 'maintenance' ? { ...record, status: 'active' } : record;
      },
    }),
  },
  {
    name: 'redrive-unmarked',
    breaks: 2,
    description:
      'the redrive marks the store active but sets no redrive mark (as before issue #10): a worker that drains faster than the move feeds finds the queue empty and idles the store, and the rest of the move lands in an idle store',
    redrive: (deps, request) =>
      redriveDeadLetters(
        {
          ...deps,
          dispatch: override(deps.dispatch, 'beginRedrive', (storeId: string, now: number) =>
            deps.dispatch.markActive(storeId, now),
          ),
        },
        request,
      ),
  },
  {
    name: 'cached-plan',
    breaks: 3,
    description:
      "the worker keeps each store's plan and overrides from its first read (a container cache no plan change invalidates): after the cap is lowered it still acquires under the old cap",
    workerStores: (inner: StoreRegistry, run: object) => ({
      ...inner,
      get: async (storeId) => {
        const record = await inner.get(storeId);
        if (!record) return record;
        const cache = planCaches.get(run) ?? new Map<string, StoreRecord>();
        planCaches.set(run, cache);
        const first = cache.get(storeId) ?? record;
        cache.set(storeId, first);
        const { overrides: _now, ...rest } = record;
        return { ...rest, plan: first.plan, ...(first.overrides ? { overrides: first.overrides } : {}) };
      },
    }),
  },
  {
    name: 'no-index-backfill',
    breaks: 2,
    description:
      'the reconciler has no index backfill (as at f267a90): after an upgrade from older code, a store marked active with `activeShard` alone is in no index, and only its next task or the sweep finds it',
    reconcile: (deps) => reconcile({ ...deps, settings: { ...deps.settings, backfillIndex: false } }),
  },
  {
    name: 'never-idle',
    breaks: 8,
    description:
      'a worker never marks its store idle (markIdle always refused, as if a condition could never hold): an empty store keeps its slot and its active mark, and its slot is leased, reclaimed and announced again forever',
    dispatch: (inner, kind) =>
      kind !== 'worker'
        ? inner
        : override(inner, 'markIdle', async (storeId: string) => ({
            ok: false as const,
            current: await inner.read(storeId),
          })),
  },
  {
    name: 'store-write-unconditional',
    breaks: 14,
    description:
      "the admin's store writes are blind, as before revisions: a PATCH puts the record it built from its own read over whatever another PATCH wrote meanwhile, so a pause sent with a plan change can be undone by it",
    stores: (inner: StoreRegistry, kind) =>
      kind !== 'operator'
        ? inner
        : override(inner, 'replace', async (record: StoreRecord) => {
            const current = await inner.get(record.storeId);
            return current !== undefined && inner.replace(record, current);
          }),
  },
  {
    name: 'slice-size-cached',
    breaks: 4,
    description:
      "the worker keeps each store's messages per slice from its first read (a container cache the operator's setOverrides does not invalidate): a slice after the operator lowered it receives more than the store now allows",
    workerStores: (inner: StoreRegistry, run: object) => ({
      ...inner,
      get: async (storeId) => {
        const record = await inner.get(storeId);
        if (!record) return record;
        const cache = sliceCaches.get(run) ?? new Map<string, number | undefined>();
        sliceCaches.set(run, cache);
        if (!cache.has(storeId)) cache.set(storeId, record.overrides?.maxMessagesPerSlice);
        const first = cache.get(storeId);
        const { maxMessagesPerSlice: _now, ...overrides } = record.overrides ?? {};
        return {
          ...record,
          overrides: first === undefined ? overrides : { ...overrides, maxMessagesPerSlice: first },
        };
      },
    }),
  },
  {
    name: 'set-overrides-merged-once',
    breaks: 14,
    description:
      "a PATCH's setOverrides is merged into the overrides of a read of its own, before the write's, and sent as all of them: when another operator's field lands after that read, the write (or its conditional retry) puts the stale overrides back over it",
    patchStore: async (deps, request) => {
      const body = JSON.parse(request.body ?? '{}') as { setOverrides?: Record<string, unknown> };
      const current = await deps.stores.get(request.pathParameters?.['storeId'] ?? '');
      if (body.setOverrides === undefined || current === undefined) return patchStore(deps, request);
      const merged = mergeOverrides(current.overrides, body.setOverrides);
      const { setOverrides: _named, ...rest } = body;
      return patchStore(deps, { ...request, body: JSON.stringify({ ...rest, overrides: merged }) });
    },
  },
];

/**
 * Not yet rejected by any seed searched (it needs a zombie's fan-out — about 1 seed in 3,000 — to land while the
 * cap is lowered to 1 and a lone lease runs, and the cap to be raised before that lease ends; session 10 ran the
 * ~49,000 seeds of 3,000,001–3,266,167 and 4,000,001–4,270,418 with such a window and zombie stalls): kept for
 * `npm run sim -- --variant fanout-unfenced` searches, outside the catalogue `npm test` asserts. The fence
 * itself is shown on both adapters (`dispatch-state-contract`) and in `signal-store.test.ts`.
 */
export const FANOUT_UNFENCED: Variant = {
  name: 'fanout-unfenced',
  breaks: 9,
  description:
    "a fan-out issues its slot whether or not its issuer still holds its lease (as before issue #10's review): a zombie's fan-out, after the cap was lowered to 1 and raised again, puts a slot beside a lease that paces alone on its own clock, and the two call at up to twice the store's rate",
  dispatch: (inner, kind) =>
    kind !== 'worker'
      ? inner
      : override(
          inner,
          'issueSlot',
          (storeId: string, slotId: string, dueAt: number, limit: number, now: number) =>
            inner.issueSlot(storeId, slotId, dueAt, limit, now),
        ),
};
