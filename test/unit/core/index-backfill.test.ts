import { beforeEach, describe, expect, it } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import {
  BACKFILL_DONE,
  BACKFILL_PAGE,
  BACKFILL_RUN_MS,
  backfillActiveIndex,
  ROLLOUT_MS,
  type BackfillDeps,
} from '../../../lambdas/core/index-backfill.js';
import { INDEX_BACKFILL_CURSOR_ID, MetricNames } from '../../../lambdas/core/names.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

const T0 = 1_800_000_000_000;
const MIN = 60_000;

describe('backfillActiveIndex (stores activated before f267a90, issue #10)', () => {
  let dispatch: MemoryDispatchState;
  let telemetry: RecordingTelemetry;
  let records: LogRecord[];
  let now: number;
  let deps: BackfillDeps;

  beforeEach(() => {
    dispatch = new MemoryDispatchState();
    records = [];
    telemetry = new RecordingTelemetry((record) => void records.push(record), 'info');
    now = T0;
    deps = { dispatch, telemetry, clock: { now: () => now, sleep: async () => undefined } };
  });

  /** Marks `id` active as the code before f267a90 did: activeShard and activeSince, no headSentAt. */
  const legacy = async (id: string, since = T0 - 3 * MIN) => {
    await dispatch.recordEnqueued(id, 1, since);
    delete dispatch.items.get(id)?.headSentAt;
  };
  /** `count` stores s000…, legacy where `isLegacy` says so, idle otherwise. */
  const stores = async (count: number, isLegacy: (i: number) => boolean) => {
    for (let i = 0; i < count; i++) {
      const id = `s${String(i).padStart(3, '0')}`;
      await dispatch.ensure(id);
      if (isLegacy(i)) await legacy(id);
    }
  };
  const unindexed = () =>
    [...dispatch.items.values()]
      .filter((i) => i.activeShard && i.headSentAt === undefined)
      .map((i) => i.storeId);
  const state = async () => {
    const raw = await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID);
    return raw === BACKFILL_DONE || raw === undefined ? raw : (JSON.parse(raw) as Record<string, unknown>);
  };

  it('reads page after page until its time is up, keeps its place, and goes on from it next run', async () => {
    await stores(10, (i) => i % 3 === 0); // s000, s003, s006, s009
    const list = dispatch.listUnindexed.bind(dispatch);
    dispatch.listUnindexed = async (cursor, limit) => {
      now += 5_000; // each page takes 5 s: the third one ends past the run's 12 s
      return list(cursor, limit);
    };
    const limits = { page: 2, runMs: 12_000 };
    const first = await backfillActiveIndex(deps, [], limits);
    const afterFirst = await state();
    const second = await backfillActiveIndex(deps, [], limits);
    expect({ first, afterFirst, second, left: unindexed() }).toEqual({
      first: ['s000', 's003'],
      afterFirst: { since: T0, pass: T0, cursor: 's005' },
      second: ['s006', 's009'],
      left: [],
    });
  });

  it('reads the table again until a pass that began ROLLOUT_MS after its first run completes, then once a run', async () => {
    await stores(3, (i) => i === 0);
    const runAt = async (at: number) => {
      now = at;
      return { indexed: await backfillActiveIndex(deps), state: await state() };
    };
    const first = await runAt(T0);
    // An invocation of the older code, begun before the update, marks a store active after the first pass.
    await legacy('s001', T0 + 9 * MIN);
    const during = await runAt(T0 + 10 * MIN);
    const beforeTheEnd = await runAt(T0 + 16 * MIN);
    const last = await runAt(T0 + 17 * MIN);
    let reads = 0;
    const list = dispatch.listUnindexed.bind(dispatch);
    dispatch.listUnindexed = async (cursor, limit) => {
      reads++;
      return list(cursor, limit);
    };
    await legacy('s002');
    const after = await runAt(T0 + 18 * MIN);
    expect({ first, during, beforeTheEnd, last, after, reads }).toEqual({
      first: { indexed: ['s000'], state: { since: T0, pass: T0 } },
      during: { indexed: ['s001'], state: { since: T0, pass: T0 + 10 * MIN } },
      beforeTheEnd: { indexed: [], state: { since: T0, pass: T0 + 16 * MIN } },
      last: { indexed: [], state: BACKFILL_DONE },
      after: { indexed: [], state: BACKFILL_DONE },
      reads: 0,
    });
    expect(records.filter((r) => r.message === 'index backfill done').map((r) => r.fields)).toEqual([
      { indexedThisRun: 0 },
    ]);
  });

  it('marks itself done only at the end of a pass that began ROLLOUT_MS after the first run, not in its middle', async () => {
    await stores(5, () => false);
    await dispatch.writeCursor(
      INDEX_BACKFILL_CURSOR_ID,
      JSON.stringify({ since: T0, pass: T0 + ROLLOUT_MS }),
    );
    now = T0 + ROLLOUT_MS + MIN;
    await backfillActiveIndex(deps, [], { page: 2, runMs: 0 });
    const midPass = await state();
    await backfillActiveIndex(deps, [], { page: 10, runMs: BACKFILL_RUN_MS });
    expect({ midPass, end: await state() }).toEqual({
      midPass: { since: T0, pass: T0 + ROLLOUT_MS, cursor: 's001' },
      end: BACKFILL_DONE,
    });
  });

  it('keeps reading while its run has time left, up to the last millisecond', async () => {
    await stores(6, () => false);
    const list = dispatch.listUnindexed.bind(dispatch);
    dispatch.listUnindexed = async (cursor, limit) => {
      now += 1_000;
      return list(cursor, limit);
    };
    // Pages end at 1 s and 2 s: a 2,001 ms run reads a third, a 2,000 ms one stops after the second.
    await backfillActiveIndex(deps, [], { page: 2, runMs: 2_000 });
    const after2000 = await state();
    await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, undefined);
    now = T0;
    await backfillActiveIndex(deps, [], { page: 2, runMs: 2_001 });
    expect({ after2000, after2001: await state() }).toEqual({
      after2000: { since: T0, pass: T0, cursor: 's003' },
      after2001: { since: T0, pass: T0 + 3_000 },
    });
  });

  it('gives each store its activation time as the index key (its oldest task’s bound), counts and logs it', async () => {
    await legacy('a', T0 - 40 * MIN);
    await legacy('b', T0 - 5 * MIN);
    const indexed = await backfillActiveIndex(deps);
    expect({
      indexed: indexed.sort(),
      heads: ['a', 'b'].map((id) => dispatch.items.get(id)?.headSentAt),
      repairs: telemetry.total(MetricNames.reconcilerRepairs, { kind: 'backfill' }),
      warned: records
        .filter((r) => r.message === 'backfill put a store marked active into the active index')
        .map((r) => r.fields?.['storeId'])
        .sort(),
    }).toEqual({
      indexed: ['a', 'b'],
      heads: [T0 - 40 * MIN, T0 - 5 * MIN],
      repairs: 2,
      warned: ['a', 'b'],
    });
  });

  it('hands back the stores it indexed before a later page failed, and keeps its place', async () => {
    await stores(6, () => true);
    const list = dispatch.listUnindexed.bind(dispatch);
    let calls = 0;
    dispatch.listUnindexed = async (cursor, limit) => {
      if (++calls === 2) throw new Error('throttled');
      return list(cursor, limit);
    };
    const indexed: string[] = [];
    await expect(backfillActiveIndex(deps, indexed, { page: 2, runMs: BACKFILL_RUN_MS })).rejects.toThrow(
      'throttled',
    );
    expect({ indexed, state: await state(), left: unindexed().length }).toEqual({
      indexed: ['s000', 's001'],
      state: { since: T0, pass: T0, cursor: 's001' },
      left: 4,
    });
  });

  it('reads pages of 1,000 items, for at most 20 s a run, and waits out 15 min of rollout plus the clock skew', () => {
    expect({ page: BACKFILL_PAGE, runMs: BACKFILL_RUN_MS, rollout: ROLLOUT_MS }).toEqual({
      page: 1_000,
      runMs: 20_000,
      rollout: 15 * MIN + 2_000,
    });
  });
});
