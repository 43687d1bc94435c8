import { beforeEach, describe, expect, it } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import {
  BACKFILL_DONE,
  BACKFILL_PAGE,
  BACKFILL_PAGES_PER_RUN,
  backfillActiveIndex,
  type BackfillDeps,
} from '../../../lambdas/core/index-backfill.js';
import { INDEX_BACKFILL_CURSOR_ID, MetricNames } from '../../../lambdas/core/names.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

const T0 = 1_800_000_000_000;

describe('backfillActiveIndex (stores activated before f267a90, issue #10)', () => {
  let dispatch: MemoryDispatchState;
  let telemetry: RecordingTelemetry;
  let records: LogRecord[];
  let deps: BackfillDeps;

  beforeEach(() => {
    dispatch = new MemoryDispatchState();
    records = [];
    telemetry = new RecordingTelemetry((record) => void records.push(record), 'info');
    deps = { dispatch, telemetry, clock: { now: () => T0, sleep: async () => undefined } };
  });

  /** `count` stores s000…, active as the code before f267a90 left them when `legacy` says so, idle otherwise. */
  const stores = async (count: number, legacy: (i: number) => boolean) => {
    for (let i = 0; i < count; i++) {
      const id = `s${String(i).padStart(3, '0')}`;
      await dispatch.ensure(id);
      if (!legacy(i)) continue;
      await dispatch.recordEnqueued(id, 1, T0 - 1_000);
      delete dispatch.items.get(id)?.headSentAt;
    }
  };
  const unindexed = () =>
    [...dispatch.items.values()].filter((i) => i.activeShard && i.headSentAt === undefined);

  it('reads the table a page at a time, up to its pages per run, and goes on from its cursor next run', async () => {
    await stores(10, (i) => i % 3 === 0); // s000, s003, s006, s009
    const limits = { page: 2, pagesPerRun: 2 };
    const first = await backfillActiveIndex(deps, limits);
    const afterFirst = await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID);
    const second = await backfillActiveIndex(deps, limits);
    const third = await backfillActiveIndex(deps, limits);
    expect({
      runs: [first, second, third],
      afterFirst,
      cursor: await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID),
      left: unindexed(),
      head: dispatch.items.get('s003')?.headSentAt,
    }).toEqual({ runs: [2, 1, 1], afterFirst: 's003', cursor: BACKFILL_DONE, left: [], head: T0 });
  });

  it('once done, costs one read a run and touches nothing', async () => {
    await stores(3, () => true);
    await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, BACKFILL_DONE);
    let listed = 0;
    const list = dispatch.listUnindexed.bind(dispatch);
    dispatch.listUnindexed = async (cursor, limit) => {
      listed++;
      return list(cursor, limit);
    };
    expect({ indexed: await backfillActiveIndex(deps), listed, left: unindexed().length }).toEqual({
      indexed: 0,
      listed: 0,
      left: 3,
    });
  });

  it('counts and logs each store it indexes, and says when it is done', async () => {
    await stores(3, (i) => i !== 1);
    await backfillActiveIndex(deps);
    expect({
      repairs: telemetry.counters.get(`${MetricNames.reconcilerRepairs}{kind=backfill}`),
      warned: records.filter((r) => r.level === 'warn').map((r) => r.fields?.['storeId']),
      done: records.filter((r) => r.message === 'index backfill done').map((r) => r.fields),
    }).toEqual({ repairs: 2, warned: ['s000', 's002'], done: [{ indexedThisRun: 2 }] });
  });

  it('keeps the pages it finished when a later one fails', async () => {
    await stores(6, () => true);
    const list = dispatch.listUnindexed.bind(dispatch);
    let calls = 0;
    dispatch.listUnindexed = async (cursor, limit) => {
      if (++calls === 2) throw new Error('throttled');
      return list(cursor, limit);
    };
    await expect(backfillActiveIndex(deps, { page: 2, pagesPerRun: 5 })).rejects.toThrow('throttled');
    expect({ cursor: await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID), left: unindexed().length }).toEqual(
      {
        cursor: 's001',
        left: 4,
      },
    );
  });

  it('reads 50,000 items a run in pages of 1,000 by default', () => {
    expect({ page: BACKFILL_PAGE, pages: BACKFILL_PAGES_PER_RUN }).toEqual({ page: 1_000, pages: 50 });
  });
});
