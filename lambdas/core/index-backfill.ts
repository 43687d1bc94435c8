import { inParallel } from './in-parallel.js';
import { INDEX_BACKFILL_CURSOR_ID, MetricNames } from './names.js';
import type { Clock, DispatchState, Telemetry } from './ports.js';
import { CLOCK_SKEW_MS } from './timing.js';

/** Items one Scan page reads (the filter then keeps the unindexed ones). */
export const BACKFILL_PAGE = 1_000;
/** How long one run may read before it keeps its place for the next: the run's repairs must not wait long. */
export const BACKFILL_RUN_MS = 20_000;
/**
 * How long code from before the upgrade may still write after the new reconciler's first run: an ingest or
 * worker invocation of the older version that began before the update, up to the longest Lambda timeout
 * (15 min), plus clock skew. The backfill reads the table again until a pass that began after it completes.
 */
export const ROLLOUT_MS = 15 * 60_000 + CLOCK_SKEW_MS;
/** The state once that pass has completed: every later run costs one read. */
export const BACKFILL_DONE = 'done';
const INDEX_WRITES_AT_ONCE = 8;

/** Kept under INDEX_BACKFILL_CURSOR_ID: the first run's time, the current pass's start, its Scan cursor. */
interface BackfillState {
  since: number;
  pass: number;
  cursor?: string;
}

export interface BackfillDeps {
  dispatch: DispatchState;
  clock: Clock;
  telemetry: Telemetry;
}

/**
 * The upgrade path from before f267a90 (issue #10): that change made `headSentAt` the sort key of the
 * sparse `active` index, and an item the older code marked active has `activeShard` alone, so it is in no
 * index and the reconciler's repairs never see it. Each run, before the index is listed, the reconciler reads
 * the next pages of the dispatch table (strongly consistent) and gives each such item the key, and pushes its
 * id to `indexed`, so the run repairs it at once (the index itself is updated asynchronously). Passes repeat
 * until one that began `ROLLOUT_MS` after the first run has completed: the older code's last invocations may
 * write such items meanwhile. The place is kept after every page, so a failed or timed-out run goes on there.
 * Invariant it could break: 8 (idle costs nothing) if it woke an idle store — the write is conditional on the
 * item still being marked active without the key.
 */
export const backfillActiveIndex = async (
  deps: BackfillDeps,
  indexed: string[] = [],
  limits = { page: BACKFILL_PAGE, runMs: BACKFILL_RUN_MS },
): Promise<string[]> => {
  const { dispatch, telemetry, clock } = deps;
  const startedAt = clock.now();
  const raw = await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID);
  if (raw === BACKFILL_DONE) return indexed;
  let state: BackfillState = raw ? (JSON.parse(raw) as BackfillState) : { since: startedAt, pass: startedAt };
  for (;;) {
    const page = await dispatch.listUnindexed(state.cursor, limits.page);
    await inParallel(page.storeIds, INDEX_WRITES_AT_ONCE, async (storeId) => {
      if (!(await dispatch.indexActive(storeId, clock.now())).ok) return;
      indexed.push(storeId);
      telemetry.count(MetricNames.reconcilerRepairs, 1, { kind: 'backfill' });
      telemetry.warn('backfill put a store marked active into the active index', { storeId });
    });
    if (page.cursor === undefined && state.pass >= state.since + ROLLOUT_MS) {
      await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, BACKFILL_DONE);
      telemetry.info('index backfill done', { indexedThisRun: indexed.length });
      return indexed;
    }
    // A completed pass that began too early: the next run starts another from the top.
    state =
      page.cursor === undefined
        ? { since: state.since, pass: clock.now() }
        : { ...state, cursor: page.cursor };
    await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, JSON.stringify(state));
    if (page.cursor === undefined || clock.now() - startedAt >= limits.runMs) return indexed;
  }
};
