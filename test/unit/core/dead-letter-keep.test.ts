import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { auditDeadLetters, oldestAfterAudit } from '../../../lambdas/core/dead-letter-audit.js';
import {
  keepDeadLetters,
  KEEP_VISIBILITY_SECONDS,
  needsKeep,
  type KeepDeps,
} from '../../../lambdas/core/dead-letter-keep.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { DeadLetterQueues } from '../../../lambdas/core/ports.js';
import { reconcile, type ReconcilerDeps } from '../../../lambdas/core/reconcile.js';
import { MemoryDeadLetterLedger } from '../../support/memory-dead-letter-ledger.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { storeRecord } from '../support/fixtures.js';

/** Dead-letter keep (issue #10): the DLQ's oldest-letter bound, and the refresh it drives. */
const T0 = 1_800_000_000_000;
const DAY = 24 * 3600 * 1000;
const AGE = 7 * DAY;
const SETTINGS = { refreshAgeMs: AGE, copyDelaySeconds: 900, batchesPerRun: 100 };

describe('the bound after an audit (oldestAfterAudit)', () => {
  const CREATED = T0 - 30 * DAY;
  it.each<[string, number | undefined, number, number, number | undefined]>([
    ['an empty DLQ with no bound: the audit’s time', undefined, 0, 0, T0],
    ['an empty DLQ whose bound is older than half the refresh age: raised', T0 - AGE / 2 - 1, 0, 0, T0],
    ['an empty DLQ with a recent bound: kept (no write per visit)', T0 - AGE / 2, 0, 0, undefined],
    [
      'letters and no bound (before this mechanism or the first audit): the store’s creation',
      undefined,
      3,
      0,
      CREATED,
    ],
    ['letters SQS moved (original SentTimestamp): the store’s creation', T0 - DAY, 3, 1, CREATED],
    ['letters SQS moved under a bound already that low: no write', CREATED, 3, 1, undefined],
    ['letters the worker wrote under a bound: kept', T0 - DAY, 3, 0, undefined],
  ])('%s', (_case, oldestAt, depth, unaccounted, expected) => {
    expect(oldestAfterAudit(oldestAt, depth, unaccounted, T0, AGE, CREATED)).toBe(expected);
  });

  it('waits, like the count, while the worker’s last letter may not show in the depth yet', () => {
    expect(
      auditDeadLetters({ written: 1, writtenAt: T0 - 1_000, oldestAt: 0 }, 0, T0, {
        refreshAgeMs: AGE,
        createdAt: 0,
      }),
    ).toEqual({
      unaccounted: 0,
    });
  });

  it('keeps no bound without a refresh age (the keep is off)', () => {
    expect(auditDeadLetters(undefined, 3, T0).oldestAt).toBeUndefined();
  });
});

describe('needsKeep', () => {
  it.each<[string, number | undefined, boolean]>([
    ['no bound (an empty DLQ)', undefined, false],
    ['the epoch (the oldest bound)', 0, true],
    ['a bound a refresh age old', T0 - AGE, true],
    ['a bound a millisecond younger', T0 - AGE + 1, false],
  ])('%s: %s', (_case, oldestAt, expected) => {
    expect(needsKeep(oldestAt, T0, AGE)).toBe(expected);
  });
});

/** A DLQ stand-in: each call takes up to 10 letters; `refuse` copies fail (their originals stay). */
const dlqOf = (sentAt: number[], opts: { refuse?: number; fail?: boolean } = {}) => {
  const letters = [...sentAt];
  const calls: { waitSeconds: number; visibilitySeconds: number; delaySeconds: number }[] = [];
  const port: DeadLetterQueues = {
    refreshDeadLetters: vi.fn(async (_url, o) => {
      calls.push({
        waitSeconds: o.waitSeconds,
        visibilitySeconds: o.visibilitySeconds,
        delaySeconds: o.delaySeconds,
      });
      if (opts.fail) throw new Error('SendMessageBatch denied');
      const batch = letters.splice(0, o.maxMessages);
      const refused = Math.min(opts.refuse ?? 0, batch.length);
      return { received: batch.length, sentAt: batch.slice(refused) };
    }),
  };
  return { port, calls, letters };
};

const keepDeps = (
  deadLetters: DeadLetterQueues,
  opts: { redriving?: boolean } = {},
): KeepDeps & { ledger: MemoryDeadLetterLedger; telemetry: RecordingTelemetry } => {
  const ledger = new MemoryDeadLetterLedger();
  const telemetry = new RecordingTelemetry();
  return {
    deadLetters,
    queues: { redriveRunning: async () => opts.redriving ?? false },
    deadLetterLedger: ledger,
    ledger,
    clock: { now: () => T0, sleep: async () => undefined },
    telemetry,
    settings: SETTINGS,
  };
};

describe('keepDeadLetters', () => {
  const store = storeRecord({ storeId: 's1' });

  it('leaves a DLQ whose bound is younger than the refresh age alone', async () => {
    const dlq = dlqOf([T0 - 8 * DAY]);
    const deps = keepDeps(dlq.port);
    expect(await keepDeadLetters(deps, store, T0 - DAY, { batches: 10 })).toEqual({
      refreshed: 0,
      complete: false,
    });
    expect(dlq.calls).toEqual([]);
  });

  it('leaves a DLQ with no bound alone (the audit saw it empty)', async () => {
    const dlq = dlqOf([T0 - 8 * DAY]);
    await keepDeadLetters(keepDeps(dlq.port), store, undefined, { batches: 10 });
    expect(dlq.calls).toEqual([]);
  });

  it('refreshes every letter of an unknown-bound DLQ, then raises the bound to its start less half the age', async () => {
    const dlq = dlqOf([...Array.from({ length: 12 }, () => T0 - 8 * DAY), T0 - DAY]);
    const deps = keepDeps(dlq.port);
    const result = await keepDeadLetters(deps, store, 0, { batches: 10 });
    expect({
      result,
      left: dlq.letters.length,
      bound: deps.ledger.tallies.get('s1')?.oldestAt,
      old: deps.telemetry.total(MetricNames.deadLettersRefreshed, { age: 'old' }),
      recent: deps.telemetry.total(MetricNames.deadLettersRefreshed, { age: 'recent' }),
    }).toEqual({
      result: { refreshed: 13, complete: true },
      left: 0,
      bound: T0 - AGE / 2,
      old: 12,
      recent: 1,
    });
  });

  it('hides each batch for its visibility, delays the copies, and ends on a long poll', async () => {
    const dlq = dlqOf([T0 - 8 * DAY]);
    await keepDeadLetters(keepDeps(dlq.port), store, 0, { batches: 10 });
    expect(dlq.calls).toEqual([
      { waitSeconds: 0, visibilitySeconds: KEEP_VISIBILITY_SECONDS, delaySeconds: 900 },
      { waitSeconds: 0, visibilitySeconds: KEEP_VISIBILITY_SECONDS, delaySeconds: 900 },
      { waitSeconds: 1, visibilitySeconds: KEEP_VISIBILITY_SECONDS, delaySeconds: 900 },
    ]);
  });

  it('does not touch a DLQ a redrive is moving, and keeps the bound', async () => {
    const dlq = dlqOf([T0 - 8 * DAY]);
    const deps = keepDeps(dlq.port, { redriving: true });
    const result = await keepDeadLetters(deps, store, 0, { batches: 10 });
    expect({ result, calls: dlq.calls.length, tally: deps.ledger.tallies.get('s1') }).toEqual({
      result: { refreshed: 0, complete: false, redriving: true },
      calls: 0,
      tally: undefined,
    });
  });

  it('stops at the run’s budget, shared with the next store, without raising the bound', async () => {
    const dlq = dlqOf(Array.from({ length: 25 }, () => T0 - 8 * DAY));
    const deps = keepDeps(dlq.port);
    const budget = { batches: 2 };
    const result = await keepDeadLetters(deps, store, 0, budget);
    expect({
      result,
      budget: budget.batches,
      left: dlq.letters.length,
      tally: deps.ledger.tallies.get('s1'),
    }).toEqual({
      result: { refreshed: 20, complete: false },
      budget: 0,
      left: 5,
      tally: undefined,
    });
  });

  it.each<[string, number, number, number, number]>([
    ['a bound 1.25 refresh ages old (8.75 days), with no budget left', T0 - 8.75 * DAY, 0, 1, 1],
    ['a bound 8.75 days old, the refresh incomplete (one batch for 15 letters)', T0 - 8.75 * DAY, 1, 15, 1],
    ['a bound 8.75 days old, the refresh complete', T0 - 8.75 * DAY, 10, 15, 0],
    ['a bound a millisecond younger, the refresh incomplete', T0 - 8.75 * DAY + 1, 1, 15, 0],
  ])(
    'counts an overdue DLQ the visit left unrefreshed (RetentionOverdue{queue=dead-letter}): %s',
    async (_c, oldestAt, batches, letters, counted) => {
      const logs: LogRecord[] = [];
      const dlq = dlqOf(Array.from({ length: letters }, () => T0 - 8 * DAY));
      const deps = {
        ...keepDeps(dlq.port),
        telemetry: new RecordingTelemetry((r) => void logs.push(r)),
      };
      await keepDeadLetters(deps, store, oldestAt, { batches });
      expect({
        counted: deps.telemetry.total(MetricNames.retentionOverdue, { queue: 'dead-letter' }),
        logged: logs
          .filter((l) => l.message.startsWith('retention overdue'))
          .map((l) => [l.fields?.['storeId'], l.fields?.['tenantId'], l.fields?.['boundAgeHours']]),
      }).toEqual({
        counted,
        logged: counted ? [['s1', store.tenantId, 210]] : [],
      });
    },
  );

  it('asks SQS nothing, not even about a redrive, once the run’s budget is spent', async () => {
    const dlq = dlqOf([T0 - 8 * DAY]);
    const redriveRunning = vi.fn(async () => false);
    const deps = { ...keepDeps(dlq.port), queues: { redriveRunning } };
    expect(await keepDeadLetters(deps, store, 0, { batches: 0 })).toEqual({ refreshed: 0, complete: false });
    expect([redriveRunning.mock.calls.length, dlq.calls.length]).toEqual([0, 0]);
  });

  it('logs each refresh with its store, tenant, count and whether it completed', async () => {
    const logs: LogRecord[] = [];
    const dlq = dlqOf([T0 - 8 * DAY, T0 - 8 * DAY]);
    const deps = {
      ...keepDeps(dlq.port),
      telemetry: new RecordingTelemetry((r) => void logs.push(r), 'info'),
    };
    await keepDeadLetters(deps, store, 0, { batches: 10 });
    expect(logs.find((l) => l.message === 'dead letters refreshed')?.fields).toMatchObject({
      storeId: 's1',
      tenantId: store.tenantId,
      refreshed: 2,
      complete: true,
    });
  });

  it('does not raise the bound when a copy was refused (its original reappears later)', async () => {
    const dlq = dlqOf([T0 - 8 * DAY, T0 - 8 * DAY], { refuse: 1 });
    const deps = keepDeps(dlq.port);
    const result = await keepDeadLetters(deps, store, 0, { batches: 10 });
    expect({ result, tally: deps.ledger.tallies.get('s1') }).toEqual({
      result: { refreshed: 1, complete: false },
      tally: undefined,
    });
  });
});

describe('the sweep keeps dead letters', () => {
  const setup = (opts: {
    depth: number;
    letters: number[];
    fail?: boolean;
    stores?: string[];
    createdAt?: number;
  }) => {
    const ids = opts.stores ?? ['s1'];
    const stores = ids.map((storeId) =>
      storeRecord({
        storeId,
        status: 'paused',
        ...(opts.createdAt === undefined ? {} : { createdAt: opts.createdAt }),
      }),
    );
    const ledger = new MemoryDeadLetterLedger();
    const dlq = dlqOf(opts.letters, { fail: opts.fail ?? false });
    const records: LogRecord[] = [];
    const telemetry = new RecordingTelemetry((record) => void records.push(record), 'info');
    const dispatch = new MemoryDispatchState();
    const deps: ReconcilerDeps = {
      dispatch,
      marks: dispatch,
      stores: {
        get: async (id) => stores.find((s) => s.storeId === id),
        create: vi.fn(),
        replace: vi.fn(),
        scan: async () => ({ stores }),
      },
      queues: {
        createStoreQueues: vi.fn(),
        counts: vi.fn(),
        redrive: vi.fn(),
        redriveRunning: async () => false,
        purge: vi.fn(),
        pending: async (url) => (url.includes('dlq') || url.includes('-d-') ? opts.depth : 0),
      },
      deadLetterLedger: ledger,
      deadLetters: dlq.port,
      attention: { publish: async () => undefined },
      clock: { now: () => T0, sleep: async () => undefined },
      ids: { next: () => 'slot' },
      telemetry,
      settings: { attentionGraceMs: 20_000, sweepStoresPerRun: 10, retention: SETTINGS },
    };
    return { deps, ledger, dlq, records };
  };
  /** One reconciler run over the setup: what it refreshed, the DLQ calls it made, and s1's bound after. */
  const sweep = async ({ deps, ledger, dlq }: ReturnType<typeof setup>) => {
    const report = await reconcile(deps);
    return {
      refreshed: report.deadLettersRefreshed,
      calls: dlq.calls.length,
      bound: ledger.tallies.get('s1')?.oldestAt,
    };
  };

  it('refreshes the DLQ of a paused store whose letters predate the bound, in the audit’s visit', async () => {
    const { deps, ledger, dlq } = setup({ depth: 2, letters: [T0 - 8 * DAY, T0 - 9 * DAY] });
    const report = await reconcile(deps);
    expect({
      refreshed: report.deadLettersRefreshed,
      left: dlq.letters.length,
      bound: ledger.tallies.get('s1')?.oldestAt,
    }).toEqual({ refreshed: 2, left: 0, bound: T0 - AGE / 2 });
  });

  it('leaves the first letters of a store younger than the refresh age alone (its creation bounds them)', async () => {
    const world = setup({ depth: 2, letters: [T0 - DAY, T0 - DAY], createdAt: T0 - 2 * DAY });
    expect(await sweep(world)).toEqual({
      refreshed: 0,
      calls: 0,
      bound: T0 - 2 * DAY,
    });
  });

  it('raises the bound of an empty DLQ and refreshes nothing', async () => {
    const world = setup({ depth: 0, letters: [] });
    await world.ledger.markOldest('s1', 0);
    expect(await sweep(world)).toEqual({
      refreshed: 0,
      calls: 0,
      bound: T0,
    });
  });

  it('logs a failed refresh and goes on with the next store, keeping the bound the audit set', async () => {
    const { deps, ledger, records } = setup({
      depth: 1,
      letters: [T0 - 8 * DAY],
      fail: true,
      stores: ['s1', 's2'],
    });
    const report = await reconcile(deps);
    expect({
      swept: report.swept,
      failures: records.filter((r) => r.message === 'reconciler could not refresh a dead-letter queue')
        .length,
      bounds: ['s1', 's2'].map((id) => ledger.tallies.get(id)?.oldestAt),
    }).toEqual({ swept: 2, failures: 2, bounds: [storeRecord().createdAt, storeRecord().createdAt] });
    // Each failure names its store and the cause, for the operator reading the reconciler's logs.
    expect(
      records
        .filter((r) => r.message === 'reconciler could not refresh a dead-letter queue')
        .map((r) => [r.fields?.['storeId'], r.fields?.['error']]),
    ).toEqual([
      ['s1', 'Error: SendMessageBatch denied'],
      ['s2', 'Error: SendMessageBatch denied'],
    ]);
  });

  it('does nothing to DLQs without the retention settings (the keep is off)', async () => {
    const { deps, dlq } = setup({ depth: 2, letters: [T0 - 8 * DAY] });
    const { retention: _off, ...settings } = deps.settings;
    await reconcile({ ...deps, settings });
    expect(dlq.calls).toEqual([]);
  });
});
