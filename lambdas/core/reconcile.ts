import { auditStoreDeadLetters, type DeadLetterLedger } from './dead-letter-audit.js';
import { keepDeadLetters } from './dead-letter-keep.js';
import { inParallel } from './in-parallel.js';
import { backfillActiveIndex } from './index-backfill.js';
import { ACTIVE_SHARDS, MetricNames, SWEEP_CURSOR_ID } from './names.js';
import type { DeadLetterQueues, QueueAdmin, RetentionMarks, StoreRegistry, TaskQueues } from './ports.js';
import {
  needsPass,
  noteIfOverdue,
  retentionBound,
  retentionPass,
  type RetentionSettings,
} from './retention.js';
import { publishAttention, signalStore, type SignalDeps } from './signal.js';
import type { DispatchItem } from './dispatch-model.js';
import { isConsumable, policyOf, type StoreRecord } from './store-model.js';
import { workQueuesOf } from './store-queues.js';
import { CLOCK_SKEW_MS, VISIBILITY_MARGIN_SECONDS, ZOMBIE_HIDE_MS } from './timing.js';
import { guardUntilVisible } from './wake.js';

export interface ReconcilerDeps extends SignalDeps {
  stores: StoreRegistry;
  queues: QueueAdmin;
  /** The worker's dead-letter tallies: with it, the sweep audits each swept store's DLQ. */
  deadLetterLedger?: DeadLetterLedger;
  settings: {
    /** How long after its due time a queued slot's attention counts as lost (doubling per resend). */
    attentionGraceMs: number;
    /** Stores the slow full sweep checks per run (the last safety net; 0 turns it off). */
    sweepStoresPerRun: number;
    /** The retention pass (issue #10); absent, no pass runs (tests of other paths). */
    retention?: RetentionSettings;
    /**
     * The index backfill of stores activated before f267a90 (index-backfill.ts), until it has read the table
     * once; off, it never runs (tests of other paths, and the simulation's runs before its upgrade).
     */
    backfillIndex?: boolean;
  };
  /** The store work queues and the retention bound, for the retention pass. */
  tasks?: TaskQueues;
  marks?: RetentionMarks;
  /** The store DLQs: with it, the ledger and the retention settings, the sweep keeps their letters. */
  deadLetters?: DeadLetterQueues;
}

export type RepairKind = 'reclaim' | 'resend' | 'repair' | 'sweep' | 'backfill';

export interface ReconcileReport {
  checked: number;
  /** Tasks the retention pass re-sent as fresh copies this run. */
  refreshed: number;
  repairs: Record<RepairKind, number>;
  swept: number;
  /** Dead letters the sweep found in swept stores' DLQs that the worker did not write. */
  deadLettersUnaccounted: number;
  /** Dead letters the sweep re-sent into their DLQ as fresh copies this run (dead-letter keep). */
  deadLettersRefreshed: number;
}

const ACTIVE_PAGE = 100;
/**
 * A redrive mark younger than this is left alone even if no move shows as running: the admin writes the
 * mark before it starts the move, and ListMessageMoveTasks may lag the start.
 */
export const REDRIVE_GRACE_MS = 120_000;
const CONCURRENCY = 8;

/**
 * One store that is not idle: expired leases become queued slots again, queued slots whose attention
 * looks lost are re-announced (same slot id, so the duplicate is discarded cheaply), and a store left
 * with no slot at all gets one.
 */
const repairStore = async (
  deps: ReconcilerDeps,
  storeId: string,
  report: ReconcileReport,
  correlationId: string,
  budget: { batches: number },
): Promise<void> => {
  const [item, store] = await Promise.all([deps.dispatch.read(storeId), deps.stores.get(storeId)]);
  // Retention first, whatever the store's status: a paused store's backlog must outlive SQS's 14 days.
  if (item && store) await refreshIfOld(deps, store, item, report, budget);
  if (!item || !store || !isConsumable(store.status)) return;
  report.checked++;
  const now = deps.clock.now();
  // The store's level now, not the one its lost attention carried: a re-announced slot travels on the
  // queue of the store's current priority (a plan change, an override or a campaign may have moved it).
  const { priority } = policyOf(store);
  const note = (kind: RepairKind) => {
    report.repairs[kind]++;
    deps.telemetry.count(MetricNames.reconcilerRepairs, 1, { kind });
    deps.telemetry.info('reconciler repaired a store', { storeId, tenantId: store.tenantId, kind });
  };
  for (const [slotId, slot] of Object.entries(item.slots)) {
    if (slot.s === 'l' && slot.at + CLOCK_SKEW_MS < now) {
      // Its worker died or overran. Its messages reappear VISIBILITY_MARGIN after the lease: look after that.
      const dueAt = slot.at + (VISIBILITY_MARGIN_SECONDS + 1) * 1000;
      // The dead lease's messages reappear up to a clock skew later than its own clock said (race B, found by
      // the simulation) — and if its holder is a zombie (stalled past the lease, not dead), a hiding call of
      // its may still land until its Lambda timeout and hide a message for up to 15 min after that. No one
      // may mark the store idle before all of them are surely visible again: the store stays awake (looked
      // at every 20 s, then idle) instead of holding a message outside the active index. Written first, so a
      // failure here cannot leave a reclaimed slot without its guard.
      await guardUntilVisible(deps.dispatch, storeId, slot.at + ZOMBIE_HIDE_MS);
      const reclaimed = await deps.dispatch.reclaim(storeId, slotId, slot.f, dueAt);
      if (reclaimed.ok) {
        await publishAttention(deps, storeId, slotId, 'reclaim', priority, dueAt, correlationId);
        note('reclaim');
      }
    } else if (slot.s === 'q') {
      const resends = slot.r ?? 0;
      if (now > slot.at + deps.settings.attentionGraceMs * 2 ** resends) {
        const noted = await deps.dispatch.noteResend(storeId, slotId, resends, slot.at);
        if (noted.ok) {
          await publishAttention(deps, storeId, slotId, 'resend', priority, slot.at, correlationId);
          note('resend');
        }
      }
    }
  }
  if (
    item.redriveAt !== undefined &&
    now - item.redriveAt > REDRIVE_GRACE_MS &&
    !(await deps.queues.redriveRunning(store)) &&
    (await deps.dispatch.endRedrive(storeId, item.redriveAt)).ok
  ) {
    // Every moved message is in the queue now: the store may go idle once a slice finds it empty.
    deps.telemetry.info('redrive ended', { storeId, tenantId: store.tenantId, startedAt: item.redriveAt });
  }
  if (
    Object.keys(item.slots).length === 0 &&
    (await signalStore(deps, storeId, { limit: 1, reason: 'repair', priority, correlationId }))
  ) {
    note('repair');
  }
};

const refreshIfOld = async (
  deps: ReconcilerDeps,
  store: StoreRecord,
  item: DispatchItem,
  report: ReconcileReport,
  budget: { batches: number },
): Promise<void> => {
  const settings = deps.settings.retention;
  if (!settings || !deps.tasks || !deps.marks) return;
  const now = deps.clock.now();
  const bound = retentionBound(item);
  if (bound === undefined || !needsPass(item, now, settings.refreshAgeMs)) return;
  const { tasks, marks } = deps;
  let complete = false;
  if (budget.batches > 0)
    try {
      const pass = await retentionPass({ ...deps, tasks, marks, settings }, store, item, budget);
      report.refreshed += pass.refreshed;
      complete = pass.complete;
    } catch (error) {
      // The next run tries again (the bound was not raised); the store's other repairs go on.
      deps.telemetry.error('retention pass failed', { storeId: store.storeId, error: String(error) });
    }
  // A store left unrefreshed this run — the budget spent before it, or a pass that did not complete — whose
  // messages may already be 8.75 days old is the one at risk: said every run until a pass completes.
  if (!complete) noteIfOverdue(deps.telemetry, store, 'work', bound, now, settings.refreshAgeMs);
};

/**
 * Every swept store, consumable or not (a paused store's letters may have moved before its pause): its DLQ's
 * audit, then, when its letters' bound is a refresh age old, their refresh. One store's failure does not stop
 * the sweep.
 */
const auditAndKeep = async (
  deps: ReconcilerDeps,
  deadLetterLedger: DeadLetterLedger,
  store: StoreRecord,
  report: ReconcileReport,
  budget: { batches: number },
): Promise<void> => {
  const settings = deps.settings.retention;
  const audit = await auditStoreDeadLetters(
    { ...deps, deadLetterLedger, ...(settings ? { refreshAgeMs: settings.refreshAgeMs } : {}) },
    store,
  ).catch((error: unknown) => {
    deps.telemetry.error('reconciler could not audit a dead-letter queue', {
      storeId: store.storeId,
      error: String(error),
    });
    return undefined;
  });
  if (!audit) return;
  report.deadLettersUnaccounted += audit.unaccounted;
  if (!settings || !deps.deadLetters) return;
  try {
    const kept = await keepDeadLetters(
      { ...deps, deadLetters: deps.deadLetters, deadLetterLedger, settings },
      store,
      audit.oldestAt,
      budget,
    );
    report.deadLettersRefreshed += kept.refreshed;
  } catch (error) {
    // The bound was not raised: the store's next visit tries again.
    deps.telemetry.error('reconciler could not refresh a dead-letter queue', {
      storeId: store.storeId,
      error: String(error),
    });
  }
};

/** The last safety net: a few stores per run, any store with messages but no active mark is signalled. */
const sweep = async (deps: ReconcilerDeps, report: ReconcileReport, correlationId: string): Promise<void> => {
  if (deps.settings.sweepStoresPerRun <= 0) return;
  const cursor = await deps.dispatch.readCursor(SWEEP_CURSOR_ID);
  const page = await deps.stores.scan(cursor, deps.settings.sweepStoresPerRun);
  // The DLQ refreshes' own budget: the retention pass of the active stores may have spent the run's.
  const keepBudget = { batches: deps.settings.retention?.batchesPerRun ?? 0 };
  await inParallel(page.stores, CONCURRENCY, async (store) => {
    report.swept++;
    if (deps.deadLetterLedger) await auditAndKeep(deps, deps.deadLetterLedger, store, report, keepBudget);
    if (!isConsumable(store.status)) return;
    // One count per work queue until one holds work: a store with a high queue costs the sweep up to two
    // requests, not one.
    let pending = 0;
    for (const url of workQueuesOf(store)) {
      pending = await deps.queues.pending(url);
      if (pending > 0) break;
    }
    if (pending === 0) return;
    const item = await deps.dispatch.read(store.storeId);
    // Tracked by the active index only with both of its keys: a store activated before `headSentAt` became
    // the index's sort key has `activeShard` alone and is in no index; markActive adds the missing key.
    if (item?.activeShard !== undefined && item.headSentAt !== undefined) return;
    await deps.dispatch.markActive(store.storeId, deps.clock.now());
    // Its messages may be of any age: the next run's retention pass refreshes them.
    await deps.marks?.lowerRefreshed(store.storeId);
    const { priority } = policyOf(store);
    if (await signalStore(deps, store.storeId, { limit: 1, reason: 'sweep', priority, correlationId })) {
      report.repairs.sweep++;
      deps.telemetry.count(MetricNames.reconcilerRepairs, 1, { kind: 'sweep' });
      deps.telemetry.warn('sweep found an untracked backlog', {
        storeId: store.storeId,
        tenantId: store.tenantId,
        pending,
      });
    }
  });
  await deps.dispatch.writeCursor(SWEEP_CURSOR_ID, page.cursor);
};

/**
 * One reconciler run: every store in the active index (work ∝ stores not idle), then a sweep step. The
 * run's id is the correlation id of its log lines and of the attentions it publishes.
 */
export const reconcile = async (deps: ReconcilerDeps): Promise<ReconcileReport> => {
  // One run per schedule tick (reserved concurrency 1): its start time names it, readable in the logs.
  const correlationId = `reconcile-${new Date(deps.clock.now()).toISOString()}`;
  const telemetry = deps.telemetry.scoped({ correlationId });
  try {
    return await reconcileRun({ ...deps, telemetry }, correlationId);
  } finally {
    telemetry.end();
  }
};

const reconcileRun = async (deps: ReconcilerDeps, correlationId: string): Promise<ReconcileReport> => {
  const report: ReconcileReport = {
    checked: 0,
    refreshed: 0,
    repairs: { reclaim: 0, resend: 0, repair: 0, sweep: 0, backfill: 0 },
    swept: 0,
    deadLettersUnaccounted: 0,
    deadLettersRefreshed: 0,
  };
  const budget = { batches: deps.settings.retention?.batchesPerRun ?? 0 };
  // The stores the backfill puts into the index are repaired here, in this run: the index (a GSI) is updated
  // asynchronously, so the listing below may not show them yet (and skips them if it does).
  const backfilled: string[] = [];
  if (deps.settings.backfillIndex)
    await backfillActiveIndex(deps, backfilled).catch((error: unknown) =>
      // Its place is kept; the next run goes on from there. The stores it indexed before failing are repaired.
      deps.telemetry.error('index backfill failed', { error: String(error) }),
    );
  report.repairs.backfill = backfilled.length;
  const repair = (storeId: string) =>
    // One store's failure must not stop the run for the others.
    repairStore(deps, storeId, report, correlationId, budget).catch((error: unknown) =>
      deps.telemetry.error('reconciler could not check a store', { storeId, error: String(error) }),
    );
  // Awaited only when there is one: the simulation's loop runs an actor on only at its scheduled calls, and a run
  // that awaited anything else before its first call would wait there while the world sits idle.
  if (backfilled.length > 0) await inParallel(backfilled, CONCURRENCY, repair);
  const repaired = new Set(backfilled);
  for (let shard = 0; shard < ACTIVE_SHARDS; shard++) {
    let cursor: string | undefined;
    do {
      const page = await deps.dispatch.listActive(String(shard), cursor, ACTIVE_PAGE);
      await inParallel(
        page.storeIds.filter((storeId) => !repaired.has(storeId)),
        CONCURRENCY,
        repair,
      );
      cursor = page.cursor;
    } while (cursor);
  }
  await sweep(deps, report, correlationId);
  deps.telemetry.count(MetricNames.reconcilerStoresChecked, report.checked);
  // Every run, zero included: the alarm on it sees data, and a missing series means the reconciler is not running.
  deps.telemetry.count(MetricNames.deadLettersUnaccounted, report.deadLettersUnaccounted);
  return report;
};
