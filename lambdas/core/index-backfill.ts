import { INDEX_BACKFILL_CURSOR_ID, MetricNames } from './names.js';
import type { Clock, DispatchState, Telemetry } from './ports.js';

/** Items one Scan page reads (the filter then keeps the unindexed ones). */
export const BACKFILL_PAGE = 1_000;
/** Pages one reconciler run reads: 50,000 dispatch items, about 25 MB, a few seconds. */
export const BACKFILL_PAGES_PER_RUN = 50;
/** The cursor once the backfill has read the whole table: every later run costs one read. */
export const BACKFILL_DONE = 'done';

export interface BackfillDeps {
  dispatch: DispatchState;
  clock: Clock;
  telemetry: Telemetry;
}

/**
 * The upgrade path from before f267a90 (issue #10): that change made `headSentAt` the sort key of the
 * sparse `active` index, and an item the older code marked active has `activeShard` alone, so it is in no
 * index and the reconciler's repairs never see it. Each run, until it has read the whole dispatch table
 * once, the reconciler reads the next pages and gives each such item the key, before it lists the index: the
 * same run repairs the store. Progress is kept after every page, so a failed run starts where it stopped.
 * Invariant it could break: 8 (idle costs nothing) if it woke an idle store — the write is conditional on
 * the item still being marked active without the key. Answers how many stores it put into the index.
 */
export const backfillActiveIndex = async (
  deps: BackfillDeps,
  limits = { page: BACKFILL_PAGE, pagesPerRun: BACKFILL_PAGES_PER_RUN },
): Promise<number> => {
  const { dispatch, telemetry } = deps;
  const start = await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID);
  if (start === BACKFILL_DONE) return 0;
  let cursor = start;
  let indexed = 0;
  for (let pages = 0; pages < limits.pagesPerRun; pages++) {
    const page = await dispatch.listUnindexed(cursor, limits.page);
    for (const storeId of page.storeIds) {
      if (!(await dispatch.indexActive(storeId, deps.clock.now())).ok) continue;
      indexed++;
      telemetry.count(MetricNames.reconcilerRepairs, 1, { kind: 'backfill' });
      telemetry.warn('backfill put a store marked active into the active index', { storeId });
    }
    cursor = page.cursor;
    await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, cursor ?? BACKFILL_DONE);
    if (cursor === undefined) {
      telemetry.info('index backfill done', { indexedThisRun: indexed });
      break;
    }
  }
  return indexed;
};
