import { handleAttention, type AttentionOutcome } from '../lambdas/core/attention.js';
import { submitBatch, submitTask } from '../lambdas/core/ingest.js';
import type {
  DeliveryLog,
  DispatchState,
  Marketplace,
  StoreRegistry,
  TaskQueues,
} from '../lambdas/core/ports.js';
import { signalStore } from '../lambdas/core/signal.js';
import { VISIBILITY_MARGIN_SECONDS, ZOMBIE_HIDE_MS } from '../lambdas/core/timing.js';
import { override, type Variant } from './protocol-variant.js';
import { PRIORITY_VARIANTS } from './variants-priority.js';
import { ADAPTIVE_VARIANTS } from './variants-adaptive.js';
import { RATE_BLOCK_VARIANTS } from './variants-rate-block.js';
import { CAMPAIGN_VARIANTS } from './variants-campaigns.js';
import { SETTLE_VARIANTS } from './variants-settle.js';
import { EDGE_VARIANTS, FANOUT_UNFENCED } from './variants-edges.js';
import { BATCH_VARIANTS } from './variants-batch.js';
import { RECEIVE_VARIANTS } from './variants-receive.js';
import { CONFIRM_VARIANTS } from './variants-confirm.js';

/**
 * The version mark as it was before issue #10: checked before the call, written only with `delivered`.
 * (Per store: the variant only has to be wrong where the version order is checked, single-consumer stores.)
 */
const markAfterCall = (inner: DeliveryLog): DeliveryLog => {
  const unwritten = new Map<string, { entityId: string; version: number }>();
  return new Proxy(inner, {
    get: (target, property) => {
      if (property === 'markVersion')
        return async (storeId: string, entityId: string, version: number) => {
          const current = await target.deliveredVersion(storeId, entityId);
          if (current !== undefined && current > version) return { ok: false, current };
          unwritten.set(storeId, { entityId, version });
          return { ok: true };
        };
      if (property === 'settle')
        return async (...args: Parameters<DeliveryLog['settle']>) => {
          const [storeId, , , outcome] = args;
          const mark = unwritten.get(storeId);
          unwritten.delete(storeId);
          if (outcome.status === 'delivered' && mark)
            await target.markVersion(storeId, mark.entityId, mark.version, outcome.now);
          return target.settle(...args);
        };
      const value = (target as unknown as Record<PropertyKey, unknown>)[property];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
};

/** The protocol exactly as lambdas/core builds it (the wake-up races the simulation found are fixed there). */
export const AS_BUILT: Variant = { name: 'as-built', breaks: 0, description: 'lambdas/core as built' };

/**
 * Deliberately broken protocols, one (or more) per invariant. Each is a wrapper around a port or a small
 * alternative function; lambdas/core is never changed. The test suite asserts the simulation rejects each.
 */
const BROKEN: Variant[] = [
  {
    name: 'delete-on-receive',
    breaks: 1,
    description: 'the worker deletes task messages as soon as it receives them, before delivering',
    tasks: (inner: TaskQueues, kind) =>
      kind !== 'worker'
        ? inner
        : override(inner, 'receive', async (url, opts) => {
            const messages = await inner.receive(url, opts);
            if (messages.length > 0)
              await inner.deleteBatch(
                url,
                messages.map((m) => m.receiptHandle),
              );
            return messages;
          }),
  },
  {
    name: 'no-ingest-write-ahead',
    breaks: 2,
    description:
      'ingest records its enqueue only after its send, as before issue #10: an ingest that dies between ' +
      'the two leaves tasks in an idle store, found only by the sweep',
    dispatch: (inner: DispatchState, kind) => {
      if (kind !== 'ingest') return inner;
      const pending = new Map<string, { count: number; now: number }>();
      return new Proxy(inner, {
        get: (target, property) => {
          if (property === 'beginEnqueue')
            return async (storeId: string, count: number, now: number) => {
              pending.set(storeId, { count, now });
            };
          if (property === 'endEnqueue')
            return async (storeId: string) => {
              const ahead = pending.get(storeId) ?? { count: 1, now: 0 };
              return target.recordEnqueued(storeId, ahead.count, ahead.now);
            };
          const value = (target as unknown as Record<PropertyKey, unknown>)[property];
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  },
  {
    name: 'bump-before-send',
    breaks: 2,
    description: 'ingest bumps enqSeq and signals before the task is durable (the lost wake-up)',
    submit: async (deps, request, batch) => {
      if (batch) return submitBatch(deps, request);
      const storeId = request.pathParameters['storeId'] as string;
      const store = await deps.stores.get(storeId);
      if (!store) return { status: 404, body: {} };
      const task = JSON.parse(request.body ?? '{}') as { eventId: string };
      const now = deps.clock.now();
      const item = await deps.dispatch.recordEnqueued(storeId, 1, now); // BUG: before the task is durable
      if (Object.keys(item.slots).length === 0)
        await signalStore(deps, storeId, { limit: 1, reason: 'ingest', priority: 'normal' });
      await deps.tasks.send(
        store.queueUrl,
        JSON.stringify({ v: 1, storeId, ...task, acceptedAt: now, correlationId: request.requestId }),
      );
      return { status: 202, body: { storeId, eventId: task.eventId, status: 'accepted' } };
    },
  },
  {
    name: 'idle-ignores-enqseq',
    breaks: 2,
    description: 'markIdle without the enqSeq condition (a task sent during the empty poll is stranded)',
    dispatch: (inner: DispatchState) =>
      override(inner, 'markIdle', async (storeId: string, slotId: string, fence: number, opts) => {
        const item = await inner.read(storeId);
        return inner.markIdle(storeId, slotId, fence, { ...opts, seenSeq: item?.enqSeq ?? opts.seenSeq });
      }),
  },
  {
    name: 'reconciler-no-repair',
    breaks: 2,
    description: 'the reconciler never reclaims an expired lease nor re-announces a lost attention',
    dispatch: (inner: DispatchState, kind) => {
      if (kind !== 'reconciler') return inner;
      const refuse = async (storeId: string) => ({ ok: false as const, current: await inner.read(storeId) });
      return override(override(inner, 'reclaim', refuse), 'noteResend', refuse);
    },
  },
  {
    name: 'acquire-steals-lease',
    breaks: 3,
    description:
      'acquire without the "slot is queued" condition: a duplicate attention takes a slot another worker holds',
    dispatch: (inner: DispatchState) =>
      override(inner, 'acquire', async (storeId: string, slotId: string, opts) => {
        const slot = (await inner.read(storeId))?.slots[slotId];
        if (slot?.s === 'l') await inner.reclaim(storeId, slotId, slot.f, opts.now);
        return inner.acquire(storeId, slotId, opts);
      }),
  },
  {
    name: 'unfenced-lease-writes',
    breaks: 3,
    description:
      "requeue, release and markIdle act on whatever lease holds the slot (no fencing token): a zombie whose lease was taken over hands the new holder's lease back",
    dispatch: (inner: DispatchState) => {
      /** The fence of whoever holds the slot now, instead of the caller's own. */
      const holder = async (storeId: string, slotId: string, fence: number): Promise<number> => {
        const slot = (await inner.read(storeId))?.slots[slotId];
        return slot?.s === 'l' ? slot.f : fence;
      };
      const requeue = override(
        inner,
        'requeue',
        async (storeId: string, slotId: string, fence: number, opts) =>
          inner.requeue(storeId, slotId, await holder(storeId, slotId, fence), opts),
      );
      const release = override(
        requeue,
        'release',
        async (storeId: string, slotId: string, fence: number, tat) =>
          inner.release(storeId, slotId, await holder(storeId, slotId, fence), tat),
      );
      return override(release, 'markIdle', async (storeId: string, slotId: string, fence: number, opts) =>
        inner.markIdle(storeId, slotId, await holder(storeId, slotId, fence), opts),
      );
    },
  },
  {
    name: 'slice-ignores-bounds',
    breaks: 4,
    description:
      'the worker reads a policy with 10× maxMessagesPerSlice and a 60 s slice (ignores its bounds)',
    stores: (inner: StoreRegistry, kind) =>
      kind !== 'worker'
        ? inner
        : override(inner, 'get', async (storeId: string) => {
            const store = await inner.get(storeId);
            if (!store) return store;
            const max = store.overrides?.maxMessagesPerSlice ?? 50;
            return {
              ...store,
              overrides: { ...store.overrides, maxMessagesPerSlice: max * 10, maxSliceSeconds: 60 },
            };
          }),
  },
  {
    name: 'sticky-worker',
    breaks: 5,
    description:
      'a worker whose slice ended on its bounds takes its requeued slot again itself (never goes to the back)',
    handleAttention: async (deps, message) => {
      let outcome: AttentionOutcome = await handleAttention(deps, message);
      for (let round = 0; round < 30; round++) {
        if (outcome.kind !== 'sliced' || !['max_messages', 'max_time', 'stalled'].includes(outcome.slice.end))
          break;
        const wait = (outcome.slice.resumeAt ?? 0) - deps.clock.now();
        if (wait > 0) await deps.clock.sleep(wait);
        outcome = await handleAttention(deps, { ...message, reason: 'requeue' });
      }
      return outcome;
    },
  },
  {
    name: 'unstable-idempotency-key',
    breaks: 6,
    description: 'no dedupe record and a fresh Idempotency-Key per attempt',
    deliveries: (inner: DeliveryLog) =>
      override(
        override(inner, 'claim', (storeId: string, eventId: string, opts) =>
          inner.claim(storeId, `${eventId}#${opts.holder}`, opts),
        ),
        'settle',
        (storeId: string, eventId: string, holder: string, outcome) =>
          inner.settle(storeId, `${eventId}#${holder}`, holder, outcome),
      ),
    marketplace: (inner: Marketplace) => {
      let attempt = 0;
      return {
        deliver: (request) =>
          inner.deliver({ ...request, idempotencyKey: `${request.idempotencyKey}#${++attempt}` }),
      };
    },
  },
  {
    name: 'no-effect-once-record',
    breaks: 6,
    description:
      'the delivery claim is always granted (no effect-once record): only the marketplace deduplicates by key',
    deliveries: (inner: DeliveryLog) =>
      override(inner, 'claim', async (storeId: string, eventId: string, opts) => {
        const claim = await inner.claim(storeId, eventId, opts);
        if (claim.ok) return claim;
        return {
          ok: true as const,
          record: {
            storeId,
            eventId,
            status: 'processing' as const,
            holder: opts.holder,
            claimUntil: opts.until,
            updatedAt: opts.now,
          },
        };
      }),
  },
  {
    name: 'signal-per-task',
    breaks: 7,
    description:
      'ingest issues a slot and publishes an attention for every accepted task (no coalescing, no limit)',
    submit: async (deps, request, batch) => {
      const response = batch ? await submitBatch(deps, request) : await submitTask(deps, request);
      if (response.status !== 202) return response;
      const body = response.body as { accepted?: string[]; storeId?: string };
      const storeId = request.pathParameters['storeId'] as string;
      const count = body.accepted ? body.accepted.length : 1;
      for (let i = 0; i < count; i++)
        await signalStore(deps, storeId, {
          limit: Number.MAX_SAFE_INTEGER,
          reason: 'ingest',
          priority: 'normal',
        });
      return response;
    },
  },
  {
    name: 'ingest-issue-unconditional',
    breaks: 7,
    description:
      "ingest's end-and-issue write trusts its write-ahead's view (no slot then) and drops its size(slots) < 1 condition: ingests racing on an idle store each issue a slot and publish an attention, so a burst signals once per request instead of once",
    dispatch: (inner: DispatchState, kind) =>
      kind !== 'ingest'
        ? inner
        : override(
            inner,
            'endEnqueueIssuing',
            async (storeId: string, slotId: string, dueAt: number, now: number) => {
              await inner.endEnqueue(storeId);
              return inner.issueSlot(storeId, slotId, dueAt, Number.MAX_SAFE_INTEGER, now);
            },
          ),
  },
  {
    name: 'no-pacing',
    breaks: 9,
    description:
      "the worker paces at the highest rate a policy allows (1,000/s) instead of the store's: no real pacing",
    stores: (inner: StoreRegistry, kind) =>
      kind !== 'worker'
        ? inner
        : override(inner, 'get', async (storeId: string) => {
            const store = await inner.get(storeId);
            return store && { ...store, overrides: { ...store.overrides, ratePerSecond: 1_000 } };
          }),
  },
  {
    name: 'ignore-retry-after',
    breaks: 9,
    description: 'a 429 is taken for a 503: the task backs off alone and the store keeps calling',
    marketplace: (inner: Marketplace) => ({
      deliver: async (request) => {
        const outcome = await inner.deliver(request);
        return outcome.kind === 'throttled'
          ? { kind: 'transient' as const, status: 503, error: '429 taken for a 503' }
          : outcome;
      },
    }),
  },
  {
    name: 'no-version-check',
    breaks: 10,
    description:
      'the version mark never refuses a version, so an older version is delivered after a newer one',
    deliveries: (inner: DeliveryLog) => override(inner, 'markVersion', async () => ({ ok: true as const })),
  },
];

/**
 * Rejected only beyond the fixed set since the delivered settles were batched (one write per receive batch
 * instead of one per task moves the schedule's randomness): kept in RARE_VARIANTS with the seeds that do.
 */
const MOVED_BEYOND_FIXED: Record<string, number[]> = {
  // empty-ignores-high — session 21: a slice's re-read of its store (lambdas/core/store-watch.ts) moved 311's
  // interleaving; seeds 7 and 151 meet it: back in the fixed set (no entry here).
  //
  // Session 16: seed 543 now also sends a pause with its cap change (two operators at once: invariant 14),
  // which moved its interleaving; 1073 is the first seed after 300 that still meets the fault. Session 19: the
  // window-quota marketplaces (a stream of their own) moved 1073's; 457, the first after 300, meets it. Session 21:
  // the slice's re-read moved 457's; a search from 1 found 434 and 728. Session 22: the pacing's own bound by the
  // policy's 5 s budget (rate.ts pacedInterval) masked the variant in every seed of 1–20000; it now breaks that
  // bound too, and 434 and 728 meet it again. Session 23: the failing-task stores (a stream of their own) moved
  // 728's interleaving, and seed 56 meets it: back in the fixed set. Session 24: the empty check's racing long
  // polls and the sent-rate bound's samples moved 56's; none of 1–300 meets it, 434 still does and 662 is the next.
  // Session 27: the confirm queue (issue #11, most seeds) moved 662's; a search from 1 found 56 again and 434.
  // Session 28: the ingest's end-and-issue write moved 434's; 56 and 116 meet it: back in the fixed set.
  //
  // Session 12: the shared pacer no longer calls on a wake-up past the slice deadline, and seed 184's early
  // call was such a one; the fault is now met about once in 4,000 seeds (1239, 3868 in 301–8300). Session 13:
  // the stretched spacing over 10/s (rate.ts spacingOf) moved 1239's interleaving; 1040 meets it instead.
  // Session 17: the task-scope stores (a stream of their own) moved 3868's; 1044, the next from 1041, meets it.
  // Session 18: the setOverrides operators (a stream of their own) moved 1044's, and seed 14 meets it: back in
  // the fixed set (no entry here).
  //
  // Session 18: the setOverrides operators moved seed 94, the one seed of 1–300 that met it; eight of 1–2000 did
  // (about one in 250). Session 21: the slice's re-read moved them; seed 154 met it, back in the fixed set.
  // Session 22: the re-read after a paused store's slot is dropped (attention.ts dropForResume) moved 154's; a
  // search from 301 found 615 and 1209; the look at the instant inside the pacer moved 615's, and a search from 1
  // found 1209, 1239 and 1667. Session 24: the empty check's racing long polls moved 1209's; 615 meets it again.
  // Session 25: each block's lateness (the reach) moved 1239's; a search from 1 found 434, and from 1240 1410.
  // Session 27: the confirm queue moved 615's; a search from 1 found 434 and 561. Session 28: the ingest's
  // end-and-issue write moved both; a search from 1 found 186 and 1667: back in the fixed set.
  //
  // Session 15: needs a multi-consumer store's 429 with a Retry-After of 6 s or more and another consumer
  // reserving between its short first hold and its full one: the first seed of a search from 1. Session 19: the
  // window-quota marketplaces moved 5418's interleaving; 20730 is the first of a new search from 1. Session 21: the
  // slice's re-read of its store moved 20730's; 4902 is the first of a new search from 1. Session 23: the
  // failing-task stores moved 4902's; none of 1–12000 meets it, 17919 is the first after. Session 24: the empty
  // check's racing long polls moved 17919's; 28740 is the first of a new search from 1. Session 27: the confirm
  // queue moved 28740's; a search from 1 found 3355 and 7180. Session 28: the ingest's end-and-issue write moved
  // both; a search from 1 found 5241 and 8277; the confirm queue's stalls (a stream of their own) moved 8277's,
  // and 8944 is the next.
  'first-hold-short': [5241, 8944],
  //
  // Session 27: the confirm queue and the slices that keep their empty decision (resends, rechecks) moved the
  // fixed set's interleavings; a search from 1 found these (bump-before-send, moved out by the first version of the
  // confirm queue, is back in the fixed set: seed 19). Session 28: the ingest's end-and-issue write moved them
  // again; unfenced-lease-writes (seeds 21, 66) and no-index-backfill (239, 415) are back in the fixed set.
  //
  // Session 24: needs the rest of an empty check still running when the slice ends, and another slice marking the
  // store idle before its detached hand-back lands (the rest usually answers within the slice's own call); the
  // first two seeds of a search from 1 (4648 and 10118 until session 28's end-and-issue write moved them).
  'rest-after-lease': [764, 1061],
};

const ALL_VARIANTS: Variant[] = [
  ...BROKEN,
  ...PRIORITY_VARIANTS,
  ...ADAPTIVE_VARIANTS,
  ...RATE_BLOCK_VARIANTS,
  // ignores-campaigns is rare since hard errors, operator actions and rate blocks reordered seeds 1–300.
  ...CAMPAIGN_VARIANTS.filter((variant) => variant.name !== 'ignores-campaigns'),
  ...SETTLE_VARIANTS,
  ...BATCH_VARIANTS,
  ...EDGE_VARIANTS,
  ...RECEIVE_VARIANTS,
  ...CONFIRM_VARIANTS,
];

export const VARIANTS: Variant[] = ALL_VARIANTS.filter((variant) => !(variant.name in MOVED_BEYOND_FIXED));

/**
 * Broken variants whose fault is rarer than the fixed seed set reaches: each with the seeds (beyond it)
 * that reject it, kept as regression tests (test/sim/simulation.test.ts) next to the fixed-set catalogue.
 */
export const RARE_VARIANTS: { variant: Variant; seeds: number[] }[] = [
  ...ALL_VARIANTS.filter((variant) => variant.name in MOVED_BEYOND_FIXED).map((variant) => ({
    variant,
    seeds: MOVED_BEYOND_FIXED[variant.name] as number[],
  })),
  {
    // A campaign lowering the cap while the store holds two slots (rarer than 1–300 since the hard errors,
    // operator actions and rate blocks changed their interleavings; 623 until the stretched spacing of session 13).
    seeds: [650, 656],
    variant: CAMPAIGN_VARIANTS.find((variant) => variant.name === 'ignores-campaigns') as Variant,
  },
  {
    // Needs a versioned call that applied without its settle (a timeout that applied, a crash or a stall
    // after the 2xx) followed by an older version of the same entity (about 1 seed in 150).
    // (Seeds 435 and 514 until hard errors, operator actions and rate blocks changed their interleavings.)
    seeds: [693, 1217],
    variant: {
      name: 'version-mark-after-call',
      breaks: 10,
      description:
        'the version mark is written only once the call answers 2xx (as before issue #10): a call that timed ' +
        'out but applied, or whose worker crashed, leaves no mark, and an older version follows it',
      deliveries: (inner: DeliveryLog) => markAfterCall(inner),
    },
  },
  {
    // A zombie's hiding call landing after its Lambda-timeout-bounded window: needs a zombie stall on a
    // hiding call, a reclaim and an idle-looking queue together (about 1 seed in 2,000).
    // (Seeds 943 and 3981 until hard errors, operator actions and rate blocks changed their interleavings; 638 until
    // restarts allowed for their own write latency; 1024 until session 23's failing-task stores moved it; 628 and
    // 1082 until session 26's blocks sized for the lease's pace moved it; 784 and 11410 until session 27's confirm
    // queue moved them; 1082 and 4225 until session 28's end-and-issue write did.)
    seeds: [9927, 14259],
    variant: {
      name: 'reclaim-guards-lease-only',
      breaks: 2,
      description:
        'the reconciler guards a reclaimed store only until the dead lease and its margin, as before the zombie guard: a hiding call its holder sent before stalling past the lease lands later and hides a message past the guard, in a store another lease then marks idle',
      dispatch: (inner, kind) =>
        kind === 'reconciler'
          ? override(inner, 'deferWake', (storeId: string, until: number) =>
              inner.deferWake(storeId, until - ZOMBIE_HIDE_MS + (VISIBILITY_MARGIN_SECONDS + 1) * 1000),
            )
          : inner,
    },
  },
];

/**
 * Surplus attentions of one slot (reconciler resends, reclaims, SQS duplicates) arriving together while it is
 * queued for later: they need several to pile up on a store with a slow rate. Seed 156704 found it in 30,000 on
 * round 7's core and rejected it until session 9, whose model changes (windows down to one consumer ending
 * within the run, a lone consumer's requeue writing the shared schedule) moved its interleavings: no seed of
 * 1–60,000 rejects it since. Kept for `npm run sim -- --variant surplus-attention-kept` searches; the
 * mechanism is unit-tested (attention.test.ts, early attentions) and seed 156704 stays clean as built.
 */
export const SURPLUS_ATTENTION_KEPT: Variant = {
  name: 'surplus-attention-kept',
  breaks: 7,
  description:
    'an attention that arrives before its slot is due is always re-published, as before attentions said which due time they announce: one published for an earlier time (the slot was re-queued or reclaimed since, with its own attention) is carried on instead of dropped, and surplus attentions of a slot circulate',
  handleAttention: (deps, message) => {
    const { dueAt: _announced, ...unannounced } = message;
    return handleAttention(deps, unannounced);
  },
};

export const variantByName = (name: string): Variant | undefined =>
  [
    ...VARIANTS,
    ...RARE_VARIANTS.map((rare) => rare.variant),
    FANOUT_UNFENCED,
    SURPLUS_ATTENTION_KEPT,
    AS_BUILT,
  ].find((v) => v.name === name);
